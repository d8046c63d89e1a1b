// Parses and checks the query of `GET /<plural>/aggregate`: aggregate[count]=*,
// aggregate[sum]=price,quantity, groupBy=status, sortBy=sum.price, limit, and the list's own
// filter[…] and search (read by the list parser). Which fields each function and groupBy may name
// comes from the resource's `aggregates` option, less the fields hidden from the caller. A field
// she may not see is refused with the very words of one the option does not list, and no field
// name the caller sent is ever echoed back.

import { APIError } from "../core/errors.ts";
import { type ListQuery, type ListRules, parseListQuery, unknownParameter } from "../query/list-query.ts";
import {
  AGGREGATE_FUNCTIONS,
  type AggregateFunction,
  aggregateTakes,
  DEFAULT_GROUP_LIMIT,
  MAX_GROUP_FIELDS,
  MAX_GROUP_LIMIT,
} from "../schema/aggregate-kinds.ts";
import { hiddenSomewhere } from "./field-access.ts";
import type { AnyResource } from "./types.ts";

export interface AggregateQuery {
  count: boolean;
  /** Each function and field asked, in the order asked. */
  values: readonly { fn: AggregateFunction; field: string }[];
  groupBy: readonly string[];
  /** `count`, a groupBy field, or `<function>.<field>`. */
  sortBy: string | undefined;
  sortOrder: "asc" | "desc";
  limit: number;
  /** The filter and search, as the list parser read them (`beforeList` hooks see it). */
  list: ListQuery;
}

/** What one caller may name: per function, and for groupBy (her hidden fields left out). */
export interface AggregateRules {
  functions: Readonly<Record<AggregateFunction, ReadonlySet<string>>>;
  groupBy: ReadonlySet<string>;
  /** The list's rules for the same caller: the filter and search. */
  list: ListRules;
}

/** The rules for a caller who may not read `hidden` (nor the fields she reads on some rows only). */
export function aggregateRules(
  resource: AnyResource,
  hidden: ReadonlySet<string>,
  list: ListRules,
): AggregateRules {
  const unseen = hiddenSomewhere(hidden);
  const option = resource.aggregates;
  const kinds = new Map(resource.fields.map((f) => [f.name, f.kind]));
  const open = (names: readonly string[] | undefined) => (names ?? []).filter((n) => !unseen.has(n));
  const fields = open(option?.fields);
  const functions = {} as Record<AggregateFunction, ReadonlySet<string>>;
  for (const fn of AGGREGATE_FUNCTIONS)
    functions[fn] = new Set(fields.filter((f) => aggregateTakes(fn, kinds.get(f)!)));
  return { functions, groupBy: new Set(open(option?.groupBy)), list };
}

const PARAMETER = /^aggregate\[([A-Za-z]{1,20})\]$/;
const OWN = ["groupBy", "sortBy", "sortOrder", "limit"];
const KNOWN = ["aggregate[count]", ...AGGREGATE_FUNCTIONS.map((fn) => `aggregate[${fn}]`), ...OWN, "search"];

export function parseAggregateQuery(
  query: Readonly<Record<string, string | undefined>>,
  rules: AggregateRules,
  /** The filter server code gave as an object (`ctx.where`). */
  where?: unknown,
): AggregateQuery {
  const listed: Record<string, string | undefined> = Object.create(null);
  let count = false;
  const values: { fn: AggregateFunction; field: string }[] = [];
  for (const name of Object.keys(query)) {
    const value = query[name];
    const fn = PARAMETER.exec(name)?.[1];
    if (fn === "count") count = countAsked(value);
    else if (fn !== undefined && isFunction(fn)) {
      if (value === "") throw badQuery(`${name} names no field.`, name);
      for (const field of fieldList(value, name, rules.functions[fn])) values.push({ fn, field });
    } else if (name === "search" || name.startsWith("filter[")) listed[name] = value;
    else if (!OWN.includes(name)) throw unknownParameter(name, KNOWN);
  }
  if (!count && values.length === 0)
    throw badQuery(
      "Ask for at least one aggregate: aggregate[count]=*, or aggregate[sum]=field (countDistinct, sum, avg, min, max).",
    );
  const groupBy = fieldList(query.groupBy, "groupBy", rules.groupBy);
  if (groupBy.length > MAX_GROUP_FIELDS)
    throw badQuery(`groupBy takes at most ${MAX_GROUP_FIELDS} fields.`, "groupBy");
  const list = parseListQuery(listed, rules.list, [], where);
  return {
    count,
    values,
    groupBy,
    sortBy: parseSortBy(query.sortBy, count, values, groupBy),
    sortOrder: parseSortOrder(query.sortOrder),
    limit: parseLimit(query.limit),
    list,
  };
}

function isFunction(name: string): name is AggregateFunction {
  return (AGGREGATE_FUNCTIONS as readonly string[]).includes(name);
}

function countAsked(value: string | undefined): boolean {
  if (value === undefined || value === "") return false;
  if (value !== "*") throw badQuery('aggregate[count] takes "*" (it counts rows).', "aggregate[count]");
  return true;
}

/**
 * `a,b` checked against the fields allowed: empty, repeated or not allowed is a 400 that says
 * which fields are, the same whether the field is unknown, not listed or hidden from the caller.
 */
function fieldList(value: string | undefined, parameter: string, allowed: ReadonlySet<string>): string[] {
  if (value === undefined || value === "") return [];
  const names = value.split(",");
  const takes =
    allowed.size === 0
      ? `${parameter} takes no field here: none of this resource's fields is open to it for you.`
      : `${parameter} takes only these fields: ${[...allowed].join(", ")}.`;
  if (names.some((n) => !allowed.has(n))) throw badQuery(takes, parameter);
  if (new Set(names).size !== names.length) throw badQuery(`${parameter} names a field twice.`, parameter);
  return names;
}

function parseSortBy(
  value: string | undefined,
  count: boolean,
  values: AggregateQuery["values"],
  groupBy: readonly string[],
): string | undefined {
  if (value === undefined || value === "") return undefined;
  const named =
    (value === "count" && count) ||
    groupBy.includes(value) ||
    values.some(({ fn, field }) => `${fn}.${field}` === value);
  if (!named)
    throw badQuery(
      "sortBy must be count, a groupBy field, or an aggregate the request asks for, written like sum.price.",
      "sortBy",
    );
  return value;
}

function parseSortOrder(value: string | undefined): "asc" | "desc" {
  if (value === undefined || value === "") return "asc";
  const order = value.toLowerCase();
  if (order !== "asc" && order !== "desc") throw badQuery('sortOrder must be "asc" or "desc".', "sortOrder");
  return order;
}

function parseLimit(value: string | undefined): number {
  if (value === undefined || value === "") return DEFAULT_GROUP_LIMIT;
  if (!/^\d{1,4}$/.test(value) || Number(value) < 1 || Number(value) > MAX_GROUP_LIMIT)
    throw badQuery(`limit must be a whole number from 1 to ${MAX_GROUP_LIMIT} (groups).`, "limit");
  return Number(value);
}

function badQuery(message: string, parameter?: string): APIError {
  return new APIError(
    "BAD_REQUEST",
    message,
    parameter ? { details: [{ path: parameter, message: "Not accepted here." }] } : {},
  );
}
