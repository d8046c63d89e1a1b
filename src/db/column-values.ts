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
  const date = value instanceof Date ? value : new Date(value);
  // As text only where it says what pg's own formatting would: the process keeps UTC (pg formats
  // in local time, which a column without a time zone stores as it reads), and a year PostgreSQL
  // reads the same from ISO text (year 0 is pg's "0001 BC").
  if (profile.datesBoundAsText && date.getTimezoneOffset() === 0) {
    const year = date.getUTCFullYear();
    if (year >= 1 && year <= 9999) return date.toISOString();
  }
  return date;
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
