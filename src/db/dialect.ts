// What differs between SQL engines, in one place: column types and the few SQL forms that vary.

import type { ColumnDataType } from "kysely";
import type { ColumnType } from "./table-definition.ts";

export type DialectName = "sqlite" | "postgres" | "mysql";

const COLUMN_TYPES: Record<DialectName, Record<ColumnType, ColumnDataType>> = {
  // SQLite stores dates as ISO 8601 text (sortable as text), booleans as 0/1 and JSON as text.
  sqlite: {
    text: "text",
    integer: "integer",
    number: "real",
    boolean: "integer",
    date: "text",
    json: "text",
  },
  postgres: {
    text: "text",
    integer: "bigint",
    number: "double precision",
    boolean: "boolean",
    date: "timestamptz",
    json: "jsonb",
  },
  mysql: {
    text: "varchar(255)",
    integer: "bigint",
    number: "double precision",
    boolean: "boolean",
    date: "datetime(3)",
    json: "json",
  },
};

export function columnDataType(dialect: DialectName, type: ColumnType): ColumnDataType {
  return COLUMN_TYPES[dialect][type];
}

/** The case-insensitive pattern operator. */
export function likeOperator(dialect: DialectName): "like" | "ilike" {
  return dialect === "postgres" ? "ilike" : "like";
}
