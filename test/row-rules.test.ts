// Row- and field-level rules with two users, Alice and Bob, and an admin, on SQLite, PostgreSQL
// and MariaDB, over HTTP, through app.api and through the client: each sees and changes only her
// own orders, another's order is a missing id, and the admin-only `cost` never reaches them.

import { apiKey, createResource, crudkit, type DatabaseOptions, ownedBy, withId } from "crudkit-api";
import { createClient } from "crudkit-api/client";
import { cache, redisStore } from "crudkit-api/plugins";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { forEachDialect } from "./dialects.ts";
import { call, expectNoLeak, type TestResponse } from "./helpers.ts";

const hookCalls: string[] = [];
const isAdmin = ({ user }: { user: { roles?: readonly string[] } | null }) =>
  user?.roles?.includes("admin") === true;

/** The admin-only values: no answer to Alice or Bob may contain them. */
const SECRET_COST = 987654.25;
const SECRET_NOTE = "zebracrossing";

const order = createResource({
  name: "order",
  schema: withId({
    ownerId: z.string().max(255).optional(),
    item: z.string().max(100),
    total: z.number(),
    status: z.enum(["open", "paid"]).default("open"),
    cost: z.number().optional(),
    internalNote: z.string().max(100).optional(),
  }),
  searchable: ["item", "internalNote"],
  access: {
    ...ownedBy("ownerId", { bypass: (user) => user.roles?.includes("admin") ?? false }),
    fields: {
      cost: { read: isAdmin, write: isAdmin },
      internalNote: { read: isAdmin, write: isAdmin },
    },
  },
  hooks: {
    beforeRead: ({ id }) => void hookCalls.push(`beforeRead ${id}`),
    beforeUpdate: ({ id }) => void hookCalls.push(`beforeUpdate ${id}`),
    beforeDelete: ({ id }) => void hookCalls.push(`beforeDelete ${id}`),
  },
});

const keys = apiKey({
  keys: {
    "alice-key": { id: "alice" },
    "bob-key": { id: "bob" },
    "admin-key": { id: "admin", roles: ["admin"] },
  },
});

/** `varyBy` says everyone shares entries: only the scope in the key keeps Alice and Bob apart. */
const makeApp = (database: DatabaseOptions, store?: ReturnType<typeof redisStore>) =>
  crudkit({
    database,
    autoMigrate: true,
    resources: [order],
    plugins: [keys, cache({ varyBy: () => "everyone", ...(store ? { store } : {}) })],
  });

const alice = { "x-api-key": "alice-key" };
const bob = { "x-api-key": "bob-key" };
const admin = { "x-api-key": "admin-key" };

