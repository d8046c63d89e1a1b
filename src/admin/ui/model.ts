// The resources as the admin shows them, read from the app's OpenAPI document: each one's fields
// with their types, bounds and whether a create or an update may set them, the fields a list may
// sort by, and whether it searches. Nothing here decides access: the permissions endpoint does.

type Schema = Record<string, any>;

export type FieldType = "string" | "number" | "integer" | "boolean" | "date" | "enum" | "json";

export interface FieldModel {
  name: string;
  type: FieldType;
  enumValues?: string[];
  /** A create must give it. */
  required: boolean;
  nullable: boolean;
  /** JSON Schema bounds: minLength, maxLength, minimum, maximum, exclusive ones, format, pattern. */
  constraints: Record<string, unknown>;
  onCreate: boolean;
  onUpdate: boolean;
  /** The resource a reference points at. */
  references?: string;
  /** A list of ids of `references` (`referencesMany`), in order. */
  list?: boolean;
  /** An uploaded file's id (`fileRef`). */
  file?: boolean;
}

/** Records of another resource that point at this one (`reviews` of a product). */
export interface ReverseRelation {
  name: string;
  resource: string;
  field: string;
  /** The field is a list of ids (`referencesMany`): its records are those whose list holds this one. */
  list?: boolean;
}

export interface ResourceModel {
  name: string;
  plural: string;
  fields: FieldModel[];
  sortable: string[];
  searchable: boolean;
  /** Its realtime stream's path, when the app streams changes. */
  events?: string;
  reverse: ReverseRelation[];
}

export interface ApiModel {
  resources: Map<string, ResourceModel>;
  /** The API key header, when the app takes API keys. */
  apiKeyHeader?: string;
}

const capitalized = (name: string) => name.charAt(0).toUpperCase() + name.slice(1);

/** The value's own schema: `anyOf: [x, null]` read as x, nullable. */
function unwrap(schema: Schema): { schema: Schema; nullable: boolean } {
  const options = schema.anyOf as Schema[] | undefined;
  if (!options) return { schema, nullable: false };
  const value = options.filter((o) => o.type !== "null");
  return { schema: value.length === 1 ? value[0]! : {}, nullable: value.length < options.length };
}

function typeOf(schema: Schema): FieldType {
  if (Array.isArray(schema.enum)) return "enum";
  if (schema.type === "string") return schema.format === "date-time" ? "date" : "string";
  if (schema.type === "number" || schema.type === "integer" || schema.type === "boolean") return schema.type;
  return "json";
}

export function readModel(document: Schema, names: { name: string; plural: string }[]): ApiModel {
  const schemas = (document.components?.schemas ?? {}) as Record<string, Schema>;
  const resources = new Map<string, ResourceModel>();
  for (const { name, plural } of names) {
    const record = schemas[capitalized(name)];
    if (!record) continue;
    const create = schemas[`${capitalized(name)}Create`] ?? { properties: {} };
    const update = schemas[`${capitalized(name)}Update`] ?? { properties: {} };
    const listParameters = (document.paths?.[`/${plural}`]?.get?.parameters ?? []) as Schema[];
    const sortable = (listParameters.find((p) => p.name === "sortBy")?.schema?.enum ?? []) as string[];
    const fields: FieldModel[] = [];
    const reverse: ReverseRelation[] = [];
    for (const [field, raw] of Object.entries(record.properties ?? {}) as [string, Schema][]) {
      const pointing = raw["x-crudkit-reverse"] as
        | { resource: string; field: string; list?: boolean }
        | undefined;
      if (pointing) reverse.push({ name: field, ...pointing });
      // Relations `expand` adds are not fields: a record (a $ref) or a list of them.
      const input = create.properties?.[field] ?? update.properties?.[field];
      if (!input && (JSON.stringify(raw).includes("$ref") || raw.type === "array")) continue;
      const { schema, nullable } = unwrap(input ?? raw);
      // What is left besides the type is the server's bounds (see FieldModel.constraints).
      const {
        type: _type,
        enum: _values,
        "x-crudkit-references": references,
        "x-crudkit-file": file,
        ...constraints
      } = schema;
      fields.push({
        name: field,
        type: typeOf(schema),
        enumValues: schema.enum,
        required: (create.required ?? []).includes(field),
        nullable,
        constraints,
        onCreate: create.properties?.[field] !== undefined,
        onUpdate: update.properties?.[field] !== undefined,
        references,
        list: schema.type === "array" && typeof references === "string",
        file: file === true,
      });
    }
    resources.set(name, {
      name,
      plural,
      fields,
      sortable,
      searchable: listParameters.some((p) => p.name === "search"),
      events: document.paths?.[`/${plural}/events`] ? `${basePathOf(document)}/${plural}/events` : undefined,
      reverse,
    });
  }
  const schemes = Object.values(document.components?.securitySchemes ?? {}) as Schema[];
  const key = schemes.find((s) => s.type === "apiKey" && s.in === "header");
  return { resources, apiKeyHeader: key?.name };
}

/** The API's basePath, `/api`: the path of the document's server (its paths start after it). */
function basePathOf(document: Schema): string {
  const url = (document.servers as { url?: string }[] | undefined)?.[0]?.url ?? "/";
  return new URL(url, "http://localhost").pathname.replace(/\/$/, "");
}

/** The list's operators for a field's type, as the API takes them. */
export function operatorsFor(type: FieldType): string[] {
  switch (type) {
    case "string":
      return ["eq", "ne", "contains", "startsWith", "endsWith", "isNull"];
    case "enum":
      return ["eq", "ne", "isNull"];
    case "boolean":
      return ["eq", "isNull"];
    case "json":
      return ["isNull"];
    default:
      return ["eq", "ne", "gt", "gte", "lt", "lte", "isNull"];
  }
}
