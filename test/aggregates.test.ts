// Aggregates (issue 41 §4) on SQLite, PostgreSQL and MariaDB, over HTTP, through app.api and the
// client: counts, sums, averages and extremes by group under the list rule, so Alice's figures are
// over her rows only; a field hidden from her is refused with the very answer an unknown one gets;
// hostile names are 4xx with nothing stored; numbers are JSON numbers and dates ISO strings.

import { apiKey, createResource, crudkit, type DatabaseOptions, ownedBy, withId } from "crudkit-api";
import { createClient } from "crudkit-api/client";
import { type RunningServer, serve } from "crudkit-api/node";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from "vitest";
import { z } from "zod";
import { internalsOf } from "../src/app/internals.ts";
import { forEachDialect } from "./dialects.ts";
import { call, expectNoLeak, type TestResponse, tempDatabaseUrl } from "./helpers.ts";

const isAdmin = ({ user }: { user: { roles?: readonly string[] } | null }) =>
  user?.roles?.includes("admin") === true;

/** Only admins may read salaries: no answer to Alice or Bob may hold them, or their sum. */
const SALARY = 7777.5;

const sale = createResource({
  name: "sale",
  schema: withId({
    ownerId: z.string().max(255).optional(),
    status: z.enum(["open", "paid", "void"]),
    region: z.string().max(40).optional(),
    price: z.number(),
    quantity: z.number().int(),
    salary: z.number().optional(),
    soldAt: z.date(),
    note: z.string().max(100),
  }),
  searchable: ["note"],
  aggregates: {
    fields: ["price", "quantity", "salary", "soldAt", "note", "status"],
    groupBy: ["status", "region", "salary", "quantity"],
  },
  access: {
    ...ownedBy("ownerId", { bypass: (user) => user.roles?.includes("admin") ?? false }),
    fields: { salary: { read: isAdmin, write: isAdmin } },
  },
});

const keys = apiKey({
  keys: {
    "alice-key": { id: "alice" },
    "bob-key": { id: "bob" },
    "admin-key": { id: "admin", roles: ["admin"] },
  },
});

const makeApp = (database: DatabaseOptions) =>
  crudkit({ database, autoMigrate: true, resources: [sale], plugins: [keys], log: () => {} });

const alice = { "x-api-key": "alice-key" };
const bob = { "x-api-key": "bob-key" };
const admin = { "x-api-key": "admin-key" };

const SALES = {
  alice: [
    {
      status: "open",
      region: "north",
      price: 10.5,
      quantity: 2,
      soldAt: "2024-03-01T10:00:00.000Z",
      note: "apples",
    },
    {
      status: "open",
      region: "south",
      price: 20,
      quantity: 3,
      soldAt: "2024-01-15T08:30:00.000Z",
      note: "pears",
    },
    { status: "paid", price: 5.25, quantity: 1, soldAt: "2024-06-30T23:59:59.000Z", note: "plums" },
  ],
  bob: [
    {
      status: "open",
      region: "north",
      price: 1000,
      quantity: 7,
      soldAt: "2023-01-01T00:00:00.000Z",
      note: "bread",
    },
    {
      status: "void",
      region: "east",
      price: 2000,
      quantity: 9,
      soldAt: "2025-01-01T00:00:00.000Z",
      note: "butter",
    },
  ],
} as const;

const BY_STATUS = "aggregate[count]=*&aggregate[sum]=price,quantity&groupBy=status";

