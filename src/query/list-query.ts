// Parses and checks list query parameters: page, limit, search, sortBy, sortOrder.

import { APIError } from "../core/errors.ts";
import { isFilterParameter, readFilter } from "./bracket-query.ts";
import { type Condition, type FilterField, parseWhere } from "./where.ts";

/**
 * How a list counts: `exact` (count(*)), `estimated` (the database's statistics when nothing
 * narrows the list; an exact count up to 10,000 otherwise, then the planner's estimate) or `none`.
 */
export type CountMode = "exact" | "estimated" | "none";

export interface ListQuery {
  page: number;
  limit: number;
  search: string | undefined;
  sortBy: string | undefined;
  sortOrder: "asc" | "desc";
  /** The caller's `filter[…]` parameters, checked; undefined when there are none. */
  where: Condition | undefined;
  count: CountMode;
  /** A cursor from a previous page's `nextCursor` or `prevCursor` (decoded by the store). */
  cursor: string | undefined;
}

export interface Pagination {
  page: number;
  limit: number;
  /** The page after this one, for `?cursor=` (keyset paging); null on the last page. */
  nextCursor?: string | null;
  /** The page before this one, for `?cursor=`; null on the first page. */
  prevCursor?: string | null;
  /** null with `count=none`. */
  total: number | null;
  /** null with `count=none`. */
  totalPages: number | null;
  hasNext: boolean;
  hasPrev: boolean;
}

export interface ListResult<Rec> {
  items: Rec[];
  pagination: Pagination;
}

/** Page sizes: the app's `defaultLimit` and `maxLimit`, for resources and plugin lists alike. */
export interface PageLimits {
  defaultLimit: number;
  maxLimit: number;
}

export interface ListRules extends PageLimits {
  resource: string;
  /** `cursor` is taken (resource lists; plugin lists page by number only). */
  cursors?: boolean;
  /** The count mode when the query names none. @default "exact" */
  count?: CountMode;
  sortable: ReadonlySet<string>;
  /** The fields search matches; none means search is not available. */
  searchable: readonly string[];
  /** Fields `filter[…]` may name. */
  filterable: ReadonlyMap<string, FilterField>;
}

const KNOWN_PARAMETERS = new Set(["page", "limit", "search", "sortBy", "sortOrder", "count"]);
/** The count modes, as `count=` takes them. */
export const COUNT_MODES: ReadonlySet<string> = new Set<CountMode>(["exact", "estimated", "none"]);

/** The largest `page`, and the longest `search`, a list takes. */
export const MAX_PAGE = 1_000_000_000;
export const MAX_SEARCH_LENGTH = 200;

/**
 * The list query of a resource or a plugin list. `extra` names further parameters the caller
 * reads itself (a plugin's own filters); any other unknown parameter is a 400.
 */
export function parseListQuery(
  query: Readonly<Record<string, string | undefined>>,
  rules: ListRules,
  extra: readonly string[] = [],
  /** The filter server code gave as an object (`ctx.where`). */
  where?: unknown,
): ListQuery {
  for (const name of Object.keys(query)) {
    if (
      !KNOWN_PARAMETERS.has(name) &&
      !isFilterParameter(name) &&
      !extra.includes(name) &&
      !(name === "cursor" && rules.cursors)
    )
      throw unknownParameter(name, [...KNOWN_PARAMETERS, ...(rules.cursors ? ["cursor"] : []), ...extra]);
  }
  const { page, limit } = parsePage(query, rules);
  return {
    page,
    limit,
    search: parseSearch(query.search, rules),
    sortBy: parseSortBy(query.sortBy, rules),
    sortOrder: parseSortOrder(query.sortOrder),
    where: parseListFilter(query, rules, where),
    count: parseCount(query.count, rules),
    cursor: parseCursor(query),
  };
}

function parseCursor(query: Readonly<Record<string, string | undefined>>): string | undefined {
  const cursor = query.cursor;
  if (cursor === undefined || cursor === "") return undefined;
  if (query.page !== undefined && query.page !== "")
    throw badQuery("page and cursor cannot be combined: a cursor names its page.");
  return cursor;
}

function parseCount(value: string | undefined, rules: ListRules): CountMode {
  if (value === undefined || value === "") return rules.count ?? "exact";
  if (!COUNT_MODES.has(value))
    throw badQuery(`count must be exact, estimated or none${echo(value, ", got ")}.`);
  return value as CountMode;
}

/**
 * The `filter[…]` parameters of a query, checked against the fields the caller may filter on; or
 * the filter server code gave as an object, read by the same parser with its values typed.
 */
export function parseListFilter(
  query: Readonly<Record<string, string | undefined>>,
  rules: Pick<ListRules, "filterable">,
  where?: unknown,
): Condition | undefined {
  let filter: object | undefined;
  try {
    filter = readFilter(query);
  } catch (error) {
    throw badQuery(`The filter is malformed: ${(error as Error).message}.`);
  }
  if (where === undefined) return parseWhere(filter, rules.filterable, { fromText: true });
  if (filter !== undefined) throw badQuery("Give the filter once: as `where`, or as filter[…] parameters.");
  return parseWhere(where, rules.filterable);
}

