// The filter language: a typed `Where<Record>` object, per field an operator and a value, with
// `and`, `or` and `not`. This file checks a filter against the fields it may name and turns it into
// a normal form (a condition tree) whose values are already column values; where-sql.ts compiles
// it. Every mistake is a 400 naming where it is (`filter.price.gte`), never a 500.

import { APIError } from "../core/errors.ts";
import { textProblem } from "../core/input-checks.ts";
import { dateFromIso } from "../core/iso-date.ts";

/** A field a filter may name, as the store sees it. */
export interface FilterField {
  name: string;
  kind: "string" | "enum" | "integer" | "number" | "boolean" | "date" | "list";
  /** Allowed values of an enum. */
  enumValues?: readonly string[];
  /** The column, when it is not named as the field (plugin tables: `uploadedBy` → `uploaded_by`). */
  column?: string;
  /**
   * A field of a referenced record (`author.name`): through which field, to which field of it;
   * through a list of ids (`tags.name`), the junction table holding it (`through`). `reverse`: a
   * field of the records that reference this one (`tasks.assignee` on a project, in a rule), where
   * `field` is theirs that holds this record's id.
   */
  via?: {
    relation: string;
    field: string;
    target: string;
    targetField: string;
    through?: string;
    reverse?: true;
  };
  /** A list of ids (`referencesMany`): the junction table holding it, (owner, target) by record. */
  junction?: string;
}

type Comparable<T> = { gt?: T; gte?: T; lt?: T; lte?: T };
type TextMatch = { contains?: string; startsWith?: string; endsWith?: string };

/** A field's value in a filter: dates are compared as ISO 8601 strings or Dates. */
type FilterValue<T> = [NonNullable<T>] extends [Date] ? string | Date : NonNullable<T>;

/** What may be asked of one field of type T: text matching on strings, ordering on strings, numbers and dates. */
export type FieldFilter<T> = {
  eq?: FilterValue<T>;
  ne?: FilterValue<T>;
  in?: readonly FilterValue<T>[];
  nin?: readonly FilterValue<T>[];
  isNull?: boolean;
} & ([NonNullable<T>] extends [string]
  ? // Text matching on free text only: an enum (a union of literals) is refused it, as the server does.
    string extends NonNullable<T>
    ? Comparable<FilterValue<T>> & TextMatch
    : Comparable<FilterValue<T>>
  : [NonNullable<T>] extends [number | Date]
    ? Comparable<FilterValue<T>>
    : [NonNullable<T>] extends [readonly string[]]
      ? // A list of ids (referencesMany): whether it holds one.
        { has?: string }
      : unknown);

/** A filter over records of type R: `{ status: "active", price: { gte: 10 }, or: [...] }`. */
export type Where<R> = {
  [K in keyof R]?: FilterValue<R[K]> | FieldFilter<R[K]> | (undefined extends R[K] ? null : never);
} & {
  and?: readonly Where<R>[];
  or?: readonly Where<R>[];
  not?: Where<R>;
};

export type Operator =
  | "eq"
  | "ne"
  | "gt"
  | "gte"
  | "lt"
  | "lte"
  | "in"
  | "nin"
  | "contains"
  | "startsWith"
  | "endsWith"
  | "isNull"
  | "has";

/** A checked filter: values are what the column holds (see `toColumn`). */
export type Condition =
  | { kind: "and"; items: Condition[] }
  | { kind: "or"; items: Condition[] }
  | { kind: "not"; item: Condition }
  | FieldCondition
  | RelatedCondition;

/**
 * A condition on the record another one references, with the caller's read rule on it:
 * `EXISTS (SELECT 1 FROM <table> WHERE id = <from>.<via> AND <item> AND <scope>)`.
 */
export interface RelatedCondition {
  kind: "related";
  /** The referencing table, and its field holding the referenced id. */
  from: string;
  via: string;
  /**
   * For a list of ids (`referencesMany`), the junction table holding it: the condition holds when
   * any record of the list matches it.
   */
  through?: string;
  table: string;
  /** What `item` and `scope` may name on the referenced table. */
  fields: ReadonlyMap<string, FilterField>;
  item: Condition;
  /** The caller's read rule on the referenced resource; `false` when she may read none of it. */
  scope: Condition | undefined | false;
}

