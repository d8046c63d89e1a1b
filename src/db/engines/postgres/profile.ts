// PostgreSQL (pg): timestamptz, boolean, jsonb; search through pg_trgm GIN indexes, which ILIKE
// uses as is; row locks; planner estimates for counts.

import { sql } from "kysely";
import type { DialectProfile } from "../../dialect.ts";
import { postgresErrors } from "./errors.ts";

const TYPES = {
  text: "text",
  integer: "bigint",
  number: "double precision",
  boolean: "boolean",
  date: "timestamptz",
  json: "jsonb",
} as const;

/** The advisory lock migrations hold on PostgreSQL. */
const MIGRATION_LOCK_KEY = sql.raw("7236823510451917397");

export const postgresProfile: DialectProfile = {
  name: "postgres",
  errors: postgresErrors,
  physicalTypes: {
    text: ["text", "varchar"],
    integer: ["int8", "int4", "int2"],
    number: ["float8", "float4", "numeric"],
    boolean: ["bool"],
    date: ["timestamptz", "timestamp"],
    json: ["jsonb", "json"],
  },
  returning: true,
  rowLocks: true,
  shareLock: sql`for share`,
  jsonNestingLimit: undefined,
  alterColumns: "alter column",
  dropIndexOnTable: false,
  boundedIndexedText: false,
  booleansAsIntegers: false,
  datesAsText: false,
  datesBoundAsText: true,
  readsAsWritten: false,
  textEqualityIgnoresCase: false,
  searchIndex: "pg_trgm",
  textIndex: undefined,
  rowValueKeyset: true,
  // PostgreSQL sorts nulls last ascending; crudkit sorts them first, as SQLite and MySQL do.
  explicitNullsOrder: true,
  lateRowLookup: true,
  literalLimit: true,
  columnType: (type) => TYPES[type],
  untimedMigration: { scope: "transaction", statement: sql`set local statement_timeout = 0` },
  dateLiteral: (date) => date.toISOString(),
  tableOptions: undefined,
  currentTime: sql`now()`,
  likeFolds: "case",
  likeMatch: (column, pattern) => sql`${column} ilike ${pattern} escape ${sql.lit("\\")}`,
  equalsExactly: (column, value) => sql`${sql.ref(column)} = ${value}`,
  // -1 for a table never analyzed: read as "no estimate".
  tableEstimate: (table) =>
    sql`select reltuples as total from pg_class where oid = to_regclass(${`"${table.replace(/"/g, '""')}"`})`,
  plannedRows: {
    prefix: "explain (format json) ",
    read(rows) {
      const plan = rows[0]?.["QUERY PLAN"] as [{ Plan: { "Plan Rows": number } }] | string | undefined;
      const parsed = typeof plan === "string" ? JSON.parse(plan) : plan;
      return Number(parsed?.[0]?.Plan?.["Plan Rows"]) || undefined;
    },
  },
  indexes: () => sql`select indexname as name, tablename as "tableName" from pg_indexes
    where schemaname = current_schema()`,
  foreignKeys: () => sql`select c.conname as name, t.relname as "tableName", a.attname as "column",
    r.relname as target,
    case c.confdeltype when 'c' then 'cascade' when 'n' then 'set null' when 'r' then 'restrict'
      else 'no action' end as "onDelete"
    from pg_constraint c
    join pg_class t on t.oid = c.conrelid
    join pg_namespace n on n.oid = t.relnamespace
    join pg_class r on r.oid = c.confrelid
    join pg_attribute a on a.attrelid = c.conrelid and a.attnum = c.conkey[1]
    where c.contype = 'f' and n.nspname = current_schema()`,
  foreignKeyChanges: "alter table",
  dropForeignKeyClause: "constraint",
  foreignKeyPause: undefined,
  // One key for every crudkit app on the database, fixed.
  migrationLock: {
    kind: "session",
    tryLock: sql<{
      ok: unknown;
    }>`select case when pg_try_advisory_lock(${MIGRATION_LOCK_KEY}) then 1 else 0 end as ok`,
    unlock: sql`select pg_advisory_unlock(${MIGRATION_LOCK_KEY})`,
  },
};
