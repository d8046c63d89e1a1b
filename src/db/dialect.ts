// What differs between SQL engines, in one place: column types and the few SQL forms that vary.

import { type ColumnDataType, type Expression, type SqlBool, sql } from "kysely";
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
    text: "text",
    integer: "bigint",
    number: "double precision",
    boolean: "boolean",
    date: "datetime(3)",
    json: "json",
  },
};

/**
 * The column type for a dialect. `keyed` columns (primary key, unique, indexed) that hold text
 * are `varchar(255)` with a binary collation on MySQL: TEXT cannot be indexed whole, and ids must
 * compare case-sensitively even though the table's collation (for search) does not.
 */
export function columnDataType(
  dialect: DialectName,
  type: ColumnType,
  keyed = false,
): ColumnDataType | Expression<unknown> {
  if (dialect === "mysql" && type === "text") {
    // LONGTEXT, as MySQL's TEXT holds only 64 KiB and a string field without a maximum must
    // store what the body limit lets through.
    return keyed ? sql`varchar(255) character set utf8mb4 collate utf8mb4_bin` : sql`longtext`;
  }
  return COLUMN_TYPES[dialect][type];
}

/** MySQL tables are utf8mb4 with a case-insensitive collation, so search ignores case there too. */
export function tableOptions(dialect: DialectName): Expression<unknown> | undefined {
  return dialect === "mysql" ? sql`default character set utf8mb4 collate utf8mb4_unicode_ci` : undefined;
}

/**
 * `column` matches a LIKE pattern (with `\` escaping), ignoring case: ILIKE on PostgreSQL; on
 * MySQL the pattern's collation is named, so indexed columns (binary collation) match as others do.
 */
export function likeMatch(
  dialect: DialectName,
  column: Expression<unknown>,
  pattern: unknown,
): Expression<SqlBool> {
  const backslash = sql.lit("\\");
  if (dialect === "postgres") return sql<SqlBool>`${column} ilike ${pattern} escape ${backslash}`;
  if (dialect === "mysql")
    return sql<SqlBool>`${column} like ${pattern} collate utf8mb4_unicode_ci escape ${backslash}`;
  return sql<SqlBool>`${column} like ${pattern} escape ${backslash}`;
}

/**
 * `SELECT … FOR UPDATE` exists. SQLite has none and needs none: its write transactions already
 * run one at a time.
 */
export function supportsRowLocks(dialect: DialectName): boolean {
  return dialect !== "sqlite";
}

/**
 * `column = value`, compared exactly. MySQL's collations pad with spaces, so `'a' = 'a '` holds
 * there and a request for id "a " would reach record "a"; the bytes are compared too, while the
 * plain equality still picks the index.
 *
 * MySQL: (`id` = ? and cast(`id` as binary) = cast(? as binary)); elsewhere "id" = ?
 */
export function equalsExactly(dialect: DialectName, column: string, value: unknown): Expression<SqlBool> {
  const ref = sql.ref(column);
  return dialect === "mysql"
    ? sql<SqlBool>`(${ref} = ${value} and cast(${ref} as binary) = cast(${value} as binary))`
    : sql<SqlBool>`${ref} = ${value}`;
}