/** `page` and `limit`: positive integers, the limit clamped to `maxLimit`. */
export function parsePage(
  query: Readonly<Record<string, string | undefined>>,
  limits: PageLimits,
): { page: number; limit: number } {
  const page = positiveInteger(query.page, "page") ?? 1;
  if (page > MAX_PAGE) throw badQuery(`page must be at most ${MAX_PAGE}.`);
  const limit = Math.min(positiveInteger(query.limit, "limit") ?? limits.defaultLimit, limits.maxLimit);
  return { page, limit };
}

/** What a resource list knows of the pages beside it (see the store's keyset paging). */
export interface PageEdges {
  /** Known without a total: past a cursor, or with `count=none`. */
  hasNext: boolean | undefined;
  hasPrev: boolean;
  nextCursor: string | null;
  prevCursor: string | null;
}

/**
 * `{ items, pagination }` for one page; plugin lists (uploads, audit logs) use it too. Without a
 * total (`count=none`), `more` says whether a row followed the page. Resource lists pass their
 * `edges`: the cursors, and what they know of the pages beside.
 */
export function paginate<Rec>(
  items: Rec[],
  total: number | null,
  query: Pick<ListQuery, "page" | "limit">,
  more = false,
  edges?: PageEdges,
): ListResult<Rec> {
  const totalPages = total === null ? null : Math.ceil(total / query.limit);
  const hasNext = edges?.hasNext ?? (totalPages === null ? more : query.page < totalPages);
  const pagination: Pagination = {
    page: query.page,
    limit: query.limit,
    total,
    totalPages,
    hasNext,
    hasPrev: edges ? edges.hasPrev : query.page > 1,
  };
  if (edges) {
    pagination.nextCursor = hasNext ? edges.nextCursor : null;
    pagination.prevCursor = edges.prevCursor;
  }
  return { items, pagination };
}

function positiveInteger(value: string | undefined, name: string): number | undefined {
  if (value === undefined || value === "") return undefined;
  if (!/^\d{1,10}$/.test(value) || Number(value) < 1)
    throw badQuery(`${name} must be a positive integer${echo(value, ", got ")}.`);
  return Number(value);
}

function parseSearch(value: string | undefined, rules: ListRules): string | undefined {
  if (value === undefined || value === "") return undefined;
  if (rules.searchable.length === 0)
    throw badQuery(`search is not available: "${rules.resource}" has no searchable fields.`);
  if (value.length > MAX_SEARCH_LENGTH)
    throw badQuery(`search must be at most ${MAX_SEARCH_LENGTH} characters.`);
  return value;
}

function parseSortBy(value: string | undefined, rules: ListRules): string | undefined {
  if (value === undefined || value === "") return undefined;
  if (rules.sortable.size === 0)
    throw badQuery(`sortBy is not available: ${rules.resource} has a fixed order.`);
  if (!rules.sortable.has(value)) {
    throw badQuery(
      `Cannot sort by${echo(value, " ")}: sortBy must be one of ${[...rules.sortable].join(", ")}.`,
    );
  }
  return value;
}

function parseSortOrder(value: string | undefined): "asc" | "desc" {
  if (value === undefined || value === "") return "desc";
  const order = value.toLowerCase();
  if (order !== "asc" && order !== "desc")
    throw badQuery(`sortOrder must be "asc" or "desc"${echo(value, ", got ")}.`);
  return order;
}

/** Repeats what the caller sent only when it is a plain word; anything else is not echoed back. */
function echo(value: string, lead: string): string {
  return /^[A-Za-z0-9_.-]{1,40}$/.test(value) ? `${lead}"${value}"` : lead === " " ? " that field" : "";
}

/**
 * A 400 naming the parameter (`filters[status]`) and every one a list takes. The name is shown
 * when it is short printable ASCII, quoted as JSON; anything else is not echoed back.
 */
export function unknownParameter(name: string, known: readonly string[], filters = true): APIError {
  const shown = /^[\x21-\x7e]{1,60}$/.test(name) ? ` ${JSON.stringify(name)}` : "";
  const hint =
    /^filters?\W/.test(name) && !name.startsWith("filter[")
      ? " (filters are written filter[field], such as filter[status]=active)"
      : "";
  return badQuery(
    `Unknown query parameter${shown}${hint}: this list takes ${known.join(", ")}${filters ? " and filter[field] (with an operator, filter[field][gte])" : ""}.`,
    name,
  );
}

function badQuery(message: string, parameter?: string): APIError {
  if (parameter !== undefined && /^[\x21-\x7e]{1,60}$/.test(parameter))
    return new APIError("BAD_REQUEST", message, {
      details: [{ path: parameter, message: "Not a list parameter." }],
    });
  return new APIError("BAD_REQUEST", message);
}
