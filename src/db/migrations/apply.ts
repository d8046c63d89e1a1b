// Applies a plan: every statement, then its record, in one transaction where the engine allows
// DDL in transactions (PostgreSQL, SQLite). MySQL commits each DDL statement by itself. Only ever
// under the migration lock (`withMigrationLock`), which is why the database is a locked one.

import { type Kysely, type RawBuilder, sql } from "kysely";
import { readLiveSchema } from "./live-schema.ts";
import type { LockedDatabase } from "./lock.ts";
import { type MigrationPlan, MigrationRefused, type MigrationStep } from "./migration-step.ts";
import { ensureMigrationsTable, migrationName, recordMigration } from "./record.ts";

export async function applyPlan(
  db: LockedDatabase,
  plan: MigrationPlan,
  steps: readonly MigrationStep[],
  name = migrationName(),
): Promise<void> {
  if (steps.length === 0) return;
  await applyMigration(db, { name, statements: steps.flatMap((s) => s.statements), tables: plan.tables });
}

/** Applies statements and records them under `name` (a plan, or a migration file as reviewed). */
export async function applyMigration(
  db: LockedDatabase,
  migration: { name: string; statements: readonly string[]; tables: readonly string[] },
): Promise<void> {
  const { name, statements, tables } = migration;
  const live = await readLiveSchema(db);
  const run = async (executor: Kysely<any>) => {
    await ensureMigrationsTable(db, executor, live);
    for (const statement of statements) await sql.raw(statement).execute(executor);
    await recordMigration(db, executor, { name, statements: [...statements], tables: [...tables] });
  };
  // Building an index on a big table may take longer than requests may: no statement timeout here.
  const untimed = db.profile.untimedMigration;
  const pause = db.profile.foreignKeyPause;
  if (db.inLockTransaction) {
    // SQLite: the lock is this transaction, foreign keys already paused around it.
    await run(db.kysely);
    if (pause) await refuseBrokenKeys(db.kysely, pause.check);
  } else if (untimed?.scope === "session") {
    // DDL commits by itself here (MySQL): one connection, its session timeout lifted, then put back.
    await db.kysely.connection().execute(async (connection) => {
      const previous = await sessionTimeout(connection, untimed.read);
      if (previous !== undefined) await untimed.set(0).execute(connection);
      try {
        await run(connection);
      } finally {
        if (previous !== undefined) await untimed.set(previous).execute(connection);
      }
    });
  } else {
    // Outside the transaction: SQLite ignores the pragma inside one.
    if (pause) await pause.off.execute(db.kysely);
    try {
      await db.kysely.transaction().execute(async (trx) => {
        if (untimed) await untimed.statement.execute(trx);
        await run(trx);
        if (pause) await refuseBrokenKeys(trx, pause.check);
      });
    } finally {
      if (pause) await pause.on.execute(db.kysely);
    }
  }
}

/** Refuses a migration that would leave rows pointing at records that do not exist. */
async function refuseBrokenKeys(
  executor: Kysely<any>,
  check: RawBuilder<Record<string, unknown>>,
): Promise<void> {
  const broken = (await check.execute(executor)).rows;
  if (broken.length > 0)
    throw new MigrationRefused(
      `The migration would leave ${broken.length} row(s) pointing at records that do not exist (first: table "${String(broken[0]!.table)}"); nothing was changed.`,
    );
}

/** The session's statement timeout; undefined where there is none to lift (MySQL, for DDL). */
async function sessionTimeout(
  connection: Kysely<any>,
  read: RawBuilder<{ t: unknown }>,
): Promise<number | undefined> {
  try {
    const { rows } = await read.execute(connection);
    return Number(rows[0]?.t);
  } catch {
    return undefined;
  }
}
