// Foreign keys in a plan: the keys the desired tables declare against the ones the database has.
// PostgreSQL and MySQL add and drop them with ALTER TABLE, after every table exists (so tables may
// point at each other in any order); SQLite declares them with the table and rebuilds it to change
// one. Rows that would break a new key refuse the migration, naming the table and the field.

import { sql } from "kysely";
import type { Database } from "../database.ts";
import { type ForeignKey, foreignKeyName, type TableDefinition } from "../table-definition.ts";
import type { LiveSchema } from "./live-schema.ts";
import { MigrationRefused, type MigrationStep } from "./migration-step.ts";

export interface LiveForeignKey {
  /** The constraint's name (none on SQLite). */
  name: string | null;
  target: string;
  onDelete: string;
}

/** Per table, per column: the foreign key the database has. */
export type LiveForeignKeys = Map<string, Map<string, LiveForeignKey>>;

export async function readForeignKeys(db: Database): Promise<LiveForeignKeys> {
  const byTable: LiveForeignKeys = new Map();
  for (const row of (await db.profile.foreignKeys().execute(db.kysely)).rows) {
    if (!byTable.has(row.tableName)) byTable.set(row.tableName, new Map());
    byTable.get(row.tableName)!.set(row.column, {
      name: row.name,
      target: row.target,
      onDelete: row.onDelete.toLowerCase(),
    });
  }
  return byTable;
}

/** The live key matches the declared one: same target and delete rule (and crudkit's name, where keys have names). */
export function sameForeignKey(
  table: string,
  column: string,
  wanted: ForeignKey,
  live: LiveForeignKey,
): boolean {
  const named = live.name === null || live.name === foreignKeyName(table, column);
  return named && live.target === wanted.table && live.onDelete === wanted.onDelete;
}

/** Columns whose foreign key differs from the declared one (added, changed or gone). */
export function changedForeignKeys(
  table: TableDefinition,
  live: ReadonlyMap<string, LiveForeignKey>,
): string[] {
  const changed: string[] = [];
  for (const [column, definition] of Object.entries(table.columns)) {
    const existing = live.get(column);
    if (definition.references) {
      if (!existing || !sameForeignKey(table.name, column, definition.references, existing))
        changed.push(column);
    } else if (existing && isCrudkitKey(table.name, column, existing)) changed.push(column);
  }
  return changed;
}

/**
 * ALTER TABLE steps (PostgreSQL, MySQL): `drops` removes the keys of crudkit's naming that
 * changed or left the definition, and runs first (MySQL keeps an index while a key needs it);
 * `adds` adds the declared keys missing, and runs last, once every table exists.
 */
export async function foreignKeySteps(
  db: Database,
  tables: readonly TableDefinition[],
  live: LiveForeignKeys,
  schema: LiveSchema,
): Promise<{ drops: MigrationStep[]; adds: MigrationStep[] }> {
  const existingTables = new Set(schema.keys());
  const drops: MigrationStep[] = [];
  const adds: MigrationStep[] = [];
  for (const table of tables) {
    const current = live.get(table.name) ?? new Map<string, LiveForeignKey>();
    for (const column of changedForeignKeys(table, current)) {
      const existing = current.get(column);
      const wanted = table.columns[column]!.references;
      if (existing?.name)
        drops.push({
          description: `drop foreign key ${table.name}.${column} → ${existing.target}`,
          destructive: false,
          statements: [dropStatement(db, table.name, existing.name)],
        });
      if (!wanted) continue;
      // A table or a column added by this plan holds no value to check (the key is added after it).
      if (schema.get(table.name)?.columns.has(column))
        await refuseOrphans(db, table.name, column, wanted, existingTables);
      adds.push({
        description: `add foreign key ${table.name}.${column} → ${wanted.table} (on delete ${wanted.onDelete})`,
        destructive: false,
        statements: [addStatement(db, table.name, column, wanted)],
      });
    }
  }
  return { drops, adds };
}

/**
 * A key cannot be added over rows that point at nothing: say so, and where. A target table that
 * does not exist yet holds no row, so every value is such a row.
 */
export async function refuseOrphans(
  db: Database,
  table: string,
  column: string,
  key: ForeignKey,
  existingTables: ReadonlySet<string>,
): Promise<void> {
  const ref = sql.ref(`${table}.${column}`);
  let query = db.kysely
    .selectFrom(table)
    .select(sql<number>`count(*)`.as("orphans"))
    .where(ref, "is not", null);
  if (existingTables.has(key.table))
    query = query.where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom(`${key.table} as referenced`).select(sql`1`.as("one")).where("referenced.id", "=", ref),
        ),
      ),
    );
  const orphans = Number((await query.executeTakeFirst())?.orphans ?? 0);
  if (orphans > 0) {
    throw new MigrationRefused(
      `Cannot add the reference ${table}.${column} → ${key.table}: in ${orphans} row(s) of "${table}", ${column} ` +
        `names no existing "${key.table}". Fix or clear those values, then migrate again.`,
    );
  }
}

function addStatement(db: Database, table: string, column: string, key: ForeignKey): string {
  return db.kysely.schema
    .alterTable(table)
    .addForeignKeyConstraint(foreignKeyName(table, column), [column], key.table, ["id"], (c) =>
      c.onDelete(key.onDelete),
    )
    .compile().sql;
}

function dropStatement(db: Database, table: string, name: string): string {
  if (db.profile.dropForeignKeyClause === "foreign key")
    return sql`alter table ${sql.table(table)} drop foreign key ${sql.ref(name)}`.compile(db.kysely).sql;
  return db.kysely.schema.alterTable(table).dropConstraint(name).compile().sql;
}

/** A key crudkit made: its naming, or any key on SQLite (whose keys have no names). */
function isCrudkitKey(table: string, column: string, key: LiveForeignKey): boolean {
  return key.name === null || key.name === foreignKeyName(table, column);
}
