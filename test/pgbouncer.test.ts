// PostgreSQL through PgBouncer in transaction mode (issue 37 §2). The conformance suites run on it
// as a dialect of their own ("postgres via PgBouncer", test/dialects.ts); this file checks what is
// particular to a pooler: with `directUrl`, no session state goes through it (the statement timeout
// travels with each transaction and leaks to no other client of the pooler; statement-timeout.test.ts
// checks it stops statements, alone and in a transaction, on this dialect too), the migration lock is
// taken on the direct connection, and a postgresBus on the pooler's URL is refused; without it,
// the pooler's refusal of the timeout's startup parameter becomes an error that says what to do.

import { inspect } from "node:util";
import { createResource, crudkit, databaseFromUrl, postgresBus, withId } from "crudkit-api";
import { type Kysely, sql } from "kysely";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { openPostgres } from "../src/db/engines/postgres/driver.ts";
import { compileTemplate, firstRow, slot } from "../src/db/query-template.ts";
import { DIALECTS } from "./dialects.ts";
import { call } from "./helpers.ts";

const found = DIALECTS.find((d) => d.label === "postgres via PgBouncer")!;
const bouncer = {
  ...found,
  fresh: () => found.fresh() as Promise<{ provider: "postgres"; url: string; directUrl: string }>,
};

/** Each list records the statement timeout its statements ran under, alone and in a transaction. */
const seen: string[] = [];
const showTimeout = async (db: Kysely<any>) =>
  (await sql<{ statement_timeout: string }>`show statement_timeout`.execute(db)).rows[0]?.statement_timeout;
const probe = createResource({
  name: "probe",
  schema: withId({ text: z.string().max(50) }),
  access: { list: true, create: true },
  hooks: {
    beforeList: async ({ db }) => {
      seen.push(`${await showTimeout(db)} ${await db.transaction().execute(showTimeout)}`);
    },
  },
});

const suite = bouncer.missing && !process.env.CI ? describe.skip : describe;

