// Values as they go into and come out of columns, per dialect: dates are ISO 8601 text on SQLite
// (which sorts as time) and Date objects for PostgreSQL and MySQL; JSON comes back as text from
// SQLite and MySQL and parsed from PostgreSQL.

import { checkJsonTextDepth } from "../core/input-checks.ts";
import type { DialectProfile } from "./dialect.ts";

/**
 * Deepest JSON a column is read back with. Input is refused far shallower (`maxJsonDepth`); this
 * only keeps a value written by other means from overflowing the stack when it is sent.
 */
const READ_DEPTH_LIMIT = 1000;

export function dateToColumn(value: string | Date, profile: DialectProfile): string | Date {
  if (profile.datesAsText) return value instanceof Date ? value.toISOString() : value;
  if (profile.datesBoundAsText) {
    const date = value instanceof Date ? value : new Date(value);
    // Not a date: bound as it came, for the server to refuse as it refused the Date before.
    return Number.isNaN(date.getTime()) ? String(value) : date.toISOString();
  }
  return value instanceof Date ? value : new Date(value);
}

/** Records carry dates as ISO 8601 strings. */
export function dateFromColumn(value: unknown): string {
  return value instanceof Date ? value.toISOString() : String(value);
}

/**
 * A JSON column's value. Text that is not JSON, or nests past any limit (a row written by other
 * means), reads as null and is reported: one bad row never fails a read, a list or a delete.
 */
export function jsonFromColumn(value: unknown, report: (message: string, error: unknown) => void): any {
  if (typeof value !== "string") return value;
  try {
    checkJsonTextDepth(value, READ_DEPTH_LIMIT);
    return JSON.parse(value);
  } catch (error) {
    report("crudkit: a stored JSON value could not be read; it is answered as null", error);
    return null;
  }
}