forEachDialect((dialect) => {
  let app: ReturnType<typeof makeApp>;
  let server: RunningServer;
  /** Every answer Alice and Bob got, scanned for the salaries at the end. */
  const seen: TestResponse[] = [];
  const get = async (headers: Record<string, string>, query: string) => {
    const res = await call(app, "GET", `/api/sales/aggregate?${query}`, { headers });
    if (headers !== admin) seen.push(res);
    return res;
  };
  const rows = async () =>
    (await app.api.aggregateSales({ overrideAccess: true, count: true })).items[0]!.count;

  beforeAll(async () => {
    app = makeApp(await dialect.fresh());
    server = await serve(app, { port: 0 });
    for (const [headers, list] of [
      [alice, SALES.alice],
      [bob, SALES.bob],
    ] as const) {
      for (const body of list) {
        const res = await call(app, "POST", "/api/sale", { headers, body });
        expect(res.status, res.text).toBe(201);
        const paid = await call(app, "PATCH", `/api/sale/${res.body.id}`, {
          headers: admin,
          body: { salary: SALARY },
        });
        expect(paid.status, paid.text).toBe(200);
      }
    }
  });
  afterAll(() => server?.close());

  describe("aggregates", () => {
    it("counts and sums by group over the caller's rows only: bob's rows are never in alice's figures", async () => {
      const mine = await get(alice, BY_STATUS);
      expect(mine.status, mine.text).toBe(200);
      expect(mine.body).toEqual({
        items: [
          { group: { status: "open" }, count: 2, sum: { price: 30.5, quantity: 5 } },
          { group: { status: "paid" }, count: 1, sum: { price: 5.25, quantity: 1 } },
        ],
      });
      const his = await get(bob, BY_STATUS);
      expect(his.body.items).toEqual([
        { group: { status: "open" }, count: 1, sum: { price: 1000, quantity: 7 } },
        { group: { status: "void" }, count: 1, sum: { price: 2000, quantity: 9 } },
      ]);
      // Asking for bob's rows does not widen alice's rule: nothing matches.
      const asked = await get(alice, "aggregate[count]=*&aggregate[sum]=price&filter[ownerId]=bob");
      expect(asked.body).toEqual({ items: [{ group: {}, count: 0, sum: { price: null } }] });
      const all = await get(admin, "aggregate[count]=*&aggregate[sum]=price");
      expect(all.body).toEqual({ items: [{ group: {}, count: 5, sum: { price: 3035.75 } }] });
      expect((await get({}, "aggregate[count]=*")).status).toBe(403);
    });

    it("answers every count, sum and average as a JSON number, and dates in min/max as ISO strings", async () => {
      const res = await get(
        alice,
        "aggregate[count]=*&aggregate[countDistinct]=status&aggregate[avg]=price,quantity&aggregate[min]=soldAt,price,note&aggregate[max]=soldAt,quantity",
      );
      expect(res.status, res.text).toBe(200);
      const [item] = res.body.items;
      expect(item).toEqual({
        group: {},
        count: 3,
        countDistinct: { status: 2 },
        avg: { price: expect.closeTo(35.75 / 3, 9), quantity: 2 },
        min: { soldAt: "2024-01-15T08:30:00.000Z", price: 5.25, note: "apples" },
        max: { soldAt: "2024-06-30T23:59:59.000Z", quantity: 3 },
      });
      // Not text: PostgreSQL's bigint and numeric, and MariaDB's DECIMAL, arrive as numbers.
      for (const value of [item.count, item.countDistinct.status, item.avg.price, item.avg.quantity])
        expect(typeof value).toBe("number");
      const grouped = await get(alice, "aggregate[count]=*&aggregate[sum]=quantity&groupBy=quantity");
      for (const { group, count, sum } of grouped.body.items)
        expect([typeof group.quantity, typeof count, typeof sum.quantity]).toEqual([
          "number",
          "number",
          "number",
        ]);
    });

    it("groups by several fields (nulls first), sorts by a count or an aggregate, and limits the groups", async () => {
      const both = await get(admin, "aggregate[count]=*&groupBy=status,region");
      expect(both.body.items).toEqual([
        { group: { status: "open", region: "north" }, count: 2 },
        { group: { status: "open", region: "south" }, count: 1 },
        { group: { status: "paid", region: null }, count: 1 },
        { group: { status: "void", region: "east" }, count: 1 },
      ]);
      const top = await get(
        admin,
        "aggregate[sum]=price&groupBy=status&sortBy=sum.price&sortOrder=desc&limit=2",
      );
      expect(top.body.items).toEqual([
        { group: { status: "void" }, sum: { price: 2000 } },
        { group: { status: "open" }, sum: { price: 1030.5 } },
      ]);
      const most = await get(admin, "aggregate[count]=*&groupBy=region&sortBy=count&sortOrder=DESC&limit=1");
      expect(most.body.items).toEqual([{ group: { region: "north" }, count: 2 }]);
      const byGroup = await get(admin, "aggregate[count]=*&groupBy=status&sortBy=status&sortOrder=desc");
      expect(byGroup.body.items.map((i: { group: { status: string } }) => i.group.status)).toEqual([
        "void",
        "paid",
        "open",
      ]);
    });

    it("narrows with the list's filter and search", async () => {
      const res = await get(
        alice,
        "aggregate[count]=*&aggregate[sum]=price&filter[price][gte]=10&search=PEA",
      );
      expect(res.body.items).toEqual([{ group: {}, count: 1, sum: { price: 20 } }]);
      const or = await get(
        bob,
        "aggregate[count]=*&groupBy=status&filter[or][0][status]=void&filter[or][1][price][lt]=1500",
      );
      expect(or.body.items).toEqual([
        { group: { status: "open" }, count: 1 },
        { group: { status: "void" }, count: 1 },
      ]);
    });

    it("refuses a field hidden from the caller with the very answer an unknown field gets", async () => {
      for (const [hidden, unknown] of [
        ["aggregate[sum]=salary", "aggregate[sum]=bogus"],
        ["aggregate[count]=*&aggregate[max]=salary", "aggregate[count]=*&aggregate[max]=bogus"],
        ["aggregate[count]=*&groupBy=salary", "aggregate[count]=*&groupBy=bogus"],
        ["aggregate[count]=*&sortBy=sum.salary", "aggregate[count]=*&sortBy=sum.bogus"],
        ["aggregate[count]=*&sortBy=salary", "aggregate[count]=*&sortBy=bogus"],
      ] as const) {
        const refused = await get(alice, hidden);
        const unheard = await get(alice, unknown);
        expect(refused.status, refused.text).toBe(400);
        expect(refused.body.code).toBe("BAD_REQUEST");
        // Byte for byte: nothing tells a hidden field from one that does not exist.
        expect(refused.text).toBe(unheard.text);
        expect(refused.text).not.toContain("salary");
      }
      // A filter on it is refused as on lists: as a field she cannot filter on.
      const filtered = await get(alice, "aggregate[count]=*&filter[salary][gt]=0");
      const bogus = await get(alice, "aggregate[count]=*&filter[bogus][gt]=0");
      expect(filtered.status).toBe(400);
      expect(filtered.text.replaceAll("salary", "bogus")).toBe(bogus.text);
      // The admin may: the sum of every salary.
      const paid = await get(admin, "aggregate[sum]=salary&groupBy=salary");
      expect(paid.body.items).toEqual([{ group: { salary: SALARY }, sum: { salary: SALARY * 5 } }]);
    });

    it("refuses sum and avg on a string field, as a field those functions do not take", async () => {
      for (const fn of ["sum", "avg"]) {
        const text = await get(alice, `aggregate[${fn}]=note`);
        const unknown = await get(alice, `aggregate[${fn}]=bogus`);
        expect(text.status, text.text).toBe(400);
        expect(text.body).toEqual({
          code: "BAD_REQUEST",
          message: `aggregate[${fn}] takes only these fields: price, quantity.`,
          details: [{ path: `aggregate[${fn}]`, message: "Not accepted here." }],
        });
        expect(text.text).toBe(unknown.text);
      }
    });

    it("answers hostile names and limits with a 4xx, never a 500, and stores nothing", async () => {
      const before = await rows();
      const long = "x".repeat(10 * 1024);
      for (const query of [
        "aggregate[count]=*&groupBy=status;drop table sale",
        "aggregate[count]=*&groupBy=status%22)%20from%20sale;--",
        "aggregate[sum]=price)%20from%20sale%3B%20delete%20from%20sale%3B--",
        "aggregate[sum]=pri%00ce",
        "aggregate[count]=*&groupBy=sta%00tus",
        "aggregate[co%00unt]=*",
        `aggregate[count]=*&groupBy=${long}`,
        `aggregate[sum]=${long}`,
        `aggregate[${long}]=price`,
        `aggregate[count]=*&sortBy=${long}`,
        "aggregate[count]=*&groupBy=status,region,salary,quantity",
        "aggregate[count]=*&groupBy=status,status",
        "aggregate[sum]=price,price",
        "aggregate[sum=price",
        "aggregate[sum]]=price",
        "aggregate[[sum]]=price",
        "aggregate=price",
        "aggregate[median]=price",
        "aggregate[count]=*&filter[price[gte]=1",
        "aggregate[count]=*&filter[price]]=1",
        "aggregate[count]=1",
        "aggregate[sum]=",
        "groupBy=status",
        "aggregate[count]=*&limit=0",
        "aggregate[count]=*&limit=1001",
        "aggregate[count]=*&limit=-1",
        "aggregate[count]=*&limit=abc",
        "aggregate[count]=*&limit=99999999999",
        "aggregate[count]=*&sortOrder=sideways",
        "aggregate[count]=*&sortBy=price",
        "aggregate[count]=*&page=2",
        "aggregate[count]=*&search=x&search2=y",
        `aggregate[count]=*&search=${"y".repeat(300)}`,
      ]) {
        for (const who of [alice, admin]) {
          const res = await get(who, query);
          expect(res.status, `${query.slice(0, 80)} → ${res.text.slice(0, 200)}`).toBeGreaterThanOrEqual(400);
          expect(res.status, query.slice(0, 80)).toBeLessThan(500);
          expect(res.body.code).toMatch(/^(BAD_REQUEST|VALIDATION_ERROR)$/);
          expectNoLeak(res.text);
          expect(res.text).not.toContain(long.slice(0, 100));
        }
      }
      expect(await rows()).toBe(before);
      const still = await get(admin, "aggregate[count]=*&groupBy=status");
      expect(still.status).toBe(200);
    });

    it("app.api.aggregate<Plural>: typed items, the same rules, the same refusals", async () => {
      const result = await app.api.aggregateSales({
        headers: alice,
        count: true,
        sum: ["price"],
        min: ["soldAt"],
        groupBy: ["status"],
        where: { price: { gte: 10 } },
      });
      expect(result.items).toEqual([
        {
          group: { status: "open" },
          count: 2,
          sum: { price: 30.5 },
          min: { soldAt: "2024-01-15T08:30:00.000Z" },
        },
      ]);
      const item = result.items[0]!;
      expectTypeOf(item.group.status).toEqualTypeOf<"open" | "paid" | "void">();
      expectTypeOf(item.count).toEqualTypeOf<number>();
      expectTypeOf(item.sum.price).toEqualTypeOf<number | null>();
      expectTypeOf(item.min.soldAt).toEqualTypeOf<string | null>();
      // @ts-expect-error: quantity was not asked for
      void item.sum.quantity;
      // @ts-expect-error: sum takes number fields only
      void app.api.aggregateSales({ sum: ["note"] }).catch(() => {});
      const hidden = await app.api.aggregateSales({ headers: alice, sum: ["salary"] }).catch((e) => e);
      const unknown = await app.api
        .aggregateSales({ headers: alice, sum: ["bogus" as "price"] })
        .catch((e: unknown) => e);
      expect(hidden).toMatchObject({ status: 400, code: "BAD_REQUEST" });
      expect(hidden.message).toBe((unknown as Error).message);
      const all = await app.api.aggregateSales({
        overrideAccess: true,
        count: true,
        where: { ownerId: "bob" },
      });
      expect(all.items).toEqual([{ group: {}, count: 2 }]);
      const response = await app.api.aggregateSales({ headers: bob, count: true, asResponse: true });
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({ items: [{ group: {}, count: 2 }] });
      const bad = await app.api.aggregateSales({
        headers: alice,
        count: true,
        limit: 5000,
        asResponse: true,
      });
      expect(bad.status).toBe(400);
    });

    it("client.<plural>.aggregate over a socket: { data, error }, typed", async () => {
      const client = createClient<typeof app>({ baseURL: `${server.url}/api`, headers: alice });
      const { data, error } = await client.sales.aggregate({
        count: true,
        avg: ["quantity"],
        max: ["price"],
        groupBy: ["region"],
        where: { status: "open" },
        sortBy: "count",
        sortOrder: "desc",
      });
      expect(error).toBeNull();
      expect(data!.items).toEqual([
        { group: { region: "north" }, count: 1, avg: { quantity: 2 }, max: { price: 10.5 } },
        { group: { region: "south" }, count: 1, avg: { quantity: 3 }, max: { price: 20 } },
      ]);
      expectTypeOf(data!.items[0]!.group.region).toEqualTypeOf<string | null>();
      expectTypeOf(data!.items[0]!.avg.quantity).toEqualTypeOf<number | null>();
      const refused = await client.sales.aggregate({ sum: ["salary"] });
      expect(refused.data).toBeNull();
      expect(refused.error).toMatchObject({ status: 400, code: "BAD_REQUEST" });
      const bobs = await createClient<typeof app>({
        baseURL: `${server.url}/api`,
        headers: bob,
      }).sales.aggregate({
        count: true,
      });
      expect(bobs.data!.items).toEqual([{ group: {}, count: 2 }]);
    });

    it("never shows a salary, or its sum, to alice or bob", () => {
      for (const res of seen) {
        expect(res.text).not.toContain(String(SALARY));
        expect(res.text).not.toContain(String(SALARY * 5));
      }
    });
  });
});

