// The migrations table: each applied migration's name, checksum, time, and the tables it knew.

import { randomBytes } from "node:crypto";
import { type Kysely, sql } from "kysely";
import { dateToColumn } from "../column-values.ts";
import type { Database } from "../database.ts";
import { createTableStatements } from "./ddl.ts";
import { checksumOf } from "./files.ts";
import type { LiveSchema } from "./live-schema.ts";

export const MIGRATIONS_TABLE = "crudkit_migrations";

const table = {
  name: MIGRATIONS_TABLE,
  columns: {
    name: { type: "text", primaryKey: true, notNull: true },
    checksum: { type: "text", notNull: true },
    applied_at: { type: "date", notNull: true },
    tables: { type: "json", notNull: true },
  },
} as const;

export async function ensureMigrationsTable(
  db: Database,
  executor: Kysely<any>,
  live: LiveSchema,
): Promise<void> {
  if (live.has(MIGRATIONS_TABLE)) return;
  for (const statement of createTableStatements(db, table)) await sql.raw(statement).execute(executor);
}

export async function recordMigration(
  db: Database,
  executor: Kysely<any>,
  migration: { name: string; statements: string[]; tables: string[] },
): Promise<void> {
  const checksum = checksumOf(migration.statements);
  const appliedAt = new Date();
  await executor
    .insertInto(MIGRATIONS_TABLE)
    .values({
      name: migration.name,
      checksum,
      applied_at: dateToColumn(appliedAt, db.profile),
      tables: JSON.stringify(migration.tables),
    })
    .execute();
}

/** Each applied migration's checksum, by name (none before the first migration). */
export async function readApplied(db: Database): Promise<Map<string, string>> {
  const live = await db.kysely.introspection.getTables();
  if (!live.some((t) => t.name === MIGRATIONS_TABLE)) return new Map();
  const rows = await db.kysely
    .selectFrom(MIGRATIONS_TABLE)
    .select(["name", "checksum"])
    .orderBy("name")
    .execute();
  return new Map(rows.map((r) => [String(r.name), String(r.checksum)]));
}

/** Every table any applied migration created or knew: the only tables a plan may propose to drop. */
export async function readOwnedTables(db: Database, live: LiveSchema): Promise<Set<string>> {
  const owned = new Set<string>();
  if (!live.has(MIGRATIONS_TABLE)) return owned;
  const rows = await db.kysely.selectFrom(MIGRATIONS_TABLE).select("tables").execute();
  for (const row of rows) for (const name of JSON.parse(String(row.tables)) as string[]) owned.add(name);
  return owned;
}

/** `20261121_203012345_3fa9`: sortable by time, unique even within one millisecond. */
export function migrationName(now = new Date()): string {
  const stamp = now
    .toISOString()
    .replace(/[-:.Z]/g, "")
    .replace("T", "_");
  return `${stamp}_${randomBytes(2).toString("hex")}`;
}
