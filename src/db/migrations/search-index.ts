// Search indexes: what turns `?search=` (a case-insensitive substring match over the searchable
// columns) from a scan into an index lookup, each database its own way:
// - SQLite: an FTS5 table with the trigram tokenizer, keyed by the table's rowid and kept in sync by
//   triggers, so every write updates it in its own statement, inside the writing transaction;
// - PostgreSQL: a pg_trgm GIN index per searchable column, which `ilike '%term%'` uses as is;
// - MySQL/MariaDB: none. Their FULLTEXT indexes match words, not substrings, so search scans
//   (bounded by the statement timeout).

import { sql } from "kysely";
import type { Database } from "../database.ts";
import { type IndexDefinition, indexName, type TableDefinition } from "../table-definition.ts";
import type { LiveSchema } from "./live-schema.ts";
import type { MigrationStep } from "./migration-step.ts";

/** The SQLite FTS5 table that indexes `table`'s searchable columns. */
export function searchTableName(table: string): string {
  return `${table}__search`;
}

const TRIGGERS = ["insert", "delete", "update"] as const;
const triggerName = (table: string, event: (typeof TRIGGERS)[number]) => `${searchTableName(table)}_${event}`;

/** PostgreSQL: the table's indexes plus one trigram index per searchable column. */
export function withSearchIndexes(db: Database, table: TableDefinition): TableDefinition {
  if (db.profile.searchIndex !== "pg_trgm" || !table.search?.length) return table;
  const trigram: IndexDefinition[] = table.search.map((column) => ({
    name: indexName(table.name, [column], false, "trgm_idx"),
    columns: [column],
    method: "trigram",
  }));
  return { ...table, indexes: [...(table.indexes ?? []), ...trigram] };
}

/**
 * PostgreSQL: `create extension pg_trgm` when a table needs it and the database lacks it. A role
 * that may not create it gets a message saying who can, instead of the server's bare error.
 */
export async function trigramExtensionSteps(
  db: Database,
  tables: readonly TableDefinition[],
): Promise<MigrationStep[]> {
  if (db.profile.searchIndex !== "pg_trgm" || !tables.some((t) => t.search?.length)) return [];
  const { rows } = await sql<{ installed: boolean; available: boolean; allowed: boolean }>`
    select exists (select 1 from pg_extension where extname = 'pg_trgm') as installed,
      exists (select 1 from pg_available_extensions where name = 'pg_trgm') as available,
      has_database_privilege(current_user, current_database(), 'CREATE') as allowed`.execute(db.kysely);
  const { installed, available, allowed } = rows[0]!;
  if (installed) return [];
  if (!available || !allowed) {
    throw new SearchIndexUnavailable(
      !available
        ? 'Search indexes on PostgreSQL need the "pg_trgm" extension, which this server does not have. ' +
            "Install PostgreSQL's contrib package (postgresql-contrib) on the server, then migrate again."
        : 'Search indexes on PostgreSQL need the "pg_trgm" extension, and this role may not create it ' +
            "(it lacks the CREATE privilege on the database). Ask the database owner to run " +
            '"create extension pg_trgm;" in this database, then migrate again.',
    );
  }
  return [
    {
      description: "create extension pg_trgm (for search indexes)",
      destructive: false,
      statements: ["create extension if not exists pg_trgm"],
    },
  ];
}

/** A search index the database cannot build, with what to do about it. */
export class SearchIndexUnavailable extends Error {
  constructor(message: string) {
    super(message);
    this.name = "SearchIndexUnavailable";
  }
}

/**
 * SQLite: the FTS5 table and triggers `table` needs, created, rebuilt when its columns changed or
 * its table was rebuilt (rowids renumbered), dropped when nothing is searchable any more. Creating
 * it fills it from the existing rows.
 */
export async function sqliteSearchSteps(
  db: Database,
  table: TableDefinition,
  live: LiveSchema,
  rebuilt: boolean,
): Promise<MigrationStep[]> {
  if (db.profile.searchIndex !== "fts5 trigram") return [];
  const name = searchTableName(table.name);
  const columns = table.search ?? [];
  const existing = live.get(name);
  const current = existing ? [...existing.columns.keys()] : [];
  const triggers = existing ? await liveTriggers(db, table.name) : 0;
  const same =
    existing && current.join(",") === columns.join(",") && triggers === TRIGGERS.length && !rebuilt;
  if (same || (!existing && columns.length === 0)) return [];
  const steps: MigrationStep[] = [];
  if (existing) {
    steps.push({
      description: `drop search index ${name}`,
      destructive: false,
      statements: dropSqliteSearch(table.name),
    });
  }
  if (columns.length > 0) {
    steps.push({
      description: `create search index ${name} on ${table.name} (${columns.join(", ")}) and fill it`,
      destructive: false,
      statements: createSqliteSearch(db, table.name, columns),
    });
  }
  return steps;
}

/** The search index of a table being dropped goes with it. */
export function dropSearchStatements(db: Database, table: string, live: LiveSchema): string[] {
  return db.profile.searchIndex === "fts5 trigram" && live.has(searchTableName(table))
    ? dropSqliteSearch(table)
    : [];
}

async function liveTriggers(db: Database, table: string): Promise<number> {
  const names = TRIGGERS.map((event) => triggerName(table, event));
  const { rows } = await sql<{ n: number }>`select count(*) as n from sqlite_master
    where type = 'trigger' and name in (${sql.join(names)})`.execute(db.kysely);
  return Number(rows[0]?.n ?? 0);
}

function dropSqliteSearch(table: string): string[] {
  const quote = (name: string) => `"${name.replaceAll('"', '""')}"`;
  return [
    ...TRIGGERS.map((event) => `drop trigger if exists ${quote(triggerName(table, event))}`),
    `drop table if exists ${quote(searchTableName(table))}`,
  ];
}

function createSqliteSearch(db: Database, table: string, columns: readonly string[]): string[] {
  const compile = (query: ReturnType<typeof sql>) => query.compile(db.kysely).sql;
  const search = sql.table(searchTableName(table));
  const refs = sql.join(columns.map((c) => sql.ref(c)));
  const values = (row: "new" | "old") => sql.join(columns.map((c) => sql`${sql.raw(row)}.${sql.ref(c)}`));
  const add = sql`insert into ${search} (rowid, ${refs}) values (new.rowid, ${values("new")});`;
  const remove = sql`delete from ${search} where rowid = old.rowid;`;
  const trigger = (
    event: (typeof TRIGGERS)[number],
    when: ReturnType<typeof sql>,
    body: ReturnType<typeof sql>,
  ) =>
    compile(
      sql`create trigger ${sql.id(triggerName(table, event))} after ${when} on ${sql.table(table)} begin ${body} end`,
    );
  return [
    // Contentless: the index only, no second copy of the text; rows are deleted by rowid.
    compile(
      sql`create virtual table ${search} using fts5(${refs}, content='', contentless_delete=1, tokenize='trigram')`,
    ),
    trigger("insert", sql`insert`, add),
    trigger("delete", sql`delete`, remove),
    trigger("update", sql`update of ${refs}`, sql`${remove} ${add}`),
    compile(sql`insert into ${search} (rowid, ${refs}) select rowid, ${refs} from ${sql.table(table)}`),
  ];
}