forEachDialect(
  (dialect) => {
    const slow = createResource({
      name: "tick",
      schema: withId({ n: z.number().int(), label: z.string() }),
      aggregates: { fields: ["label", "n"] },
      access: { list: true },
    });
    let app: ReturnType<typeof crudkit<[typeof slow]>>;
    beforeAll(async () => {
      const database = await dialect.fresh();
      app = crudkit({ database, autoMigrate: true, resources: [slow], statementTimeout: 50, log: () => {} });
      await app.ready;
      // Written past the app (its statements stop at 50 ms): enough rows for a slow countDistinct.
      const { default: pg } = await import("pg");
      const client = new pg.Client(database.url);
      await client.connect();
      await client.query(
        `insert into tick (id, n, label, "createdAt", "updatedAt") select 't' || g, g, md5(g::text), now(), now() from generate_series(1, 2000000) g`,
      );
      await client.end();
    }, 120_000);
    afterAll(() => app?.close());

    it("answers 503 STATEMENT_TIMEOUT naming the cost and an index when an aggregate runs past the timeout", async () => {
      const res = await call(
        app,
        "GET",
        "/api/ticks/aggregate?aggregate[countDistinct]=label,n&aggregate[min]=label",
      );
      expect(res.status, res.text).toBe(503);
      expect(res.body).toEqual({
        code: "STATEMENT_TIMEOUT",
        message:
          "The aggregate did not finish within the statement timeout: it reads every row its filter and the row rule leave. Narrow it with a filter, or add an index on the fields it filters and groups by (the resource's indexes option).",
        requestId: expect.any(String),
      });
      expectNoLeak(res.text);
    });
  },
  ["postgres"],
);