/**
 * The values of one column of another resource's rows that match a `Where`, as a rule's `in`
 * operand: `{ orgId: { in: valuesOf("membership", "orgId", { userId: user.id }) } }` compiles to
 * `"orgId" in (select "orgId" from "membership" where "userId" = ?)`, asked of the database with
 * the rule's authority (no read rule of the other resource applies). Only rules may use it.
 */
export class ValuesOf {
  constructor(
    readonly resource: string,
    readonly column: string,
    readonly where: object,
    /** Fields of `where` whose values are the rule's own, the same for every caller (see `fixed`). */
    readonly fixed: readonly string[] = [],
  ) {}
}

/** A `ValuesOf` checked against the other resource's fields: what the SQL is compiled from. */
export interface SubSelect {
  kind: "subselect";
  table: string;
  column: string;
  where: Condition | undefined;
  fields: ReadonlyMap<string, FilterField>;
}

export function isSubSelect(value: unknown): value is SubSelect {
  return (value as SubSelect | null)?.kind === "subselect" && !Array.isArray(value);
}

export interface FieldCondition {
  kind: "field";
  field: string;
  op: Operator;
  value: unknown;
  /**
   * The value is the rule's own, the same for every caller (`memberOf`'s roles): written into the
   * SQL instead of bound, so that a plan made once for all values (PostgreSQL's generic plan)
   * still knows it.
   */
  fixed?: boolean;
}

export interface WhereLimits {
  /** Deepest nesting of and/or/not. @default 8 */
  maxDepth?: number;
  /** Most field conditions in one filter. @default 64 */
  maxConditions?: number;
  /** Most values of one `in` or `nin`. @default 100 */
  maxValues?: number;
}

/** The operators each kind of field takes: the parser checks filters by it, the OpenAPI document is built from it. */
export const OPERATORS_BY_KIND: Readonly<Record<FilterField["kind"], ReadonlySet<Operator>>> = {
  string: new Set([
    "eq",
    "ne",
    "gt",
    "gte",
    "lt",
    "lte",
    "in",
    "nin",
    "contains",
    "startsWith",
    "endsWith",
    "isNull",
  ]),
  enum: new Set(["eq", "ne", "gt", "gte", "lt", "lte", "in", "nin", "isNull"]),
  integer: new Set(["eq", "ne", "gt", "gte", "lt", "lte", "in", "nin", "isNull"]),
  number: new Set(["eq", "ne", "gt", "gte", "lt", "lte", "in", "nin", "isNull"]),
  date: new Set(["eq", "ne", "gt", "gte", "lt", "lte", "in", "nin", "isNull"]),
  boolean: new Set(["eq", "ne", "in", "nin", "isNull"]),
  // A list of ids: whether it holds one (`filter[tagIds][has]=<id>`).
  list: new Set(["has"]),
};

const ALL_OPERATORS = new Set<string>([...OPERATORS_BY_KIND.string, ...OPERATORS_BY_KIND.list]);

/** Why an operator does not fit a field of this kind. */
function notForKind(kind: FilterField["kind"]): string {
  if (kind === "list") return "cannot be used on a list of ids (it takes has)";
  return `cannot be used on ${kind === "enum" || kind === "integer" ? "an" : "a"} ${kind} field`;
}

/** Most values of one `in` or `nin` from a caller, and the longest text a filter compares. */
export const MAX_FILTER_VALUES = 100;
export const MAX_FILTER_TEXT = 1000;

/**
 * Checks `input` against the fields it may name and returns its normal form, or undefined for an
 * empty filter. Values may be typed (from the client or `app.api`) or strings (from a query
 * string): `fromText` says to read numbers, booleans and lists from text. `strict` refuses
 * fields set to undefined instead of leaving them out (for filters written by access rules).
 */