suite("PostgreSQL through PgBouncer in transaction mode", () => {
  it("the timeout travels with each transaction and statement, and leaks into no other session", async () => {
    const database = await bouncer.fresh();
    const app = crudkit({
      database,
      autoMigrate: true,
      statementTimeout: 1234,
      resources: [probe],
      log: () => {},
    });
    await app.ready;
    try {
      for (let i = 0; i < 20; i++) expect((await call(app, "GET", "/api/probes")).status).toBe(200);
      expect(new Set(seen)).toEqual(new Set(["1234ms 1234ms"]));
      // Another client of the same pooler and database: the server connections it gets carry no
      // setting of crudkit's (a session SET would have stayed on them).
      const { default: pg } = await import("pg");
      const other = new pg.Pool({ connectionString: database.url, max: 5 });
      const answers = await Promise.all(
        Array.from({ length: 40 }, () => other.query("show statement_timeout")),
      );
      await other.end();
      expect(new Set(answers.map((a) => a.rows[0].statement_timeout))).toEqual(new Set(["0"]));
    } finally {
      await app.close();
    }
  });

  it("two apps migrating at once through the pooler: one migration, and no lock left behind", async () => {
    // Through the pooler, the lock's unlock would reach another server connection than its lock
    // and leave it held there for good; on directUrl it is taken and let go on one session.
    const database = await bouncer.fresh();
    const item = createResource({
      name: "item",
      schema: withId({ name: z.string().max(50) }),
      access: { read: true },
    });
    const apps = [0, 1, 2].map(() =>
      crudkit({ database, autoMigrate: true, resources: [item], log: () => {} }),
    );
    try {
      await Promise.all(apps.map((app) => app.ready));
      const { default: pg } = await import("pg");
      const watcher = new pg.Client({ connectionString: database.directUrl });
      await watcher.connect();
      const { rows } = await watcher.query(
        `select count(*)::int as n from pg_locks l join pg_database d on d.oid = l.database
         where l.locktype = 'advisory' and d.datname = current_database()`,
      );
      const applied = await watcher.query("select count(*)::int as n from crudkit_migrations");
      await watcher.end();
      expect(rows[0].n).toBe(0);
      expect(applied.rows[0].n).toBe(1);
      expect((await apps[0]!.db.selectFrom("item").selectAll().execute()).length).toBe(0);
    } finally {
      for (const app of apps) await app.close();
    }
  });

  it("statements PostgreSQL runs only outside a transaction block still run through the pooler", async () => {
    const app = crudkit({
      database: await bouncer.fresh(),
      autoMigrate: true,
      resources: [probe],
      log: () => {},
    });
    await app.ready;
    try {
      await sql`vacuum analyze probe`.execute(app.db);
      await sql`create index concurrently probe_text on probe (text)`.execute(app.db);
      await sql`drop index concurrently probe_text`.execute(app.db);
    } finally {
      await app.close();
    }
  });

  it("reads sent by name through a pooler that shares sessions run again unnamed, and every one answers", async () => {
    // No timeout (nothing refused at connect) and no pooler mode: the driver names its reads, and
    // PgBouncer hands each statement any server session, where the name is missing or taken.
    const { url } = await bouncer.fresh();
    const [one, two] = [openPostgres(url, () => {}, 0), openPostgres(url, () => {}, 0)];
    try {
      await sql`create table "item" ("id" integer primary key)`.execute(one);
      await sql`insert into "item" select generate_series(1, 10)`.execute(one);
      const read = compileTemplate(one.selectFrom("item").select("id").where("id", "=", slot("id")));
      const reads = Array.from({ length: 400 }, (_, i) =>
        firstRow<{ id: number }>(i % 2 ? one : two, read, { id: (i % 10) + 1 }),
      );
      expect((await Promise.all(reads)).map((row) => row?.id)).toEqual(
        Array.from({ length: 400 }, (_, i) => (i % 10) + 1),
      );
    } finally {
      await Promise.all([one.destroy(), two.destroy()]);
    }
  });

  it("without directUrl, the pooler's refusal says to give one", async () => {
    const { url } = await bouncer.fresh();
    const app = crudkit({
      database: { provider: "postgres", url },
      autoMigrate: true,
      resources: [probe],
      log: () => {},
    });
    const failed = await app.ready.then(
      () => undefined,
      (error: unknown) => error,
    );
    await app.close().catch(() => {});
    expect(String((failed as Error)?.message ?? failed)).toMatch(/directUrl/);
    expect(String((failed as Error)?.message ?? failed)).not.toMatch(/postgres:\/\//);
  });

  it("a postgresBus on the pooler's URL is refused, however it is spelled; on the direct URL it is taken", async () => {
    const database = await bouncer.fresh();
    const pooler = new URL(database.url);
    const spellings = [
      database.url,
      database.url.replace(/^postgres:/, "postgresql:"),
      `${database.url}?sslmode=disable&application_name=x`,
      `postgres://other:secret-5ecret@${pooler.hostname.toUpperCase()}:${pooler.port}${pooler.pathname}`,
    ];
    for (const url of spellings) {
      const bus = postgresBus({ url });
      expect(() => crudkit({ database, resources: [probe], realtime: { bus } })).toThrow(
        /LISTEN needs a session of its own\. Give postgresBus the directUrl/,
      );
      // The bus keeps its URL to itself: a password never shows in what prints it.
      expect(JSON.stringify(bus)).not.toContain("5ecret");
      expect(inspect(bus, { depth: 5, showHidden: true })).not.toContain("5ecret");
    }
    const app = crudkit({
      database,
      autoMigrate: true,
      resources: [probe],
      realtime: { bus: postgresBus({ url: database.directUrl }) },
      log: () => {},
    });
    await app.ready;
    await app.close();
  });

  it("directUrl is checked: PostgreSQL only, a URL, and both URLs postgres://", () => {
    const hostile: unknown[] = [
      { provider: "sqlite", url: ":memory:", directUrl: "postgres://x@127.0.0.1/db" },
      { provider: "mysql", url: "mysql://x@127.0.0.1/db", directUrl: "mysql://x@127.0.0.1/db" },
      { provider: "postgres", url: "postgres://x@127.0.0.1/db", directUrl: 42 },
      { provider: "postgres", url: "postgres://x@127.0.0.1/db", directUrl: "" },
      { provider: "postgres", url: "postgres://x@127.0.0.1/db", directUrl: { toString: () => "x" } },
    ];
    for (const database of hostile)
      expect(() => crudkit({ database: database as never, resources: [probe] })).toThrow(/directUrl/);
    expect(databaseFromUrl("postgres://a@127.0.0.1:6432/app", { directUrl: undefined })).toEqual({
      provider: "postgres",
      url: "postgres://a@127.0.0.1:6432/app",
    });
    expect(databaseFromUrl("postgres://a@127.0.0.1:6432/app", { directUrl: "" })).toEqual({
      provider: "postgres",
      url: "postgres://a@127.0.0.1:6432/app",
    });
    expect(
      databaseFromUrl("postgres://a@127.0.0.1:6432/app", { directUrl: "postgresql://a@127.0.0.1:5432/app" }),
    ).toEqual({
      provider: "postgres",
      url: "postgres://a@127.0.0.1:6432/app",
      directUrl: "postgresql://a@127.0.0.1:5432/app",
    });
    expect(() => databaseFromUrl("file:./x.db", { directUrl: "postgres://a@127.0.0.1/app" })).toThrow(
      /directUrl/,
    );
    expect(() =>
      databaseFromUrl("postgres://a@127.0.0.1/app", { directUrl: "mysql://a@127.0.0.1/app" }),
    ).toThrow(/directUrl/);
  });
});
