// `GET /<plural>/aggregate` as an OpenAPI operation: the `aggregate[…]` functions with the fields
// each takes (from the resource's `aggregates` option and the table of aggregate-kinds.ts), groupBy,
// sortBy, limit, the list's filter and search, and the answer's groups and values.

import type { JsonSchema } from "../core/endpoint.ts";
import type { AnyResource } from "../resource/types.ts";
import {
  AGGREGATE_FUNCTIONS,
  type AggregateFunction,
  aggregateTakes,
  DEFAULT_GROUP_LIMIT,
  MAX_GROUP_FIELDS,
  MAX_GROUP_LIMIT,
} from "../schema/aggregate-kinds.ts";
import type { Field } from "../schema/field-model.ts";
import type { ListLanguage, ListShape } from "./list-language.ts";
import { schemaName } from "./resource-schemas.ts";

const fieldList = (names: readonly string[], max?: number): JsonSchema => ({
  type: "array",
  items: { type: "string", enum: [...names] },
  uniqueItems: true,
  minItems: 1,
  ...(max === undefined ? {} : { maxItems: max }),
});

/** A group's value, or a min or max: as the field reads in a record, or null. */
function valueSchema(field: Field): JsonSchema {
  const plain: JsonSchema =
    field.kind === "enum"
      ? { type: "string", enum: [...(field.enumValues ?? [])] }
      : field.kind === "date"
        ? { type: "string", format: "date-time" }
        : { type: field.kind };
  return { anyOf: [plain, { type: "null" }] };
}

/** Per function, the fields it takes on this resource. */
function takenBy(resource: AnyResource): [AggregateFunction, Field[]][] {
  const named = new Set(resource.aggregates?.fields ?? []);
  return AGGREGATE_FUNCTIONS.map((fn) => [
    fn,
    resource.fields.filter((f) => named.has(f.name) && aggregateTakes(fn, f.kind)),
  ]);
}

function parameters(resource: AnyResource, rules: ListShape, language: ListLanguage): JsonSchema[] {
  const functions = takenBy(resource).filter(([, fields]) => fields.length > 0);
  const groupBy = resource.aggregates?.groupBy ?? [];
  const aggregate: Record<string, JsonSchema> = { count: { type: "string", const: "*" } };
  for (const [fn, fields] of functions) aggregate[fn] = fieldList(fields.map((f) => f.name));
  const sortable = [
    "count",
    ...groupBy,
    ...functions.flatMap(([fn, fields]) => fields.map((f) => `${fn}.${f.name}`)),
  ];
  const query = (name: string, schema: JsonSchema, description: string) => ({
    name,
    in: "query",
    schema,
    description,
  });
  const list: JsonSchema[] = [
    {
      name: "aggregate",
      in: "query",
      style: "deepObject",
      explode: true,
      schema: { type: "object", properties: aggregate, additionalProperties: false },
      description:
        "aggregate[count]=* counts rows; aggregate[countDistinct|sum|avg|min|max]=field[,field] (sum and avg on numbers). At least one is required.",
    },
    ...(groupBy.length > 0
      ? [
          {
            name: "groupBy",
            in: "query",
            style: "form",
            explode: false,
            schema: fieldList(groupBy, MAX_GROUP_FIELDS),
            description: `One item per group of these fields, comma-separated (at most ${MAX_GROUP_FIELDS}).`,
          },
        ]
      : []),
    query(
      "sortBy",
      { type: "string", enum: sortable },
      "Order of the groups: count, a groupBy field, or an aggregate asked for (sum.price). Without it, by the groups.",
    ),
    query(
      "sortOrder",
      { type: "string", enum: ["asc", "desc"], default: "asc" },
      "Sort direction (read case-insensitively).",
    ),
    query(
      "limit",
      { type: "integer", minimum: 1, maximum: MAX_GROUP_LIMIT, default: DEFAULT_GROUP_LIMIT },
      `Most groups answered; more than ${MAX_GROUP_LIMIT} is a 400.`,
    ),
    {
      name: "filter",
      in: "query",
      style: "deepObject",
      explode: true,
      schema: { $ref: `#/components/schemas/${schemaName(resource.name)}Filter` },
      description:
        "Only the rows matching, as on the list: filter[field]=value, filter[field][operator]=value.",
    },
  ];
  if (rules.searchable.length > 0)
    list.push(
      query(
        "search",
        { type: "string", maxLength: language.maxSearchLength },
        `Case-insensitive match in ${rules.searchable.join(", ")}.`,
      ),
    );
  return list;
}

/** One item: the group's values, `count`, and each function's values by field. */
function itemSchema(resource: AnyResource): JsonSchema {
  const byName = new Map(resource.fields.map((f) => [f.name, f]));
  const group: Record<string, JsonSchema> = {};
  for (const name of resource.aggregates?.groupBy ?? []) group[name] = valueSchema(byName.get(name)!);
  const properties: Record<string, JsonSchema> = {
    group: { type: "object", properties: group, additionalProperties: false },
    count: { type: "integer", minimum: 0 },
  };
  for (const [fn, fields] of takenBy(resource)) {
    if (fields.length === 0) continue;
    const value = (f: Field): JsonSchema =>
      fn === "countDistinct"
        ? { type: "integer", minimum: 0 }
        : fn === "sum" || fn === "avg"
          ? { type: ["number", "null"] }
          : valueSchema(f);
    properties[fn] = {
      type: "object",
      properties: Object.fromEntries(fields.map((f) => [f.name, value(f)])),
      additionalProperties: false,
    };
  }
  return { type: "object", properties, required: ["group"], additionalProperties: false };
}

/** The operation's summary, parameters and answer; resource-operations.ts adds the errors. */
export function aggregateParts(
  resource: AnyResource,
  rules: ListShape,
  language: ListLanguage,
): { summary: string; parameters: JsonSchema[]; answer: JsonSchema } {
  return {
    summary: `Count, sum, average or find extremes of ${resource.plural}, by group`,
    parameters: parameters(resource, rules, language),
    answer: {
      description: `One item per group of ${resource.plural} (one with an empty group without groupBy)`,
      content: {
        "application/json": {
          schema: {
            type: "object",
            properties: { items: { type: "array", items: itemSchema(resource) } },
            required: ["items"],
            additionalProperties: false,
          },
        },
      },
    },
  };
}