describe("sqlite: a whole-table aggregate over a big table", () => {
  const row = createResource({
    name: "row",
    schema: z.object({ id: z.string(), kind: z.enum(["a", "b"]), n: z.number().int() }),
    timestamps: false,
    aggregates: { fields: ["n"], groupBy: ["kind"] },
    access: { list: true },
  });
  let app: ReturnType<typeof crudkit<[typeof row]>>;
  beforeAll(async () => {
    app = crudkit({
      database: { provider: "sqlite", url: tempDatabaseUrl() },
      autoMigrate: true,
      resources: [row],
    });
    await app.ready;
    await sql`with recursive seq(n) as (select 1 union all select n + 1 from seq where n < 30000)
      insert into "row" ("id", "kind", "n") select 'r' || n, case when n % 3 = 0 then 'a' else 'b' end, n from seq`.execute(
      app.db,
    );
  });
  afterAll(() => app?.close());

  it("runs on a reader thread, where long lists run, not on the writers' connection", async () => {
    const readers = internalsOf(app)!.database.readers!;
    expect(readers.threads()).toHaveLength(0);
    const { items } = await app.api.aggregateRows({ count: true, sum: ["n"], groupBy: ["kind"] });
    expect(items).toEqual([
      { group: { kind: "a" }, count: 10000, sum: { n: 150015000 } },
      { group: { kind: "b" }, count: 20000, sum: { n: 300000000 } },
    ]);
    expect(readers.threads().length).toBeGreaterThan(0);
  });
});
