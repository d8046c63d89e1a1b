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
  // Building an index on a big table may take longer than requests may: no statement timeout here.
  if (db.dialect === "mysql") {
    await db.kysely.connection().execute(async (connection) => {
      const previous = await sessionTimeout(connection);
      if (previous !== undefined) await sql`set session max_statement_time = 0`.execute(connection);
      try {
        await run(connection);
      } finally {
        if (previous !== undefined)
          await sql`set session max_statement_time = ${sql.lit(previous)}`.execute(connection);
      }
    });
  } else {
    await db.kysely.transaction().execute(async (trx) => {
      if (db.dialect === "postgres") await sql`set local statement_timeout = 0`.execute(trx);
      await run(trx);
    });
  }
}

/** MariaDB's statement timeout of this connection; undefined on MySQL, which has none for DDL. */
async function sessionTimeout(connection: Kysely<any>): Promise<number | undefined> {
  try {
    const { rows } = await sql<{ t: unknown }>`select @@session.max_statement_time as t`.execute(connection);
    return Number(rows[0]?.t);
  } catch {
    return undefined;
  }
}
