// Values as they go into and come out of columns, per dialect: dates are ISO 8601 text on SQLite
// (which sorts as time) and Date objects for PostgreSQL and MySQL; JSON comes back as text from
// SQLite and MySQL and parsed from PostgreSQL.

import type { DialectName } from "./dialect.ts";

export function dateToColumn(value: string | Date, dialect: DialectName): string | Date {
  if (dialect === "sqlite") return value instanceof Date ? value.toISOString() : value;
  return value instanceof Date ? value : new Date(value);
}

/** Records carry dates as ISO 8601 strings. */
export function dateFromColumn(value: unknown): string {
  return value instanceof Date ? value.toISOString() : String(value);
}

export function jsonFromColumn(value: unknown): any {
  return typeof value === "string" ? JSON.parse(value) : value;
}
