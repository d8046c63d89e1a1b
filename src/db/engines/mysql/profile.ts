// MySQL and MariaDB (mysql2): utf8mb4 tables with a case-insensitive collation (search ignores
// case), LONGTEXT for text and VARCHAR(255) with a binary collation for keyed text; no RETURNING;
// search scans (FULLTEXT matches words, not substrings), bounded by the statement timeout.

import { sql } from "kysely";
import type { DialectProfile } from "../../dialect.ts";
import { mysqlErrors } from "./errors.ts";

const TYPES = {
  integer: "bigint",
  number: "double precision",
  boolean: "boolean",
  date: "datetime(3)",
  json: "json",
} as const;

export const mysqlProfile: DialectProfile = {
  name: "mysql",
  errors: mysqlErrors,
  physicalTypes: {
    text: ["text", "varchar", "longtext", "mediumtext"],
    integer: ["bigint", "int"],
    number: ["double", "float", "decimal"],
    boolean: ["tinyint"],
    date: ["datetime", "timestamp"],
    json: ["json", "longtext"],
  },
  returning: false,
  rowLocks: true,
  shareLock: sql`lock in share mode`,
  jsonNestingLimit: 31,
  alterColumns: "modify column",
  dropIndexOnTable: true,
  boundedIndexedText: true,
  booleansAsIntegers: false,
  datesAsText: false,
  datesBoundAsText: false,
  readsAsWritten: false,
  textEqualityIgnoresCase: true,
  searchIndex: "none",
  textIndex: undefined,
  // MariaDB does not turn `(a, b) > (?, ?)` into an index range; the OR form it does.
  rowValueKeyset: false,
  explicitNullsOrder: false,
  lateRowLookup: false,
  literalLimit: false,
  columnType: (type, keyed) =>
    type === "text"
      ? // LONGTEXT, as MySQL's TEXT holds only 64 KiB and a string field without a maximum must
        // store what the body limit lets through; keyed text compares case-sensitively.
        keyed
        ? sql`varchar(255) character set utf8mb4 collate utf8mb4_bin`
        : sql`longtext`
      : TYPES[type],
  // MariaDB's session timeout, lifted around a migration and put back; MySQL has none for DDL.
  untimedMigration: {
    scope: "session",
    read: sql`select @@session.max_statement_time as t`,
    set: (ms) => sql`set session max_statement_time = ${sql.lit(ms)}`,
  },
  dateLiteral: (date) => date.toISOString().replace("T", " ").replace("Z", ""),
  tableOptions: sql`default character set utf8mb4 collate utf8mb4_unicode_ci`,
  currentTime: sql`(current_timestamp(3))`,
  // The pattern's collation is named, so indexed columns (binary collation) match as others do.
  likeFolds: "case and accents",
  likeMatch: (column, pattern) =>
    sql`${column} like ${pattern} collate utf8mb4_unicode_ci escape ${sql.lit("\\")}`,
  // Collations pad with spaces, so `'a' = 'a '` holds: the bytes are compared too, while the plain
  // equality still picks the index.
  equalsExactly: (column, value) => {
    const ref = sql.ref(column);
    return sql`(${ref} = ${value} and cast(${ref} as binary) = cast(${value} as binary))`;
  },
  tableEstimate: (table) => sql`select table_rows as total from information_schema.tables
    where table_schema = database() and table_name = ${table}`,
  plannedRows: {
    prefix: "explain ",
    // Rows examined, times the share the condition keeps.
    read(rows) {
      const row = rows[0];
      const examined = Number(row?.rows);
      const filtered = row?.filtered === undefined || row?.filtered === null ? 100 : Number(row.filtered);
      return Number.isFinite(examined) ? Math.round((examined * filtered) / 100) : undefined;
    },
  },
  indexes: () => sql`select distinct index_name as name, table_name as tableName
    from information_schema.statistics where table_schema = database()`,
  foreignKeys: () => sql`select r.constraint_name as name, r.table_name as tableName,
    k.column_name as \`column\`, r.referenced_table_name as target, r.delete_rule as onDelete
    from information_schema.referential_constraints r
    join information_schema.key_column_usage k
      on k.constraint_schema = r.constraint_schema and k.constraint_name = r.constraint_name
      and k.table_name = r.table_name
    where r.constraint_schema = database()`,
  foreignKeyChanges: "alter table",
  dropForeignKeyClause: "foreign key",
  foreignKeyPause: undefined,
  migrationLock: {
    kind: "session",
    tryLock: sql<{ ok: unknown }>`select get_lock('crudkit_migrations', 0) as ok`,
    unlock: sql`select release_lock('crudkit_migrations')`,
  },
};
