// Which kinds of field each aggregate function takes (sums of numbers, extremes of what has an
// order), and the limits of the aggregate query: one table for the parser (resource/) and the
// OpenAPI document, which sits below resource/.

import type { Field } from "./field-model.ts";

/** The functions besides `count`, as `aggregate[<function>]=field[,field]` names them. */
export const AGGREGATE_FUNCTIONS = ["countDistinct", "sum", "avg", "min", "max"] as const;
export type AggregateFunction = (typeof AGGREGATE_FUNCTIONS)[number];

/** Most groupBy fields, default and largest `limit` on groups. */
export const MAX_GROUP_FIELDS = 3;
export const DEFAULT_GROUP_LIMIT = 100;
export const MAX_GROUP_LIMIT = 1000;

const NUMERIC = new Set<Field["kind"]>(["integer", "number"]);
const ORDERED = new Set<Field["kind"]>(["integer", "number", "date", "string", "enum"]);

const TAKES: Record<AggregateFunction, (kind: Field["kind"]) => boolean> = {
  countDistinct: (kind) => kind !== "json",
  sum: (kind) => NUMERIC.has(kind),
  avg: (kind) => NUMERIC.has(kind),
  min: (kind) => ORDERED.has(kind),
  max: (kind) => ORDERED.has(kind),
};

/** Whether `fn` may name a field of this kind. */
export function aggregateTakes(fn: AggregateFunction, kind: Field["kind"]): boolean {
  return TAKES[fn](kind);
}
