// Applies a plan: every statement, then its record, in one transaction where the engine allows
// DDL in transactions (PostgreSQL, SQLite). MySQL commits each DDL statement by itself.

import { type Kysely, sql } from "kysely";
import type { Database } from "../database.ts";
import { readLiveSchema } from "./live-schema.ts";
import type { MigrationPlan, MigrationStep } from "./plan.ts";
import { ensureMigrationsTable, migrationName, recordMigration } from "./record.ts";

export async function applyPlan(
  db: Database,
  plan: MigrationPlan,
  steps: readonly MigrationStep[],
  name = migrationName(),
): Promise<void> {
  if (steps.length === 0) return;
  const statements = steps.flatMap((s) => s.statements);
  const live = await readLiveSchema(db);
  const run = async (executor: Kysely<any>) => {
    await ensureMigrationsTable(db, executor, live);
    for (const statement of statements) await sql.raw(statement).execute(executor);
    await recordMigration(db, executor, { name, statements, tables: plan.tables });
  };
  if (db.dialect === "mysql") await run(db.kysely);
  else await db.kysely.transaction().execute(run);
}
