// Startup with a database that is not up yet: serve() listens anyway (health/live 200, health and
// every other request 503 JSON with Retry-After), retries with backoff, and serves once the
// database answers, migrating once. On PostgreSQL and MariaDB the real server, a cluster of the
// test's own, is started after the app. Also: library use
// rejects `app.ready` with a crudkit error, `waitForDatabase: false` rejects at once, a startup
// that fails for another reason is not retried, and no output ever holds the URL's password.

import { crudkit, type DatabaseOptions } from "crudkit-api";
import { type RunningServer, serve } from "crudkit-api/node";
import { afterEach, describe, expect, it } from "vitest";
import { forEachDialect } from "./dialects.ts";
import { openProduct } from "./fixtures.ts";
import { freePort } from "./helpers.ts";
import { ownMariadb, ownPostgres } from "./own-server.ts";

const SECRET = "hunter2-not-in-any-output";

/** The fresh database's URL with another port and a password of our own (trust auth ignores it). */
async function unreachableUrl(database: { url: string }, port: number, provider: string): Promise<string> {
  const url = new URL(database.url);
  url.port = String(port);
  if (provider === "postgres") url.password = SECRET;
  else {
    // MariaDB checks passwords: a user of this test's own, with the secret as password.
    const mysql = await import("mysql2/promise");
    const admin = await mysql.createConnection(database.url);
    const user = `u${Math.random().toString(36).slice(2, 10)}`;
    await admin.query(`create user '${user}'@'127.0.0.1' identified by '${SECRET}'`);
    await admin.query(`grant all on ${url.pathname.slice(1)}.* to '${user}'@'127.0.0.1'`);
    await admin.end();
    url.username = user;
    url.password = SECRET;
  }
  return url.toString();
}

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
});

async function get(base: string, path: string) {
  const res = await fetch(`${base}${path}`);
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, body: JSON.parse(text) };
}

forEachDialect(
  (dialect) => {
    it("serves 503 while the database is down, then migrates once and serves once it is up", async () => {
      // A server of the test's own, prepared and stopped: it is started after the app.
      const own = dialect.name === "postgres" ? await ownPostgres(SECRET) : await ownMariadb(SECRET);
      cleanups.push(() => own.remove());
      const port = Number(new URL(own.url).port);
      const lines: string[] = [];
      const app = crudkit({
        database: { provider: dialect.name as "postgres", url: own.url },
        autoMigrate: true,
        resources: [openProduct],
        log: (message, error) => lines.push(`${message} ${String(error)}`),
      });
      const running: RunningServer = await serve(app, { port: 0, log: (line) => lines.push(line) });
      cleanups.push(() => running.close());

      const live = await get(running.url, "/api/health/live");
      expect(live.status).toBe(200);
      const health = await get(running.url, "/api/health");
      expect(health.status).toBe(503);
      expect(health.body.status).toBe("unavailable");
      const list = await get(running.url, "/api/products");
      expect(list.status).toBe(503);
      expect(list.headers.get("content-type")).toBe("application/json");
      expect(list.headers.get("retry-after")).toMatch(/^\d+$/);
      expect(list.body.code).toBe("SERVICE_UNAVAILABLE");
      expect(lines[0]).toContain(`cannot reach the database at 127.0.0.1:${port}`);
      expect(lines[0]).toContain("ECONNREFUSED");

      await own.start();
      const deadline = Date.now() + 30_000;
      let status = 0;
      while (Date.now() < deadline) {
        status = (await get(running.url, "/api/products")).status;
        if (status === 200) break;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      expect(status, lines.join("\n")).toBe(200);
      expect((await get(running.url, "/api/health")).status).toBe(200);
      const created = await fetch(`${running.url}/api/product`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ name: "Hat", price: 5 }),
      });
      expect(created.status).toBe(201);
      expect((await get(running.url, "/api/products")).body.items).toHaveLength(1);
      // Migrated once: one record of the table's creation.
      const migrations = await app.db.selectFrom("crudkit_migrations").selectAll().execute();
      expect(migrations.filter((m) => JSON.stringify(m).includes("product"))).toHaveLength(1);
      expect(lines.join("\n")).toContain("startup finished");
      expect(lines.join("\n")).not.toContain(SECRET);
      await running.close();
    }, 90_000);

    it("app.ready rejects with a crudkit error naming the host, and waitForDatabase: false rejects", async () => {
      const database = (await dialect.fresh()) as DatabaseOptions & { url: string; provider: string };
      const port = await freePort();
      const url = await unreachableUrl(database, port, database.provider);
      const make = () =>
        crudkit({
          database: { provider: database.provider, url } as DatabaseOptions,
          autoMigrate: true,
          resources: [openProduct],
          log: () => {},
        });
      const app = make();
      cleanups.push(() => app.close());
      const error = (await app.ready.catch((e: unknown) => e)) as Error & { code: string; host: string };
      expect(error.code).toBe("DATABASE_UNREACHABLE");
      expect(error.host).toBe(`127.0.0.1:${port}`);
      expect(error.message).toMatch(/ECONNREFUSED/);
      expect(error.stack).not.toMatch(/node_modules/);
      expect(`${error.message}${error.stack}`).not.toContain(SECRET);
      const other = make();
      cleanups.push(() => other.close());
      await expect(serve(other, { port: 0, waitForDatabase: false })).rejects.toMatchObject({
        code: "DATABASE_UNREACHABLE",
      });
    });
  },
  ["postgres", "mysql"],
);

describe("a startup that fails for another reason", () => {
  it("is not retried: serve() rejects with the failure itself", async () => {
    let inits = 0;
    const app = crudkit({
      database: { provider: "sqlite", url: ":memory:" },
      resources: [openProduct],
      log: () => {},
      plugins: [
        {
          id: "broken",
          init: () => {
            inits++;
            throw new Error("the plugin's own failure");
          },
        },
      ],
    });
    cleanups.push(() => app.close());
    await expect(serve(app, { port: 0 })).rejects.toThrow("the plugin's own failure");
    await new Promise((resolve) => setTimeout(resolve, 700));
    expect(inits).toBe(1);
  });
});
