// A checked filter (query/where.ts) evaluated on one record in memory, with SQL's meaning: a
// comparison with a missing value is unknown, `not unknown` stays unknown, and only a true
// condition passes, as a WHERE clause would decide for the same row. Event streams use it to check
// every event against each subscriber's row rule and filter without asking the database.

import { isoTime } from "../core/iso-date.ts";
import type { DialectProfile } from "../db/dialect.ts";
import type { Condition, FieldCondition, FilterField } from "./where.ts";

/** true, false, or null for SQL's unknown. */
type Truth = boolean | null;

/**
 * Whether `record` passes `condition`; undefined when it names another record (a relation
 * filter), which only the database can answer.
 */
export function matchesWhere(
  condition: Condition,
  record: Readonly<Record<string, unknown>>,
  fields: ReadonlyMap<string, FilterField>,
  folds: DialectProfile["likeFolds"] = "case",
): boolean | undefined {
  try {
    return evaluate(condition, record, { fields, fold: FOLDS[folds] }) === true;
  } catch (error) {
    if (error === NEEDS_DATABASE) return undefined;
    throw error;
  }
}

/** Whether a condition names a field of another record anywhere in it. */
export function namesOtherRecords(condition: Condition): boolean {
  if (condition.kind === "related") return true;
  if (condition.kind === "not") return namesOtherRecords(condition.item);
  if (condition.kind === "and" || condition.kind === "or") return condition.items.some(namesOtherRecords);
  return false;
}

const NEEDS_DATABASE = Symbol("needs the database");

interface Scope {
  fields: ReadonlyMap<string, FilterField>;
  /** Text as the database's LIKE compares it. */
  fold: (text: string) => string;
}

const FOLDS: Record<DialectProfile["likeFolds"], (text: string) => string> = {
  "ascii case": (text) => text.replace(/[A-Z]+/g, (upper) => upper.toLowerCase()),
  case: (text) => text.toLowerCase(),
  "case and accents": (text) =>
    text
      .normalize("NFD")
      .replace(/\p{M}+/gu, "")
      .toLowerCase(),
};

function evaluate(condition: Condition, record: Readonly<Record<string, unknown>>, scope: Scope): Truth {
  switch (condition.kind) {
    case "and":
    case "or": {
      // "and" is decided by its first false item, "or" by its first true one; an item whose truth
      // is unknown (null) leaves the whole unknown unless another decides it.
      const decisive = condition.kind === "or";
      let result: Truth = !decisive;
      for (const item of condition.items) {
        const value = evaluate(item, record, scope);
        if (value === decisive) return decisive;
        if (value === null) result = null;
      }
      return result;
    }
    case "not": {
      const value = evaluate(condition.item, record, scope);
      return value === null ? null : !value;
    }
    case "related":
      throw NEEDS_DATABASE;
    default:
      return compare(condition, record[condition.field], scope);
  }
}

function compare(c: FieldCondition, raw: unknown, { fields, fold }: Scope): Truth {
  const field = fields.get(c.field);
  if (c.op === "isNull") return (raw === null || raw === undefined) === (c.value === true);
  // A list of ids (referencesMany), as the record carries it.
  if (c.op === "has") return Array.isArray(raw) && raw.includes(c.value);
  // Another table's values: only the database can say.
  if ((c.op === "in" || c.op === "nin") && !Array.isArray(c.value)) throw NEEDS_DATABASE;
  // An empty set: nothing is in it, everything (null too) is not, as the SQL (where-sql.ts) says.
  if ((c.op === "in" || c.op === "nin") && (c.value as unknown[]).length === 0) return c.op === "nin";
  if (raw === null || raw === undefined) return null;
  const kind = field?.kind ?? "string";
  const value = normal(raw, kind);
  switch (c.op) {
    case "eq":
      return value === normal(c.value, kind);
    case "ne":
      return value !== normal(c.value, kind);
    case "in":
      return (c.value as unknown[]).some((v) => normal(v, kind) === value);
    case "nin":
      return !(c.value as unknown[]).some((v) => normal(v, kind) === value);
    case "gt":
      return order(value, normal(c.value, kind)) > 0;
    case "gte":
      return order(value, normal(c.value, kind)) >= 0;
    case "lt":
      return order(value, normal(c.value, kind)) < 0;
    case "lte":
      return order(value, normal(c.value, kind)) <= 0;
    case "contains":
    case "startsWith":
    case "endsWith": {
      // Case-insensitive, as the database's LIKE / ILIKE match text.
      const text = fold(String(value));
      const term = fold(String(c.value));
      if (c.op === "contains") return text.includes(term);
      return c.op === "startsWith" ? text.startsWith(term) : text.endsWith(term);
    }
  }
}

/** Values of one kind in one form: dates as epoch milliseconds, booleans as booleans. */
function normal(value: unknown, kind: FilterField["kind"]): unknown {
  switch (kind) {
    case "date":
      return value instanceof Date ? value.getTime() : isoTime(String(value));
    case "boolean":
      return value === true || value === 1 || value === "1" || value === "true";
    case "integer":
    case "number":
      return typeof value === "number" ? value : Number(value);
    default:
      return String(value);
  }
}

function order(a: unknown, b: unknown): number {
  if (typeof a === "number" && typeof b === "number") return a - b;
  const x = String(a);
  const y = String(b);
  return x < y ? -1 : x > y ? 1 : 0;
}