export function parseWhere(
  input: unknown,
  fields: ReadonlyMap<string, FilterField>,
  options: WhereLimits & { fromText?: boolean; strict?: boolean } = {},
): Condition | undefined {
  // Most lists filter nothing: no closures are made for them.
  if (input === undefined || input === null) return undefined;
  const maxDepth = options.maxDepth ?? 8;
  const maxConditions = options.maxConditions ?? 64;
  const maxValues = options.maxValues ?? MAX_FILTER_VALUES;
  let conditions = 0;

  const group = (value: unknown, path: string, depth: number): Condition[] => {
    if (depth > maxDepth) throw bad(path, `nests deeper than ${maxDepth} levels of and/or/not`);
    if (!isPlainObject(value)) throw bad(path, "must be an object of field conditions");
    const items: Condition[] = [];
    for (const key of Object.keys(value)) {
      const child = value[key];
      const at = `${path}.${shown(key)}`;
      if (child === undefined) {
        // A rule's `{ ownerId: user?.id }` with no user must not widen to every row.
        if (options.strict) throw bad(at, "is undefined");
        continue;
      }
      if (key === "and" || key === "or") {
        const list = asList(child, at, options.fromText === true);
        const parts = list.map((item, i) => combine("and", group(item, `${at}.${i}`, depth + 1)));
        if (parts.length > 0) items.push({ kind: key, items: parts });
      } else if (key === "not") {
        items.push({ kind: "not", item: combine("and", group(child, at, depth + 1)) });
      } else {
        const field = fields.get(key);
        if (!field) throw bad(at, "is not a field you can filter on");
        items.push(...fieldConditions(field, child, at));
      }
    }
    return items;
  };

  const fieldConditions = (field: FilterField, value: unknown, path: string): Condition[] => {
    // A bare value means equality; null means "is null".
    const ops: Record<string, unknown> =
      isPlainObject(value) && !(value instanceof Date)
        ? value
        : value === null
          ? { isNull: true }
          : { eq: value };
    const out: Condition[] = [];
    for (const op of Object.keys(ops)) {
      const at = `${path}.${shown(op)}`;
      if (!ALL_OPERATORS.has(op)) throw bad(at, "is not an operator");
      if (!OPERATORS_BY_KIND[field.kind].has(op as Operator)) throw bad(at, notForKind(field.kind));
      if (++conditions > maxConditions)
        throw bad(path, `makes the filter longer than ${maxConditions} conditions`);
      out.push({
        kind: "field",
        field: field.name,
        op: op as Operator,
        value: operand(field, op as Operator, ops[op], at),
      });
    }
    return out;
  };

  const operand = (field: FilterField, op: Operator, value: unknown, path: string): unknown => {
    if (op === "isNull") return toBoolean(value, path, options.fromText === true);
    if (op === "in" || op === "nin") {
      // A rule's set of another resource's values; resolved against that resource by the caller.
      if (value instanceof ValuesOf && options.strict) return value;
      const list = asList(value, path, options.fromText === true, true);
      // A query string cannot mean an empty set (`filter[f][in]=` is a mistake); an object can.
      if (list.length === 0 && options.fromText === true) throw bad(path, "needs at least one value");
      if (list.length > maxValues) throw bad(path, `takes at most ${maxValues} values`);
      return list.map((item, i) => scalar(field, item, `${path}.${i}`));
    }
    if (op === "contains" || op === "startsWith" || op === "endsWith") {
      if (typeof value !== "string" || value === "") throw bad(path, "must be a non-empty string");
      return checkText(value, path);
    }
    return scalar(field, value, path);
  };

  const scalar = (field: FilterField, value: unknown, path: string): unknown => {
    const text = options.fromText === true && typeof value === "string";
    switch (field.kind) {
      case "string":
        if (typeof value !== "string") throw bad(path, "must be a string");
        return checkText(value, path);
      case "list":
        if (typeof value !== "string" || value === "" || value.length > 255) throw bad(path, "must be an id");
        return checkText(value, path);
      case "enum":
        if (typeof value !== "string" || !field.enumValues?.includes(value))
          throw bad(path, `must be one of ${field.enumValues?.join(", ")}`);
        return value;
      case "integer":
      case "number": {
        const n = text && /^-?\d+(\.\d+)?(e[+-]?\d+)?$/i.test(value as string) ? Number(value) : value;
        if (typeof n !== "number" || !Number.isFinite(n)) throw bad(path, "must be a number");
        if (field.kind === "integer" && !Number.isSafeInteger(n)) throw bad(path, "must be an integer");
        return n;
      }
      case "boolean":
        return toBoolean(value, path, options.fromText === true);
      case "date": {
        const date =
          value instanceof Date ? value : typeof value === "string" ? dateFromIso(value) : undefined;
        if (!date || Number.isNaN(date.getTime())) throw bad(path, "must be an ISO 8601 date");
        return date;
      }
    }
  };

  const items = group(input, "filter", 1);
  return items.length === 0 ? undefined : combine("and", items);
}

