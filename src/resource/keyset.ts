// Keyset (cursor) pagination: a page starts after (or before) the sort value and id of a row, so
// a deep page costs what the first one does, and rows inserted meanwhile neither repeat nor go
// missing. A cursor is opaque to callers: `c1.` and base64url JSON naming the resource, the sort,
// the direction and the row's key. One that does not fit the request is a 400, never a query.
//
// Nulls sort first in ascending order and last in descending order on every dialect
// (PostgreSQL is told so), and the conditions below follow that order.

import { type Expression, type SqlBool, sql } from "kysely";
import { APIError } from "../core/errors.ts";
import { isoTime } from "../core/iso-date.ts";
import { dateFromColumn, dateToColumn } from "../db/column-values.ts";
import type { DialectProfile } from "../db/dialect.ts";
import { slot } from "../db/query-template.ts";
import type { FilterField } from "../query/where.ts";

export interface Cursor {
  /** `after`: the page after the row; `before`: the page before it. */
  direction: "after" | "before";
  /** The row's sort value as the column holds it (null for a null). */
  value: unknown;
  id: string;
}

interface CursorBinding {
  resource: string;
  sortBy: string;
  sortOrder: "asc" | "desc";
}

const PREFIX = "c1.";
const MAX_LENGTH = 2048;

export function encodeCursor(
  binding: CursorBinding,
  direction: Cursor["direction"],
  value: unknown,
  id: unknown,
): string {
  const payload = [
    binding.resource,
    binding.sortBy,
    binding.sortOrder,
    direction === "after" ? "a" : "b",
    value,
    id,
  ];
  return PREFIX + Buffer.from(JSON.stringify(payload)).toString("base64url");
}

/** Reads a cursor made for this resource and sort; anything else is a 400 that says so. */
export function decodeCursor(
  text: string,
  binding: CursorBinding,
  field: FilterField,
  profile: DialectProfile,
): Cursor {
  const bad = (why: string) =>
    new APIError(
      "BAD_REQUEST",
      `cursor is not valid here: ${why}. Use a cursor from this list's pagination.`,
    );
  if (text.length > MAX_LENGTH || !text.startsWith(PREFIX)) throw bad("it is not a crudkit cursor");
  let payload: unknown;
  try {
    payload = JSON.parse(Buffer.from(text.slice(PREFIX.length), "base64url").toString("utf8"));
  } catch {
    throw bad("it is malformed");
  }
  if (!Array.isArray(payload) || payload.length !== 6) throw bad("it is malformed");
  const [resource, sortBy, sortOrder, direction, value, id] = payload as unknown[];
  if (resource !== binding.resource) throw bad("it belongs to another list");
  if (sortBy !== binding.sortBy || sortOrder !== binding.sortOrder)
    throw bad("it was made for another sort; keep sortBy and sortOrder as they were");
  if ((direction !== "a" && direction !== "b") || typeof id !== "string" || id === "" || id.length > 255)
    throw bad("it is malformed");
  return {
    direction: direction === "a" ? "after" : "before",
    value: columnValue(field, value, profile, bad),
    id,
  };
}

/** The cursor's sort value checked against the field's kind, as the column holds it. */
function columnValue(
  field: FilterField,
  value: unknown,
  profile: DialectProfile,
  bad: (why: string) => APIError,
) {
  if (value === null) return null;
  switch (field.kind) {
    case "integer":
    case "number":
      if (typeof value !== "number" || !Number.isFinite(value)) throw bad("it is malformed");
      return value;
    case "boolean":
      if (typeof value !== "boolean") throw bad("it is malformed");
      return profile.booleansAsIntegers ? (value ? 1 : 0) : value;
    case "date": {
      const time = typeof value === "string" && value.length <= 40 ? isoTime(value) : Number.NaN;
      if (Number.isNaN(time)) throw bad("it is malformed");
      return dateToColumn(new Date(time), profile);
    }
    default:
      if (typeof value !== "string" || value.length > 10_000) throw bad("it is malformed");
      return value;
  }
}

/** The record's sort value as a cursor carries it (dates as ISO strings). */
export function cursorValue(field: FilterField, value: unknown): unknown {
  if (value === undefined || value === null) return null;
  return field.kind === "date" ? dateFromColumn(value) : value;
}

/**
 * Rows strictly past (sortValue, id) in the direction read, with slots `kv` and `ki`. `ascending`
 * is the order rows are read in: the list's own order for `after`, reversed for `before`.
 */
export function keysetCondition(
  sortBy: string,
  ascending: boolean,
  valueIsNull: boolean,
  nullable: boolean,
  /** `(s, id) > (?, ?)`, which SQLite and PostgreSQL answer with one index range; MySQL wants it spelled out. */
  rowValues: boolean,
): Expression<SqlBool> {
  const s = sql.ref(sortBy);
  const id = sql.ref("id");
  const past = sql.raw(ascending ? ">" : "<");
  const tie = sql<SqlBool>`${id} ${past} ${slot("ki")}`;
  if (sortBy === "id") return tie;
  // Nulls come first ascending, last descending.
  if (valueIsNull)
    return ascending
      ? sql<SqlBool>`((${s} is null and ${tie}) or ${s} is not null)`
      : sql<SqlBool>`(${s} is null and ${tie})`;
  const after = rowValues
    ? sql<SqlBool>`(${s}, ${id}) ${past} (${slot("kv")}, ${slot("ki")})`
    : sql<SqlBool>`(${s} ${past} ${slot("kv")} or (${s} = ${slot("kv")} and ${tie}))`;
  return nullable && !ascending ? sql<SqlBool>`(${after} or ${s} is null)` : after;
}
