// The databases the conformance suites run on: SQLite always, PostgreSQL and MariaDB when
// scripts/services.sh has started them. Each app gets a fresh database of its own.

import { randomBytes } from "node:crypto";
import type { DatabaseOptions } from "crudkit-api";
import { type RunningServer, type Servable, serve } from "crudkit-api/node";
import { Kysely, MysqlDialect, PostgresDialect, SqliteDialect } from "kysely";
import { afterAll, beforeAll, describe, it } from "vitest";
import { tempDatabaseUrl } from "./helpers.ts";

export type DialectName = "sqlite" | "postgres" | "mysql";

export interface TestDialect {
  name: DialectName;
  /** How its suites are named, when not by `name` alone. */
  label?: string;
  /** Why the dialect cannot run here, or undefined when it can. */
  missing: string | undefined;
  /** A new, empty database. */
  fresh(): Promise<DatabaseOptions & { url: string }>;
}

const created: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const drop of created.splice(0)) await drop().catch(() => {});
});

const freshName = () => `ck_${randomBytes(6).toString("hex")}`;

export const DIALECTS: TestDialect[] = [
  { name: "sqlite", missing: undefined, fresh: async () => ({ provider: "sqlite", url: tempDatabaseUrl() }) },
  {
    name: "postgres",
    missing: process.env.CRUDKIT_TEST_POSTGRES_URL
      ? undefined
      : "CRUDKIT_TEST_POSTGRES_URL is not set (source scripts/services.sh)",
    fresh: () => freshPostgres(),
  },
  {
    // The same server through PgBouncer in transaction mode (issue 37): every suite on it too,
    // with the direct URL for what needs a session.
    name: "postgres",
    label: "postgres via PgBouncer",
    missing:
      process.env.CRUDKIT_TEST_PGBOUNCER_URL && process.env.CRUDKIT_TEST_POSTGRES_URL
        ? undefined
        : "CRUDKIT_TEST_PGBOUNCER_URL is not set (source scripts/services.sh)",
    async fresh() {
      const direct = await freshPostgres();
      const database = new URL(direct.url).pathname.slice(1);
      return {
        provider: "postgres",
        url: withDatabase(process.env.CRUDKIT_TEST_PGBOUNCER_URL!, database),
        directUrl: direct.url,
      };
    },
  },
  {
    name: "mysql",
    missing: process.env.CRUDKIT_TEST_MYSQL_URL
      ? undefined
      : "CRUDKIT_TEST_MYSQL_URL is not set (source scripts/services.sh)",
    async fresh() {
      const admin = process.env.CRUDKIT_TEST_MYSQL_URL!;
      const name = freshName();
      const mysql = await import("mysql2/promise");
      const connection = await mysql.createConnection(admin);
      await connection.query(`create database ${name}`);
      await connection.end();
      created.push(async () => {
        const dropper = await mysql.createConnection(admin);
        await dropper.query(`drop database if exists ${name}`);
        await dropper.end();
      });
      return { provider: "mysql", url: withDatabase(admin, name) };
    },
  },
];

/** A new, empty database on the PostgreSQL server, dropped after the file's suites. */
async function freshPostgres(): Promise<{ provider: "postgres"; url: string }> {
  const admin = process.env.CRUDKIT_TEST_POSTGRES_URL!;
  const name = freshName();
  const { default: pg } = await import("pg");
  const client = new pg.Client(admin);
  await client.connect();
  await client.query(`create database ${name}`);
  await client.end();
  created.push(async () => {
    const dropper = new pg.Client(admin);
    await dropper.connect();
    await dropper.query(`drop database if exists ${name} with (force)`);
    await dropper.end();
  });
  return { provider: "postgres", url: withDatabase(admin, name) };
}

/** A Kysely instance that records every statement it runs, on a fresh database of the dialect. */
export async function countingKysely(
  name: DialectName,
  database: DatabaseOptions & { url: string },
  queries: string[],
): Promise<Kysely<any>> {
  const log = (event: { level: string; query: { sql: string } }) => {
    if (event.level === "query") queries.push(event.query.sql);
  };
  if (name === "sqlite") {
    const { default: Database } = await import("better-sqlite3");
    const sqlite = new Database(database.url.slice("file:".length));
    sqlite.pragma("foreign_keys = ON");
    return new Kysely({ dialect: new SqliteDialect({ database: sqlite }), log });
  }
  if (name === "postgres") {
    const { default: pg } = await import("pg");
    return new Kysely({
      dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: database.url }) }),
      log,
    });
  }
  const mysql = await import("mysql2");
  return new Kysely({ dialect: new MysqlDialect({ pool: mysql.createPool(database.url) }), log });
}

function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

/**
 * Runs a suite once per dialect. Under CI a dialect whose database is missing fails; locally the
 * suite is skipped and its name says why.
 */
export function forEachDialect(body: (dialect: TestDialect) => void, only?: readonly DialectName[]): void {
  for (const dialect of DIALECTS) {
    if (only && !only.includes(dialect.name)) continue;
    if (!dialect.missing) {
      describe(dialect.label ?? dialect.name, () => body(dialect));
    } else if (process.env.CI) {
      describe(dialect.label ?? dialect.name, () => {
        it("has its database (under CI a missing database is a failure)", () => {
          throw new Error(dialect.missing);
        });
      });
    } else {
      describe.skip(`${dialect.label ?? dialect.name} (skipped: ${dialect.missing})`, () => body(dialect));
    }
  }
}

/**
 * The app of a dialect's suite: made on a fresh database before the suite, closed after it.
 * Returned as a stand-in that forwards to the real app once it exists.
 */
export function appPerDialect<App extends { ready: Promise<void>; close(): Promise<void> }>(
  dialect: TestDialect,
  make: (database: DatabaseOptions) => App,
): App {
  let current: App | undefined;
  beforeAll(async () => {
    current = make(await dialect.fresh());
    await current.ready;
  });
  afterAll(() => current?.close());
  return new Proxy({} as App, { get: (_, key) => (current as Record<PropertyKey, unknown>)[key] });
}

/**
 * A dialect suite's app served on 127.0.0.1: made on a fresh database and listening before the
 * suite, closed after it (`server.close()` closes the app too).
 */
export function servedPerDialect<App extends Servable & { close(): Promise<void> }>(
  dialect: TestDialect,
  make: (database: DatabaseOptions) => App,
): { readonly app: App; readonly server: RunningServer } {
  let app: App | undefined;
  let server: RunningServer | undefined;
  beforeAll(async () => {
    app = make(await dialect.fresh());
    server = await serve(app, { port: 0 });
  });
  afterAll(() => server?.close());
  return {
    get app() {
      return app!;
    },
    get server() {
      return server!;
    },
  };
}