forEachDialect((dialect) => {
  let app: ReturnType<typeof makeApp>;
  let database: DatabaseOptions;
  const ids: Record<"alice" | "bob", string[]> = { alice: [], bob: [] };
  /** Every answer Alice and Bob got, scanned for the hidden values at the end. */
  const seen: TestResponse[] = [];
  const as = async (
    headers: Record<string, string>,
    method: string,
    path: string,
    body?: unknown,
  ): Promise<TestResponse> => {
    const res = await call(app, method, path, { headers, ...(body === undefined ? {} : { body }) });
    if (headers !== admin) seen.push(res);
    return res;
  };

  beforeAll(async () => {
    database = await dialect.fresh();
    app = makeApp(database);
    for (const [who, headers, items] of [
      ["alice", alice, ["apples", "pears", "plums"]],
      ["bob", bob, ["bread", "butter"]],
    ] as const) {
      for (const item of items) {
        const res = await as(headers, "POST", "/api/order", { item, total: item.length });
        expect(res.status, res.text).toBe(201);
        expect(res.body.ownerId).toBe(who);
        ids[who].push(res.body.id);
        // The admin sets what only admins may read.
        const secret = await call(app, "PATCH", `/api/order/${res.body.id}`, {
          headers: admin,
          body: { cost: SECRET_COST, internalNote: SECRET_NOTE },
        });
        expect(secret.status, secret.text).toBe(200);
        expect(secret.body.cost).toBe(SECRET_COST);
      }
    }
  });
  afterAll(() => app?.close());

  describe("row rules", () => {
    it("lists show each user only her own rows, and total counts only those", async () => {
      const mine = await as(alice, "GET", "/api/orders?limit=2&sortBy=item&sortOrder=asc");
      expect(mine.body.items.map((o: { item: string }) => o.item)).toEqual(["apples", "pears"]);
      expect(mine.body.pagination).toMatchObject({ total: 3, totalPages: 2, hasNext: true });
      const theirs = await as(bob, "GET", "/api/orders");
      expect(theirs.body.items.map((o: { ownerId: string }) => o.ownerId)).toEqual(["bob", "bob"]);
      expect(theirs.body.pagination.total).toBe(2);
      // ANDed with the caller's own filter and search.
      const filtered = await as(bob, "GET", "/api/orders?filter[item][startsWith]=b&search=ut");
      expect(filtered.body.items.map((o: { item: string }) => o.item)).toEqual(["butter"]);
      // Asking for another owner's rows finds nothing, it does not widen the rule.
      const asked = await as(alice, "GET", "/api/orders?filter[ownerId]=bob");
      expect(asked.body.pagination.total).toBe(0);
      expect((await call(app, "GET", "/api/orders", { headers: admin })).body.pagination.total).toBe(5);
      expect((await as({}, "GET", "/api/orders")).status).toBe(403);
    });

    it("read, update and delete of another user's record answer exactly as a missing id, and run no hook", async () => {
      const bobs = ids.bob[0]!;
      const missing = `${bobs.slice(0, -4)}ffff`;
      for (const [method, body] of [
        ["GET", undefined],
        ["PATCH", { total: 1 }],
        ["DELETE", undefined],
      ] as const) {
        hookCalls.length = 0;
        const other = await as(alice, method, `/api/order/${bobs}`, body);
        const absent = await as(alice, method, `/api/order/${missing}`, body);
        expect(other.status).toBe(404);
        expect(other.text.replace(bobs, "ID")).toBe(absent.text.replace(missing, "ID"));
        // Header for header, but for the request's own id (each request has one).
        const own = ([name]: [string, string]) => name !== "x-request-id";
        expect([...other.headers].filter(own)).toEqual([...absent.headers].filter(own));
        expect(hookCalls.filter((c) => c.includes(bobs))).toEqual([]);
      }
      const still = await call(app, "GET", `/api/order/${bobs}`, { headers: admin });
      expect(still.body).toMatchObject({ ownerId: "bob", total: 5 });
      const own = await as(alice, "GET", `/api/order/${ids.alice[0]}`);
      expect(own.body).toMatchObject({ item: "apples", ownerId: "alice" });
    });

    it("refuse creating a record in another user's name, and fill the owner when left out", async () => {
      const forged = await as(alice, "POST", "/api/order", { item: "x", total: 1, ownerId: "bob" });
      expect(forged.status).toBe(403);
      expect(forged.body.message).toMatch(/"ownerId" must be your own user id/);
      const own = await as(alice, "POST", "/api/order", { item: "kiwis", total: 5, ownerId: "alice" });
      expect(own.status).toBe(201);
      ids.alice.push(own.body.id);
      const onBehalf = await call(app, "POST", "/api/order", {
        headers: admin,
        body: { item: "gift", total: 9, ownerId: "bob" },
      });
      expect(onBehalf.body.ownerId).toBe("bob");
      await call(app, "DELETE", `/api/order/${onBehalf.body.id}`, { headers: admin });
    });

    it("refuse an update that moves a record out of the caller's rows, and roll it back", async () => {
      const id = ids.alice[1]!;
      for (const change of [
        { ownerId: "bob", total: 77 },
        { ownerId: null, total: 77 },
      ]) {
        const moved = await as(alice, "PATCH", `/api/order/${id}`, change);
        expect(moved.status).toBe(403);
        expect(moved.body.message).toMatch(/outside what the update rule of "order" lets you change/);
        const after = await call(app, "GET", `/api/order/${id}`, { headers: admin });
        expect(after.body).toMatchObject({ ownerId: "alice", total: 5 });
      }
      const kept = await as(alice, "PATCH", `/api/order/${id}`, { ownerId: "alice", status: "paid" });
      expect(kept.status).toBe(200);
      expect(kept.body.status).toBe("paid");
    });

    it("delete only the caller's own records", async () => {
      const id = ids.alice.pop()!;
      expect((await as(bob, "DELETE", `/api/order/${id}`)).status).toBe(404);
      expect((await as(alice, "DELETE", `/api/order/${id}`)).body).toEqual({ success: true, id });
    });

    it("apply through app.api and the client the same way", async () => {
      const listed = await app.api.listOrders({ headers: bob });
      expect(listed.items.every((o) => o.ownerId === "bob")).toBe(true);
      await expect(app.api.readOrder({ headers: bob, params: { id: ids.alice[0]! } })).rejects.toMatchObject({
        status: 404,
      });
      const all = await app.api.listOrders({ overrideAccess: true });
      expect(all.pagination.total).toBe(5);
      expect(all.items[0]?.cost).toBe(SECRET_COST);

      const request: typeof fetch = (input, init) => app.handler(new Request(input, init));
      const client = createClient<typeof app>({
        baseURL: "http://localhost/api",
        fetch: request,
        headers: alice,
      });
      const { data } = await client.order.list({ where: { status: "open" } });
      expect(data?.items.map((o) => o.ownerId)).toEqual(["alice", "alice"]);
      expect(data?.items.some((o) => "cost" in o)).toBe(false);
      const { error } = await client.order.read(ids.bob[1]!);
      expect(error).toMatchObject({ status: 404, code: "NOT_FOUND" });
    });

    it("keep cached lists and reads apart per scope, even when varyBy shares entries", async () => {
      const first = await as(alice, "GET", "/api/orders?sortBy=item");
      const second = await as(bob, "GET", "/api/orders?sortBy=item");
      const again = await as(alice, "GET", "/api/orders?sortBy=item");
      expect(second.headers.get("x-cache")).toBe("MISS");
      expect(again.headers.get("x-cache")).toBe("HIT");
      expect(again.text).toBe(first.text);
      expect(second.body.items.every((o: { ownerId: string }) => o.ownerId === "bob")).toBe(true);
      const adminList = await call(app, "GET", "/api/orders?sortBy=item", { headers: admin });
      expect(adminList.body.items[0].cost).toBe(SECRET_COST);
      expect((await as(alice, "GET", "/api/orders?sortBy=item")).text).toBe(first.text);
    });

    it("keep scopes apart across two instances sharing Redis", async () => {
      const redis = new Redis(process.env.CRUDKIT_TEST_REDIS_URL!, { lazyConnect: true });
      const prefix = `rowrules:${dialect.name}:${Date.now()}:`;
      const one = makeApp(database, redisStore(redis, { prefix }));
      const two = makeApp(database, redisStore(redis, { prefix }));
      try {
        const a = await call(one, "GET", "/api/orders", { headers: alice });
        const b = await call(two, "GET", "/api/orders", { headers: bob });
        const c = await call(two, "GET", "/api/orders", { headers: alice });
        expect(b.headers.get("x-cache")).toBe("MISS");
        expect(c.headers.get("x-cache")).toBe("HIT");
        expect(c.text).toBe(a.text);
        expect(b.body.items.every((o: { ownerId: string }) => o.ownerId === "bob")).toBe(true);
        seen.push(a, b, c);
      } finally {
        await one.close();
        await two.close();
        redis.disconnect();
      }
    });
  });

  describe("field rules", () => {
    it("hide a field from callers who may not read it, and show it to those who may", async () => {
      const own = await as(alice, "GET", `/api/order/${ids.alice[0]}`);
      expect(own.body).not.toHaveProperty("cost");
      expect(own.body).not.toHaveProperty("internalNote");
      const adminRead = await call(app, "GET", `/api/order/${ids.alice[0]}`, { headers: admin });
      expect(adminRead.body).toMatchObject({ cost: SECRET_COST, internalNote: SECRET_NOTE });
      const updated = await as(alice, "PATCH", `/api/order/${ids.alice[0]}`, { total: 3 });
      expect(updated.body).not.toHaveProperty("cost");
      const created = await as(bob, "POST", "/api/order", { item: "jam", total: 2 });
      expect(created.body).not.toHaveProperty("cost");
      await as(bob, "DELETE", `/api/order/${created.body.id}`);
    });

    it("answer a search, sort or filter on a hidden field as for an unknown field", async () => {
      const hidden = await as(alice, "GET", "/api/orders?filter[cost][gt]=1");
      const unknown = await as(alice, "GET", "/api/orders?filter[nope][gt]=1");
      expect(hidden.status).toBe(400);
      expect(hidden.body.message).toBe(unknown.body.message.replace("nope", "cost"));
      const sorted = await as(alice, "GET", "/api/orders?sortBy=cost");
      expect(sorted.status).toBe(400);
      expect(sorted.body.message).not.toContain("cost, ");
      // The note is searchable for admins only: Alice's search never matches inside it.
      expect((await as(alice, "GET", `/api/orders?search=${SECRET_NOTE}`)).body.pagination.total).toBe(0);
      const adminSearch = await call(app, "GET", `/api/orders?search=${SECRET_NOTE}`, { headers: admin });
      expect(adminSearch.body.pagination.total).toBe(5);
      expect((await call(app, "GET", "/api/orders?filter[cost][gt]=1", { headers: admin })).status).toBe(200);
    });

    it("refuse writing a protected field with 403 naming it, and change nothing", async () => {
      const res = await as(alice, "PATCH", `/api/order/${ids.alice[0]}`, { cost: 1, total: 99 });
      expect(res.status).toBe(403);
      expect(res.body.message).toContain('"cost"');
      const created = await as(bob, "POST", "/api/order", { item: "x", total: 1, internalNote: "mine" });
      expect(created.status).toBe(403);
      expect(created.body.message).toContain('"internalNote"');
      const after = await call(app, "GET", `/api/order/${ids.alice[0]}`, { headers: admin });
      expect(after.body).toMatchObject({ total: 3, cost: SECRET_COST });
    });
  });

  describe("app.can", () => {
    it("answers whether an operation is allowed, the row filter and the hidden fields", async () => {
      const aliceUser = { id: "alice" };
      expect(await app.can("list", "order", { user: aliceUser })).toEqual({
        allowed: true,
        where: { ownerId: "alice" },
        hiddenFields: ["cost", "internalNote"],
      });
      expect(await app.can("delete", "order", { user: aliceUser, id: ids.alice[0]! })).toMatchObject({
        allowed: true,
      });
      expect(await app.can("delete", "order", { user: aliceUser, id: ids.bob[0]! })).toMatchObject({
        allowed: false,
      });
      expect(await app.can("update", "order", { user: aliceUser, body: { cost: 1 } })).toMatchObject({
        allowed: false,
        reason: expect.stringContaining('"cost"'),
      });
      expect(await app.can("create", "order", { user: aliceUser, body: { ownerId: "bob" } })).toMatchObject({
        allowed: false,
      });
      expect(await app.can("list", "order", { user: null })).toMatchObject({ allowed: false });
      expect(await app.can("read", "order", { user: { id: "admin", roles: ["admin"] } })).toEqual({
        allowed: true,
        hiddenFields: [],
      });
    });
  });

  describe("hidden values", () => {
    it("never appear in any answer Alice or Bob got", () => {
      expect(seen.length).toBeGreaterThan(30);
      for (const res of seen) {
        expect(res.text).not.toContain(String(SECRET_COST));
        expect(res.text).not.toContain(SECRET_NOTE);
        expectNoLeak(res.text);
      }
    });
  });
});
