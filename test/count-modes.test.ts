// Count modes of lists on SQLite, PostgreSQL and MariaDB: `exact` (the default), `none` (null
// totals, hasNext from one row more) and `estimated` (statistics past 10,000 rows, exact below),
// over HTTP, app.api and the client, with filters and a per-resource default.

import { createResource, crudkit, type DatabaseOptions, withId } from "crudkit-api";
import { createClient } from "crudkit-api/client";
import { sql } from "kysely";
import { beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { appPerDialect, forEachDialect } from "./dialects.ts";
import { call } from "./helpers.ts";

const schema = withId({ name: z.string().max(50), bucket: z.number().int() });
const item = createResource({ name: "item", schema, access: { list: true }, timestamps: false });
const quiet = createResource({ name: "quiet", schema, access: { list: true }, count: "none" });

const makeApp = (database: DatabaseOptions) =>
  crudkit({ database, autoMigrate: true, resources: [item, quiet] });

const ROWS = 12_345;

forEachDialect((dialect) => {
  const app = appPerDialect(dialect, makeApp);

  beforeAll(async () => {
    await app.ready;
    // Seeded with SQL: 12,345 items, bucket = n % 10, and 25 quiet rows.
    const numbers =
      dialect.name === "postgres"
        ? sql`select n from generate_series(1, ${sql.lit(ROWS)}) as n`
        : sql`with recursive seq(n) as (select 1 union all select n + 1 from seq where n < ${sql.lit(ROWS)}) select n from seq`;
    const cast = dialect.name === "mysql" ? sql`cast(n as char)` : sql`cast(n as text)`;
    // One connection: MariaDB's recursion limit is a session setting.
    await app.db.connection().execute(async (db) => {
      if (dialect.name === "mysql") await sql`set session max_recursive_iterations = 100000`.execute(db);
      await sql`insert into ${sql.table("item")} (${sql.ref("id")}, ${sql.ref("name")}, ${sql.ref("bucket")})
        select ${cast}, ${cast}, n % 10 from (${numbers}) as numbers`.execute(db);
    });
    for (let i = 0; i < 25; i++)
      await app.api.createQuiet({ body: { name: `q${i}`, bucket: i % 2 }, overrideAccess: true });
    // Statistics, as a database that has run a while has them.
    if (dialect.name === "postgres") await sql`analyze ${sql.table("item")}`.execute(app.db);
    if (dialect.name === "mysql") await sql`analyze table ${sql.table("item")}`.execute(app.db);
  });

  describe("count modes", () => {
    it("count exactly by default", async () => {
      const res = await call(app, "GET", "/api/items?limit=5");
      expect(res.body.pagination).toMatchObject({
        total: ROWS,
        totalPages: Math.ceil(ROWS / 5),
        hasNext: true,
      });
    });

    it("skip the count with count=none: null totals, hasNext from one row more", async () => {
      const first = await call(app, "GET", "/api/items?count=none&limit=5&filter[bucket]=3");
      expect(first.body.items).toHaveLength(5);
      expect(first.body.pagination).toEqual({
        page: 1,
        limit: 5,
        total: null,
        totalPages: null,
        hasNext: true,
        hasPrev: false,
        nextCursor: expect.stringMatching(/^c1\./),
        prevCursor: null,
      });
      const matching = Math.floor(ROWS / 10) + (ROWS % 10 >= 3 ? 1 : 0);
      const lastPage = Math.ceil(matching / 5);
      const last = await call(app, "GET", `/api/items?count=none&limit=5&filter[bucket]=3&page=${lastPage}`);
      expect(last.body.items).toHaveLength(matching - (lastPage - 1) * 5);
      expect(last.body.pagination).toMatchObject({ hasNext: false, hasPrev: true, total: null });
      // The resource's own default, overridden per request.
      const quietList = await call(app, "GET", "/api/quiets?limit=10");
      expect(quietList.body.pagination).toMatchObject({ total: null, totalPages: null, hasNext: true });
      expect((await call(app, "GET", "/api/quiets?count=exact")).body.pagination.total).toBe(25);
    });

    it("estimate from statistics past 10,000 rows, and count exactly below", async () => {
      const whole = await call(app, "GET", "/api/items?count=estimated&limit=1");
      expect(whole.status).toBe(200);
      expect(whole.body.pagination.total).toBeGreaterThan(ROWS * 0.7);
      expect(whole.body.pagination.total).toBeLessThan(ROWS * 1.3);
      // A filter matching fewer than 10,000 rows: exact.
      const few = await call(app, "GET", "/api/items?count=estimated&filter[bucket]=7");
      expect(few.body.pagination.total).toBe(Math.floor(ROWS / 10) + (ROWS % 10 >= 7 ? 1 : 0));
      // More than 10,000: the planner's estimate (exact on SQLite), never fewer than counted.
      const many = await call(app, "GET", "/api/items?count=estimated&filter[bucket][lt]=9");
      const real = ROWS - Math.floor(ROWS / 10);
      expect(many.body.pagination.total).toBeGreaterThan(10_000);
      expect(many.body.pagination.total).toBeLessThan(ROWS * 1.5);
      if (dialect.name === "sqlite") expect(many.body.pagination.total).toBe(real);
      // Small tables are counted exactly whatever their statistics say.
      expect((await call(app, "GET", "/api/quiets?count=estimated")).body.pagination.total).toBe(25);
    });

    it("refuse an unknown mode with 400, and type the totals as nullable", async () => {
      const bad = await call(app, "GET", "/api/items?count=roughly");
      expect(bad.status).toBe(400);
      expect(bad.body.message).toBe('count must be exact, estimated or none, got "roughly".');
      expect((await call(app, "GET", "/api/items?count=%00")).status).toBe(400);
      const listed = await app.api.listItems({ query: { count: "none", limit: 2 } });
      const total: number | null = listed.pagination.total;
      expect(total).toBeNull();
      const client = createClient<typeof app>({
        baseURL: "http://localhost/api",
        fetch: (input, init) => app.handler(new Request(input, init)),
      });
      const { data } = await client.item.list({ count: "none", limit: 3 });
      expect(data?.pagination.totalPages).toBeNull();
      const types = () => [
        // @ts-expect-error not a count mode
        app.api.listItems({ query: { count: "roughly" } }),
      ];
      expect(typeof types).toBe("function");
    });
  });
});
