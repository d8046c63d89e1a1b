// Keyset (cursor) pagination on SQLite, PostgreSQL and MariaDB: every sort, nulls and ties
// included, with a filter and a row rule, while rows are inserted between pages; backwards by
// prevCursor; tampered and foreign cursors answer 400; the client's and app.api's page iterators.

import { apiKey, createResource, crudkit, type DatabaseOptions, ownedBy, withId } from "crudkit-api";
import { createClient } from "crudkit-api/client";
import { beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { appPerDialect, forEachDialect } from "./dialects.ts";
import { call, expectNoLeak } from "./helpers.ts";

const entry = createResource({
  name: "entry",
  plural: "entries",
  schema: withId({
    ownerId: z.string().max(255).optional(),
    rank: z.number().int(),
    label: z.string().max(50).optional(),
    score: z.number().optional(),
    flag: z.boolean(),
    at: z.date().optional(),
  }),
  access: ownedBy("ownerId"),
});
const other = createResource({ name: "other", schema: withId({ rank: z.number() }), access: { list: true } });

const makeApp = (database: DatabaseOptions) =>
  crudkit({
    database,
    autoMigrate: true,
    resources: [entry, other],
    plugins: [apiKey({ keys: { "alice-key": { id: "alice" }, "bob-key": { id: "bob" } } })],
  });

const alice = { "x-api-key": "alice-key" };
const bob = { "x-api-key": "bob-key" };
const SORTS = ["createdAt", "id", "rank", "label", "score", "flag", "at"] as const;
let made = 0;
/** Ties on rank and flag, nulls in label, score and at. */
const row = (i: number) => ({
  rank: i % 5,
  flag: i % 3 === 0,
  ...(i % 4 === 0 ? {} : { label: `L${(i * 7) % 11}` }),
  ...(i % 3 === 1 ? {} : { score: (i * 13) % 17 }),
  ...(i % 5 === 2 ? {} : { at: new Date(Date.UTC(2026, 0, 1 + ((i * 3) % 9))).toISOString() }),
});

forEachDialect((dialect) => {
  const app = appPerDialect(dialect, makeApp);
  beforeAll(async () => {
    await app.ready;
    for (let i = 0; i < 30; i++) await call(app, "POST", "/api/entry", { headers: alice, body: row(i) });
    for (let i = 0; i < 10; i++) await call(app, "POST", "/api/entry", { headers: bob, body: row(i) });
    await app.api.createOther({ body: { rank: 1 }, overrideAccess: true });
  });

  const list = async (query: string, headers = alice) => {
    const res = await call(app, "GET", `/api/entries?${query}`, { headers });
    expect(res.status, `${query}: ${res.text}`).toBe(200);
    return res.body as {
      items: { id: string; ownerId: string }[];
      pagination: {
        nextCursor: string | null;
        prevCursor: string | null;
        hasNext: boolean;
        hasPrev: boolean;
      };
    };
  };

  describe("cursor pagination", () => {
    it("walks every sort forwards without a skip or a repeat while rows are inserted between pages", async () => {
      for (const sortBy of SORTS) {
        for (const sortOrder of ["asc", "desc"]) {
          const base = `sortBy=${sortBy}&sortOrder=${sortOrder}&filter[rank][lt]=4`;
          const snapshot = (await list(`${base}&limit=100`)).items.map((e) => e.id);
          expect(snapshot.length).toBeGreaterThan(20);
          const seen: string[] = [];
          let page = await list(`${base}&limit=4`);
          expect(page.pagination.prevCursor).toBeNull();
          seen.push(...page.items.map((e) => e.id));
          while (page.pagination.nextCursor) {
            // Someone writes between two pages.
            await call(app, "POST", "/api/entry", { headers: alice, body: row(100 + made++) });
            page = await list(`${base}&limit=4&cursor=${page.pagination.nextCursor}`);
            expect(page.pagination.hasPrev).toBe(true);
            seen.push(...page.items.map((e) => e.id));
          }
          expect(page.pagination.hasNext).toBe(false);
          const where = `${sortBy} ${sortOrder}`;
          expect(new Set(seen).size, where).toBe(seen.length);
          expect(
            seen.filter((id) => snapshot.includes(id)),
            where,
          ).toEqual(snapshot);
        }
      }
    });

    it("walks back by prevCursor to the same rows, in order", async () => {
      for (const sortBy of ["label", "rank", "createdAt"]) {
        const base = `sortBy=${sortBy}&sortOrder=asc`;
        // Forwards (checked above), then back from the last page.
        let page = await list(`${base}&limit=5`);
        const all = page.items.map((e) => e.id);
        while (page.pagination.nextCursor) {
          page = await list(`${base}&limit=5&cursor=${page.pagination.nextCursor}`);
          all.push(...page.items.map((e) => e.id));
        }
        const back = page.items.map((e) => e.id);
        while (page.pagination.prevCursor) {
          page = await list(`${base}&limit=5&cursor=${page.pagination.prevCursor}`);
          back.unshift(...page.items.map((e) => e.id));
        }
        expect(page.pagination.hasPrev).toBe(false);
        expect(back, sortBy).toEqual(all);
      }
    });

    it("keeps the row rule: another user's rows never appear, whatever the cursor", async () => {
      const bobs = await list("limit=3", bob);
      const next = bobs.pagination.nextCursor!;
      const mine = await list(`limit=100&cursor=${next}`);
      expect(mine.items.every((e) => e.ownerId === "alice")).toBe(true);
      const theirs = await list("limit=100", bob);
      expect(theirs.items.every((e) => e.ownerId === "bob")).toBe(true);
    });

    it("answers a tampered or foreign cursor with 400, never a 500 or another query", async () => {
      const good = (await list("limit=2&sortBy=rank")).pagination.nextCursor!;
      const payload = (cursor: string) => JSON.parse(Buffer.from(cursor.slice(3), "base64url").toString());
      const craft = (value: unknown) => `c1.${Buffer.from(JSON.stringify(value)).toString("base64url")}`;
      const otherCursor = (await call(app, "GET", "/api/others?limit=1")).body.pagination.nextCursor;
      const cases: [string, RegExp][] = [
        ["cursor=abc", /not a crudkit cursor/],
        ["cursor=c1.!!!", /malformed/],
        [`cursor=${craft({ a: 1 })}`, /malformed/],
        [`cursor=${good}&sortBy=rank&sortOrder=asc`, /another sort/],
        [`cursor=${good}`, /another sort/],
        [
          `cursor=${craft(["entry", "rank", "desc", "a", "1; drop table entry", "x"])}&sortBy=rank`,
          /malformed/,
        ],
        [`cursor=${craft(["entry", "rank", "desc", "z", 1, "x"])}&sortBy=rank`, /malformed/],
        [`cursor=${craft([...payload(good).slice(0, 5), { __proto__: 1 }])}&sortBy=rank`, /malformed/],
        [`cursor=${craft(["entry", "at", "desc", "a", "yesterday", "x"])}&sortBy=at`, /malformed/],
        [`cursor=${good}&sortBy=rank&page=2`, /page and cursor cannot be combined/],
        [`cursor=c1.${"A".repeat(5000)}`, /not a crudkit cursor/],
        ["cursor=c1.%00", /query parameter cursor|malformed/],
      ];
      if (otherCursor) cases.push([`cursor=${otherCursor}`, /another list/]);
      for (const [query, message] of cases) {
        const res = await call(app, "GET", `/api/entries?${query}`, { headers: alice });
        expect(res.status, query).toBe(400);
        expect(res.body.message, query).toMatch(message);
        expectNoLeak(res.text);
      }
      // A crafted cursor with a well-typed value is only a position: still Alice's rows only.
      const crafted = await list(`sortBy=rank&cursor=${craft(["entry", "rank", "desc", "a", 99, "zzz"])}`);
      expect(crafted.items.every((e) => e.ownerId === "alice")).toBe(true);
    });

    it("iterates every page from the client and from app.api", async () => {
      const total = (await call(app, "GET", "/api/entries?filter[flag]=true", { headers: alice })).body
        .pagination.total as number;
      const client = createClient<typeof app>({
        baseURL: "http://localhost/api",
        fetch: (input, init) => app.handler(new Request(input, init)),
        headers: alice,
      });
      const fromClient: string[] = [];
      for await (const page of client.entry.pages({ where: { flag: true }, limit: 3, sortBy: "rank" }))
        fromClient.push(...page.items.map((e) => e.id));
      expect(fromClient).toHaveLength(total);
      expect(new Set(fromClient).size).toBe(total);
      const fromApi: string[] = [];
      for await (const page of app.api.listEntriesPages({
        headers: alice,
        query: { where: { flag: true }, limit: 4 },
      }))
        fromApi.push(...page.items.map((e) => e.id));
      expect(fromApi.sort()).toEqual([...fromClient].sort());
      const { data } = await client.entry.list({
        limit: 2,
        cursor: (await client.entry.list({ limit: 2 })).data!.pagination.nextCursor!,
      });
      expect(data?.items).toHaveLength(2);
    });
  });
});
