// The migration lock: planning and applying a migration is one section that two `crudkit migrate`
// runs, or several instances starting with `autoMigrate`, never enter at once. Without it they plan
// the same steps from the same schema and both apply them; on MySQL, where each DDL statement
// commits by itself, the loser leaves a half-applied migration behind.
//
// PostgreSQL and MySQL hold a lock of the session (an advisory lock, GET_LOCK) on one pinned
// connection while the work runs on others. SQLite has no such lock: the work runs inside one
// `BEGIN IMMEDIATE` transaction, which other connections to the file wait for.

import { type Kysely, sql } from "kysely";
import type { Database } from "../database.ts";
import { MigrationRefused } from "./migration-step.ts";

/** The database a locked section plans and applies with. */
export interface LockedDatabase extends Database {
  /** The section is itself the write transaction (SQLite): apply in it, open none of your own. */
  readonly inLockTransaction: boolean;
}

/** How long a migration waits for another one before it gives up. */
const WAIT_MS = 60_000;

/**
 * Runs `work` holding the database's migration lock: plan inside it, so a second runner sees
 * what the first one applied.
 */
export async function withMigrationLock<T>(
  db: Database,
  work: (locked: LockedDatabase) => Promise<T>,
): Promise<T> {
  const lock = db.profile.migrationLock;
  if (lock.kind === "immediate transaction") return inImmediateTransaction(db, lock.begin, work);
  // Behind a pooler in transaction mode the lock's session is a direct connection (`directUrl`):
  // the pooler would hand each of its statements to another server connection.
  return (db.session ?? db.kysely).connection().execute(async (session) => {
    // Asked again every 100 ms: each attempt returns at once, so the statement timeout never
    // cuts the wait short, and the wait is a minute on every engine.
    for (const started = Date.now(); ; ) {
      const { rows } = await lock.tryLock.execute(session);
      if (Number(rows[0]?.ok) === 1) break;
      if (Date.now() - started > WAIT_MS)
        throw new MigrationRefused(
          "Another migration held the migration lock for a minute; nothing was applied. Try again when it is done.",
        );
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    try {
      return await work({ ...db, inLockTransaction: false });
    } finally {
      await lock.unlock.execute(session);
    }
  });
}

async function inImmediateTransaction<T>(
  db: Database,
  begin: ReturnType<typeof sql>,
  work: (locked: LockedDatabase) => Promise<T>,
): Promise<T> {
  const pause = db.profile.foreignKeyPause;
  return db.kysely.connection().execute(async (connection) => {
    // Outside the transaction: SQLite ignores the pragma inside one.
    if (pause) await pause.off.execute(connection);
    try {
      await beginWithoutBlocking(connection, begin);
      try {
        const result = await work({ ...db, kysely: connection, inLockTransaction: true });
        await sql`commit`.execute(connection);
        return result;
      } catch (error) {
        await sql`rollback`.execute(connection).catch(() => {});
        throw error;
      }
    } finally {
      if (pause) await pause.on.execute(connection);
    }
  });
}

/**
 * BEGIN IMMEDIATE, retried while another connection writes. better-sqlite3 waits for a lock
 * synchronously (busy_timeout), which would stop this process's event loop, and with it a second
 * app in the same process that holds the lock: so the wait here is asynchronous.
 */
async function beginWithoutBlocking(connection: Kysely<any>, begin: ReturnType<typeof sql>): Promise<void> {
  const { rows } = await sql<{ timeout: number }>`pragma busy_timeout`.execute(connection);
  const timeout = Number(rows[0]?.timeout ?? 5000);
  await sql`pragma busy_timeout = 0`.execute(connection);
  try {
    for (const started = Date.now(); ; ) {
      try {
        await begin.execute(connection);
        return;
      } catch (error) {
        if ((error as { code?: unknown }).code !== "SQLITE_BUSY" || Date.now() - started > WAIT_MS)
          throw error;
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    }
  } finally {
    await sql.raw(`pragma busy_timeout = ${timeout}`).execute(connection);
  }
}
