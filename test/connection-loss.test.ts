// Issue 43 (in part): errors that mean the database connection went away are 503s, never 500s.
// Each class is produced with the real driver against the real server: a PostgreSQL backend
// terminated under a client (57P01, then "Connection terminated unexpectedly", then "not
// queryable"), a MariaDB connection killed under it (EPIPE, then "closed state").

import { crudkit } from "crudkit-api";
import { describe, expect, it } from "vitest";
import { isConnectionError } from "../src/db/connection-errors.ts";
import { DIALECTS } from "./dialects.ts";
import { openProduct } from "./fixtures.ts";
import { call } from "./helpers.ts";

const postgres = DIALECTS.find((d) => d.name === "postgres")!;
const mysql = DIALECTS.find((d) => d.name === "mysql")!;
const on = (missing: string | undefined) => (!missing || process.env.CI ? describe : describe.skip);

/** Runs `query` until it has thrown `times` times, collecting what it threw. */
async function failures(query: () => Promise<unknown>, times: number): Promise<unknown[]> {
  const errors: unknown[] = [];
  for (let i = 0; i < times + 2 && errors.length < times; i++)
    await query().catch((e: unknown) => errors.push(e));
  return errors;
}

on(postgres.missing)("PostgreSQL: a terminated backend", () => {
  it("every error the client gives afterwards is a connection error", async () => {
    const { default: pg } = await import("pg");
    const url = process.env.CRUDKIT_TEST_POSTGRES_URL!;
    const client = new pg.Client(url);
    const admin = new pg.Client(url);
    await client.connect();
    await admin.connect();
    client.on("error", () => {});
    try {
      const { rows } = await client.query("select pg_backend_pid() as pid");
      await admin.query("select pg_terminate_backend($1)", [rows[0].pid]);
      const errors = await failures(() => client.query("select 1"), 3);
      const messages = errors.map((e) => (e as Error).message);
      expect(messages.some((m) => /terminat/i.test(m))).toBe(true);
      for (const error of errors) expect(isConnectionError(error), (error as Error).message).toBe(true);
    } finally {
      await admin.end();
      await client.end().catch(() => {});
    }
  });
});

on(mysql.missing)("MariaDB: a killed connection", () => {
  it("every error the connection gives afterwards is a connection error", async () => {
    const driver = await import("mysql2/promise");
    const url = process.env.CRUDKIT_TEST_MYSQL_URL!;
    const connection = await driver.createConnection(url);
    const admin = await driver.createConnection(url);
    connection.on("error", () => {});
    try {
      const [[row]] = (await connection.query("select connection_id() as id")) as unknown as [
        [{ id: number }],
      ];
      await admin.query(`kill ${row.id}`);
      const errors = await failures(() => connection.query("select 1"), 2);
      const messages = errors.map((e) => (e as Error).message);
      expect(messages.some((m) => /closed state/.test(m))).toBe(true);
      for (const error of errors) expect(isConnectionError(error), (error as Error).message).toBe(true);
    } finally {
      await admin.end();
      connection.destroy();
    }
  });
});

on(postgres.missing)("through the app", () => {
  it("a database that is gone answers 503 with Retry-After, JSON as always", async () => {
    const app = crudkit({
      database: { provider: "postgres", url: "postgres://postgres@127.0.0.1:1/none" },
      resources: [openProduct],
      log: () => {},
    });
    try {
      const res = await call(app, "GET", "/api/products");
      expect(res.status).toBe(503);
      expect(res.body.code).toBe("SERVICE_UNAVAILABLE");
      expect(res.headers.get("retry-after")).toBe("2");
    } finally {
      await app.close();
    }
  });
});
