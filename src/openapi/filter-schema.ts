// The `filter` of a list as JSON Schema: per field the operators its kind takes and the value
// each operator takes, from the parser's own table (query/where.ts, handed in as the
// ListLanguage), so the document cannot offer an operator the server refuses. Read as a `deepObject`: `filter[price][gte]=10`,
// `filter[status][in]=active,draft`, `filter[author.name]=Ada`, `filter[or][0][status]=draft`.

import type { JsonSchema } from "../core/endpoint.ts";
import type { FilterFieldShape, FilterOperator, ListLanguage } from "./list-language.ts";

/** What each operator takes: a value of the field, a list of them, non-empty text, or true/false. */
const OPERAND = {
  eq: "value",
  ne: "value",
  gt: "value",
  gte: "value",
  lt: "value",
  lte: "value",
  in: "list",
  nin: "list",
  contains: "text",
  startsWith: "text",
  endsWith: "text",
  isNull: "flag",
  has: "value",
} as const satisfies Record<FilterOperator, "value" | "list" | "text" | "flag">;

/** A value of the field as a filter compares it (dates as ISO 8601). */
function valueSchemaOf(field: FilterFieldShape, language: ListLanguage): JsonSchema {
  switch (field.kind) {
    case "string":
      return { type: "string", maxLength: language.maxFilterText };
    case "enum":
      return { type: "string", enum: [...(field.enumValues ?? [])] };
    case "integer":
      return { type: "integer" };
    case "number":
      return { type: "number" };
    case "boolean":
      return { type: "boolean" };
    case "date":
      return {
        type: "string",
        format: "date-time",
        description: "ISO 8601; a date alone, or a date-time without an offset, is read as UTC.",
      };
    case "list":
      // A list of ids (referencesMany): `has` takes one id.
      return { type: "string", minLength: 1, maxLength: 255 };
  }
}

function operandOf(operator: FilterOperator, value: JsonSchema, language: ListLanguage): JsonSchema {
  switch (OPERAND[operator]) {
    case "value":
      return value;
    case "list":
      // In a query string: comma-separated (`in=a,b`) or numbered (`in[0]=a&in[1]=b`).
      return { type: "array", items: value, minItems: 1, maxItems: language.maxFilterValues };
    case "text":
      return { type: "string", minLength: 1, maxLength: language.maxFilterText };
    case "flag":
      return { type: "boolean" };
  }
}

/** One field's filter: a bare value (equality), or an object of operators. */
export function fieldFilterSchema(field: FilterFieldShape, language: ListLanguage): JsonSchema {
  const value = valueSchemaOf(field, language);
  const operators: Record<string, JsonSchema> = {};
  for (const operator of language.operators[field.kind])
    operators[operator] = operandOf(operator, value, language);
  return {
    anyOf: [value, { type: "object", properties: operators, additionalProperties: false, minProperties: 1 }],
  };
}

/**
 * The filter components of a resource: `ProductFilter`, its filterable fields and relation paths
 * (`project.orgId`) with `and`, `or` and `not` over `ProductFilterGroup`s, the same fields whose own
 * groups are any object (the server checks those, up to 8 deep). Not one recursive schema: Scalar
 * shows no parameter of an operation whose deepObject refers to itself.
 */
export function filterSchemas(
  fields: ReadonlyMap<string, FilterFieldShape>,
  name: string,
  language: ListLanguage,
): Record<string, JsonSchema> {
  const properties: Record<string, JsonSchema> = {};
  for (const [path, field] of fields) properties[path] = fieldFilterSchema(field, language);
  const group = { $ref: `#/components/schemas/${name}Group` };
  return {
    [name]: filterObject(properties, group, DESCRIPTION),
    [`${name}Group`]: filterObject(properties, { type: "object" }, "A filter inside and, or or not."),
  };
}

const DESCRIPTION =
  "filter[field]=value (equality) or filter[field][operator]=value; filter[relation.field] on the record a reference points at; filter[or][0][field]=…, filter[not][field]=….";

function filterObject(
  fields: Record<string, JsonSchema>,
  group: JsonSchema,
  description: string,
): JsonSchema {
  const properties: Record<string, JsonSchema> = { ...fields };
  properties.and = { type: "array", items: group, description: "Every filter matches." };
  properties.or = { type: "array", items: group, description: "At least one filter matches." };
  properties.not = { ...group, description: "The filter does not match." };
  return { type: "object", description, properties, additionalProperties: false };
}
