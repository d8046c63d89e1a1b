// Embedded SQLite through better-sqlite3: WAL, a busy timeout, and prepared statements reused.

import { mkdirSync } from "node:fs";
import { dirname, resolve } from "node:path";
import Database from "better-sqlite3";
import { Kysely, SqliteDialect } from "kysely";
import { sqliteUrl } from "./database-url.ts";

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

export function openSqlite(url: string): Kysely<any> {
  const path = sqlitePath(url);
  if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true });
  const db = new Database(path);
  for (const pragma of SQLITE_PRAGMAS) db.pragma(pragma);
  // Kysely prepares every statement it runs; queries repeat, so the prepared ones are kept.
  const statements = new Map<string, Database.Statement>();
  const cached = {
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
  const kysely = new Kysely<any>({ dialect: new SqliteDialect({ database: cached as never }) });
  direct.set(kysely.getExecutor().adapter, {
    idle: () => db.open && !db.inTransaction,
    run(sql, parameters) {
      const statement = cached.prepare(sql);
      if (statement.reader) return { rows: statement.all(parameters) as Record<string, unknown>[] };
      return { rows: [], numAffectedRows: BigInt(statement.run(parameters).changes) };
    },
    first(sql, parameters) {
      return cached.prepare(sql).get(parameters) as Record<string, unknown> | undefined;
    },
  });
  return kysely;
}

export interface DirectSqlite {
  /** No transaction is open on the connection (and it is open). */
  idle(): boolean;
  run(
    sql: string,
    parameters: readonly unknown[],
  ): { rows: Record<string, unknown>[]; numAffectedRows?: bigint };
  /** The first row a reading statement returns. */
  first(sql: string, parameters: readonly unknown[]): Record<string, unknown> | undefined;
}

/** Keyed by the dialect adapter, which a Kysely instance shares with its transactions. */
const direct = new WeakMap<object, DirectSqlite>();

/**
 * The connection under a SQLite Kysely instance opened here, when a statement may run on it
 * straight away, without Kysely's connection lock. better-sqlite3 runs a statement synchronously,
 * so nothing can interleave with it. Outside a transaction that is safe while none is open;
 * another request's open transaction (waiting on a hook) must finish first, so then the statement
 * queues through Kysely as usual. Inside a transaction it is safe: the one connection is the
 * transaction's until it ends.
 */
export function directSqlite(db: Kysely<any>): DirectSqlite | undefined {
  const sqlite = direct.get(db.getExecutor().adapter);
  return sqlite && (db.isTransaction || sqlite.idle()) ? sqlite : undefined;
}
