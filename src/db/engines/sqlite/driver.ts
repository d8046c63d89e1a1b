// Embedded SQLite through better-sqlite3: WAL, a busy timeout, and prepared statements reused.
// The driver is loaded when the database is first used, as pg and mysql2 are: an app on
// PostgreSQL or MySQL starts even where better-sqlite3's native addon failed to build.

import { mkdirSync } from "node:fs";
import { dirname, resolve } from "node:path";
import type BetterSqlite3 from "better-sqlite3";
import { type Dialect, Kysely, SqliteDialect } from "kysely";
import { sqliteUrl } from "../../database-url.ts";
import { type DirectPath, registerDirectPath } from "../../direct-path.ts";
import { driverMissing } from "../../driver-missing.ts";

/** Settings shared with the benchmark's reference server, so both run SQLite the same way. */
export const SQLITE_PRAGMAS = [
  "journal_mode = WAL",
  "synchronous = NORMAL",
  "busy_timeout = 5000",
  "foreign_keys = ON",
];

const STATEMENT_CACHE_LIMIT = 500;

/** `file:./data/app.db`, `./data/app.db` or `:memory:` → a path better-sqlite3 accepts. */
export function sqlitePath(url: string): string {
  sqliteUrl(url);
  const path = url.startsWith("file:") ? url.slice("file:".length) : url;
  if (path === "") throw new Error("The SQLite url is empty.");
  return path === ":memory:" ? path : resolve(path);
}

export function openSqlite(
  url: string,
  /** Wraps the dialect (observed-statements.ts times and traces each statement). */
  wrap: (dialect: Dialect) => Dialect = (dialect) => dialect,
): Kysely<any> {
  const path = sqlitePath(url);
  const kysely: Kysely<any> = new Kysely<any>({
    dialect: wrap(
      new SqliteDialect({
        database: async () => {
          const loaded = await import("better-sqlite3").catch((error: unknown) =>
            driverMissing("better-sqlite3", "sqlite", error),
          );
          const Database = (loaded.default ?? loaded) as typeof BetterSqlite3;
          if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true });
          const db = new Database(path);
          for (const pragma of SQLITE_PRAGMAS) db.pragma(pragma);
          const cached = cachedStatements(db);
          // Outside a transaction, a statement may run straight away while none is open: better-sqlite3
          // runs it synchronously, so nothing can interleave with it. Another request's open
          // transaction (waiting on a hook) must finish first, so then it queues through Kysely as
          // usual. Inside a transaction it is safe: the one connection is the transaction's until it ends.
          const statements: DirectPath = {
            run(sql, parameters) {
              const statement = cached.prepare(sql);
              if (statement.reader) return { rows: statement.all(parameters) as Record<string, unknown>[] };
              return { rows: [], numAffectedRows: BigInt(statement.run(parameters).changes) };
            },
            first(sql, parameters) {
              return cached.prepare(sql).get(parameters) as Record<string, unknown> | undefined;
            },
          };
          registerDirectPath(kysely, (on) =>
            on.isTransaction || (db.open && !db.inTransaction) ? statements : undefined,
          );
          return cached as never;
        },
      }),
    ),
  });
  return kysely;
}

/** Kysely prepares every statement it runs; queries repeat, so the prepared ones are kept. */
function cachedStatements(db: BetterSqlite3.Database) {
  const statements = new Map<string, BetterSqlite3.Statement>();
  return {
    prepare(sql: string) {
      let statement = statements.get(sql);
      if (!statement) {
        statement = db.prepare(sql);
        if (statements.size < STATEMENT_CACHE_LIMIT) statements.set(sql, statement);
      }
      return statement;
    },
    close() {
      statements.clear();
      db.close();
    },
  };
}
