// Reads a Zod object schema once, at startup, into the field model that columns, record
// conversion and input validation are derived from. Nothing here runs per request.

import type { z } from "zod";
import { ConfigError } from "../core/errors.ts";
import { type FileRefSpec, marksOf, type ReferenceSpec } from "./field-marks.ts";

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
  const field: Field = { name, kind: "json", optional: false, nullable: false, hasDefault: false, schema };
  let current = schema;
  for (;;) {
    const marks = marksOf(current);
    if (marks?.reference) field.reference ??= marks.reference;
    if (marks?.file) field.file ??= marks.file;
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
    return field;
  }
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
