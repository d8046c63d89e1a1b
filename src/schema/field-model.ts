// Reads a Zod object schema once, at startup, into the field model that columns, record
// conversion and input validation are derived from. Nothing here runs per request.

import { z } from "zod";
import { ConfigError } from "../core/errors.ts";
import { type FileRefSpec, type ManySpec, marksOf, type ReferenceSpec } from "./field-marks.ts";

/** How a field is stored and read back. */
export type FieldKind = "string" | "integer" | "number" | "boolean" | "enum" | "date" | "json";

export interface Field {
  name: string;
  kind: FieldKind;
  /** The output may lack the value (`.optional()` without a default). */
  optional: boolean;
  /** The value may be `null`. */
  nullable: boolean;
  /** A default fills the value when input omits it. */
  hasDefault: boolean;
  /** Allowed values of an enum field. */
  enumValues?: readonly string[];
  /** The field's schema as declared. */
  schema: z.ZodType;
  /** The record of another resource it holds the id of (`references()`). */
  reference?: ReferenceSpec;
  /** The uploaded file it holds the id of (`fileRef()`). */
  file?: FileRefSpec;
  /** The records of another resource it lists the ids of (`referencesMany()`): no column, a junction table. */
  many?: ManySpec;
  /**
   * Its value's bounds and format as JSON Schema keywords (`minLength`, `maximum`, `format`,
   * `pattern`…), for the OpenAPI document and the forms built from it. Empty when it has none.
   */
  constraints?: Readonly<Record<string, unknown>>;
}

type Def = {
  type: string;
  innerType?: z.ZodType;
  in?: z.ZodType;
  entries?: Record<string, string | number>;
  values?: unknown[];
};

const def = (schema: z.ZodType): Def => (schema as unknown as { _zod: { def: Def } })._zod.def;

export function readFields(schema: z.ZodObject): Field[] {
  // Structural check, not instanceof: the app may hold its own copy of zod.
  const type = (schema as { _zod?: { def?: { type?: string } } } | undefined)?._zod?.def?.type;
  if (type !== "object")
    throw new ConfigError("A resource schema must be a Zod 4 object schema (z.object or withId).");
  return Object.entries(schema.shape).map(([name, fieldSchema]) => readField(name, fieldSchema as z.ZodType));
}

function readField(name: string, schema: z.ZodType): Field {
  const field: Field = {
    name,
    kind: "json",
    optional: false,
    nullable: false,
    hasDefault: false,
    schema,
    constraints: NO_CONSTRAINTS,
  };
  let current = schema;
  for (;;) {
    const marks = marksOf(current);
    if (marks?.reference) field.reference ??= marks.reference;
    if (marks?.file) field.file ??= marks.file;
    if (marks?.many) field.many ??= marks.many;
    const d = def(current);
    switch (d.type) {
      case "optional":
        if (!field.hasDefault) field.optional = true;
        current = d.innerType!;
        continue;
      case "nullable":
        field.nullable = true;
        current = d.innerType!;
        continue;
      case "default":
      case "prefault":
        field.hasDefault = true;
        field.optional = false;
        current = d.innerType!;
        continue;
      case "readonly":
      case "catch":
      case "nonoptional":
        current = d.innerType!;
        continue;
      case "pipe":
        current = d.in!;
        continue;
    }
    field.kind = kindOf(current, d);
    if (field.kind === "enum") field.enumValues = enumValuesOf(d);
    if (field.kind === "string" || field.kind === "integer" || field.kind === "number")
      field.constraints = constraintsOf(current);
    return field;
  }
}

const NO_CONSTRAINTS: Readonly<Record<string, unknown>> = Object.freeze({});
const CONSTRAINT_KEYWORDS = [
  "minLength",
  "maxLength",
  "minimum",
  "maximum",
  "exclusiveMinimum",
  "exclusiveMaximum",
  "multipleOf",
  "format",
  "pattern",
] as const;

/** The formats JSON Schema 2020-12 defines. */
const STANDARD_FORMATS: ReadonlySet<string> = new Set([
  "date-time",
  "date",
  "time",
  "duration",
  "email",
  "idn-email",
  "hostname",
  "idn-hostname",
  "ipv4",
  "ipv6",
  "uri",
  "uri-reference",
  "iri",
  "iri-reference",
  "uuid",
  "uri-template",
  "json-pointer",
  "relative-json-pointer",
  "regex",
]);

/** A string's or number's checks as JSON Schema keywords, by Zod's own conversion. */
function constraintsOf(schema: z.ZodType): Readonly<Record<string, unknown>> {
  let converted: Record<string, unknown>;
  try {
    converted = z.toJSONSchema(schema, { unrepresentable: "any" }) as Record<string, unknown>;
  } catch {
    // A schema from another copy of zod this one cannot read: no bounds to tell, not an error.
    return NO_CONSTRAINTS;
  }
  const found: Record<string, unknown> = {};
  for (const keyword of CONSTRAINT_KEYWORDS) {
    const value = converted[keyword];
    // Zod names some checks as formats JSON Schema does not know (`includes`, `starts_with`): left out.
    if (keyword === "format" && !STANDARD_FORMATS.has(String(value))) continue;
    // Zod's integer bounds (±2^53 - 1) say nothing a reader needs.
    if (value === undefined || (typeof value === "number" && Math.abs(value) >= Number.MAX_SAFE_INTEGER))
      continue;
    found[keyword] = value;
  }
  return Object.keys(found).length === 0 ? NO_CONSTRAINTS : found;
}

function kindOf(schema: z.ZodType, d: Def): FieldKind {
  switch (d.type) {
    case "string":
      return "string";
    case "number":
      return (schema as unknown as { isInt?: boolean }).isInt ? "integer" : "number";
    case "boolean":
      return "boolean";
    case "date":
      return "date";
    case "enum":
      return enumValuesOf(d).every((v) => typeof v === "string") ? "enum" : "json";
    case "literal":
      return d.values?.every((v) => typeof v === "string") ? "enum" : "json";
    default:
      return "json";
  }
}

function enumValuesOf(d: Def): string[] {
  if (d.entries) return Object.values(d.entries).map(String);
  return (d.values ?? []).map(String);
}

/** The field's schema without its default, so a partial update never fills absent fields. */
export function withoutDefault(schema: z.ZodType): z.ZodType {
  const d = def(schema);
  switch (d.type) {
    case "default":
    case "prefault":
      return withoutDefault(d.innerType!);
    case "optional":
      return withoutDefault(d.innerType!).optional();
    case "nullable":
      return withoutDefault(d.innerType!).nullable();
    default:
      return schema;
  }
}
