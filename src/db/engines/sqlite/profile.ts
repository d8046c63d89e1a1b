// SQLite (better-sqlite3): dates as ISO 8601 text, booleans as 0/1, JSON as text; search through
// an FTS5 trigram table; no row locks (writes run one at a time) and no ALTER COLUMN.

import { sql } from "kysely";
import type { DialectProfile } from "../../dialect.ts";
import { sqliteErrors } from "./errors.ts";
import { fts5TextIndex } from "./search.ts";

const TYPES = {
  text: "text",
  integer: "integer",
  number: "real",
  boolean: "integer",
  date: "text",
  json: "text",
} as const;

export const sqliteProfile: DialectProfile = {
  name: "sqlite",
  errors: sqliteErrors,
  physicalTypes: {
    text: ["text"],
    integer: ["integer"],
    number: ["real"],
    boolean: ["integer"],
    date: ["text"],
    json: ["text"],
  },
  returning: true,
  rowLocks: false,
  shareLock: undefined,
  jsonNestingLimit: undefined,
  alterColumns: "rebuild",
  dropIndexOnTable: false,
  boundedIndexedText: false,
  booleansAsIntegers: true,
  datesAsText: true,
  datesBoundAsText: false,
  readsAsWritten: true,
  textEqualityIgnoresCase: false,
  searchIndex: "fts5 trigram",
  textIndex: fts5TextIndex,
  rowValueKeyset: true,
  explicitNullsOrder: false,
  lateRowLookup: false,
  literalLimit: false,
  columnType: (type) => TYPES[type],
  untimedMigration: undefined,
  dateLiteral: (date) => date.toISOString(),
  tableOptions: undefined,
  currentTime: sql`(strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))`,
  likeFolds: "ascii case",
  likeMatch: (column, pattern) => sql`${column} like ${pattern} escape ${sql.lit("\\")}`,
  // The value as `+?`, an expression SQLite's STAT4 estimates do not read. With STAT4 statistics
  // (ANALYZE, PRAGMA optimize), a statement whose plan estimated rows from a bound value is planned
  // again each time a value is bound, which costs about what preparing it does; an equality on a
  // key matches one row whatever the value, so its plan cannot depend on it. Seen on a read by id
  // under a rule through a relation: planned again on every read, 20 µs against 7.
  equalsExactly: (column, value) => sql`${sql.ref(column)} = +${value}`,
  // Rows are appended with growing rowids: the largest is the count, less any deleted.
  tableEstimate: (table) => sql`select max(rowid) as total from ${sql.table(table)}`,
  plannedRows: undefined,
  indexes: () => sql`select name, tbl_name as "tableName" from sqlite_master
    where type = 'index' and name not like 'sqlite_autoindex%'`,
  foreignKeys: () => sql`select null as name, m.name as "tableName", f."from" as "column",
    f."table" as target, f.on_delete as "onDelete"
    from sqlite_master m join pragma_foreign_key_list(m.name) f
    where m.type = 'table'`,
  foreignKeyChanges: "rebuild",
  dropForeignKeyClause: "constraint",
  foreignKeyPause: {
    off: sql`pragma foreign_keys = off`,
    on: sql`pragma foreign_keys = on`,
    check: sql`pragma foreign_key_check`,
  },
  migrationLock: { kind: "immediate transaction", begin: sql`begin immediate` },
};