function combine(kind: "and", items: Condition[]): Condition {
  return items.length === 1 ? items[0]! : { kind, items };
}

function asList(value: unknown, path: string, fromText: boolean, commaSeparated = false): unknown[] {
  if (Array.isArray(value)) return value;
  // Nothing at all (`filter[f][in]=`) is no value, not the one value "": a mistake, refused.
  if (fromText && commaSeparated && typeof value === "string") return value === "" ? [] : value.split(",");
  // A query string writes lists as numbered keys: filter[or][0][…], filter[or][1][…].
  if (fromText && isPlainObject(value) && Object.keys(value).every((k) => /^\d{1,3}$/.test(k)))
    return Object.keys(value)
      .sort((a, b) => Number(a) - Number(b))
      .map((k) => value[k]);
  throw bad(path, "must be a list");
}

function toBoolean(value: unknown, path: string, fromText: boolean): boolean {
  if (typeof value === "boolean") return value;
  if (fromText && (value === "true" || value === "false")) return value === "true";
  throw bad(path, "must be true or false");
}

function checkText(value: string, path: string): string {
  const problem = textProblem(value);
  if (problem) throw bad(path, problem);
  if (value.length > MAX_FILTER_TEXT) throw bad(path, `must be at most ${MAX_FILTER_TEXT} characters`);
  return value;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value) && !(value instanceof Date);
}

/** A key as it may be echoed back: a plain word, or "?" for anything else. */
function shown(key: string): string {
  return /^[A-Za-z0-9_]{1,40}(\.[A-Za-z0-9_]{1,40})?$/.test(key) ? key : "?";
}

function bad(path: string, problem: string): APIError {
  return new APIError("BAD_REQUEST", `${path} ${problem}.`, { details: [{ path, message: `${problem}.` }] });
}

/** Whether a condition asks another table: a related record, or a set of another table's values. */
export function namesOtherTables(condition: Condition): boolean {
  switch (condition.kind) {
    case "and":
    case "or":
      return condition.items.some(namesOtherTables);
    case "not":
      return namesOtherTables(condition.item);
    case "related":
      return true;
    case "field":
      return isSubSelect(condition.value);
  }
}

/** The fields a condition names, at any depth. */
export function fieldsNamed(condition: Condition): ReadonlySet<string> {
  const names = new Set<string>();
  const visit = (c: Condition): void => {
    if (c.kind === "field") names.add(c.field);
    else if (c.kind === "related") names.add(c.via);
    else if (c.kind === "not") visit(c.item);
    else c.items.forEach(visit);
  };
  visit(condition);
  return names;
}

/**
 * The condition with each condition on a field replaced by `map`'s; conditions on other records
 * are kept as they are, or (`intoRelated`) mapped inside too.
 */
export function mapFieldConditions(
  condition: Condition,
  map: (c: FieldCondition) => Condition,
  intoRelated = false,
): Condition {
  const again = (c: Condition) => mapFieldConditions(c, map, intoRelated);
  switch (condition.kind) {
    case "and":
    case "or":
      return { kind: condition.kind, items: condition.items.map(again) };
    case "not":
      return { kind: "not", item: again(condition.item) };
    case "related":
      if (!intoRelated) return condition;
      return { ...condition, item: again(condition.item), scope: condition.scope && again(condition.scope) };
    case "field":
      return map(condition);
  }
}

/** The fields of a plugin table, as `[field, kind, column]`: `["uploadedBy", "string", "uploaded_by"]`. */
export function tableFilterFields(
  entries: readonly (readonly [string, FilterField["kind"], string])[],
): ReadonlyMap<string, FilterField> {
  return new Map(entries.map(([name, kind, column]) => [name, { name, kind, column }]));
}

/**
 * A `Where` an access rule returned, checked against every field it may name. Strict: a field set
 * to undefined (`{ ownerId: user?.id }` with no user) is an error, never "every row". A mistake
 * here is the server's, so it is thrown as a plain error (a logged 500), never as a 400.
 */
export function parseRuleWhere(
  where: object,
  fields: ReadonlyMap<string, FilterField>,
  rule: string,
): Condition | undefined {
  try {
    return parseWhere(where, fields, { strict: true, maxConditions: 256, maxValues: 10_000 });
  } catch (error) {
    throw new Error(`crudkit: ${rule} returned an invalid filter: ${(error as Error).message}`);
  }
}
