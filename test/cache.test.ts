// cache(): hits and misses, invalidation by every write, rules on every hit, per-caller entries,
// bounds and TTL of the memory store, and two app instances sharing one Redis.

import { randomBytes } from "node:crypto";
import { apiKey, createResource, crudkit, type DatabaseOptions, withId } from "crudkit-api";
import { type CacheStore, cache, memoryStore, redisStore } from "crudkit-api/plugins";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { DIALECTS, forEachDialect, type TestDialect } from "./dialects.ts";
import { call, expectNoLeak } from "./helpers.ts";

const ALICE = { "x-api-key": "alice-key" };
const BOB = { "x-api-key": "bob-key" };
const ADMIN = { "x-api-key": "admin-key" };
const MALLORY = { "x-api-key": "mallory-key" };

/** Notes hide their `secret` from everyone but admins, and lists show each caller their own notes. */
const note = createResource({
  name: "note",
  schema: withId({ owner: z.string(), text: z.string(), secret: z.string().default("") }),
  access: {
    create: ({ user }) => user !== null,
    read: ({ user }) => user !== null && user.id !== "mallory",
    update: ({ user }) => user !== null,
    delete: ({ user }) => user !== null,
    list: ({ user }) => user !== null && user.id !== "mallory",
  },
  hooks: {
    afterRead: ({ record, user }) => (user?.roles?.includes("admin") ? record : { ...record, secret: "" }),
    afterList: ({ result, user }) =>
      user?.roles?.includes("admin")
        ? result
        : { ...result, items: result.items.filter((n) => n.owner === user?.id) },
  },
});

const identity = apiKey({
  keys: {
    "alice-key": { id: "alice" },
    "bob-key": { id: "bob" },
    "admin-key": { id: "root", roles: ["admin"] },
    "mallory-key": { id: "mallory" },
  },
});

function makeApp(database: DatabaseOptions, store?: CacheStore, ttl?: number) {
  return crudkit({
    database,
    autoMigrate: true,
    resources: [note],
    plugins: [
      identity,
      cache({
        ...(store ? { store } : {}),
        ...(ttl ? { ttl } : {}),
        access: { stats: ({ user }) => user?.roles?.includes("admin") === true },
      }),
    ],
  });
}

type App = ReturnType<typeof makeApp>;

async function read(app: App, id: string, headers = ALICE) {
  const response = await call(app, "GET", `/api/note/${id}`, { headers });
  return { status: response.status, cache: response.headers.get("x-cache"), body: response.body };
}

function suite(dialect: TestDialect) {
  let app: App;
  beforeAll(async () => {
    app = makeApp(await dialect.fresh());
    await app.ready;
  });
  afterAll(() => app?.close());

  const create = async (body: Record<string, string>, headers = ALICE) =>
    (await call(app, "POST", "/api/note", { body, headers })).body as { id: string };

  it("answers a second read from the cache, and lists too", async () => {
    const { id } = await create({ owner: "alice", text: "first" });
    const first = await read(app, id);
    expect(first).toMatchObject({ status: 200, cache: "MISS" });
    const second = await read(app, id);
    expect(second).toMatchObject({ status: 200, cache: "HIT" });
    expect(second.body).toEqual(first.body);
    expect((await call(app, "GET", "/api/notes", { headers: ALICE })).headers.get("x-cache")).toBe("MISS");
    // The same query written differently is the same entry.
    const same = await call(app, "GET", "/api/notes?page=1&sortOrder=desc", { headers: ALICE });
    expect(same.headers.get("x-cache")).toBe("HIT");
    expect(same.headers.get("content-type")).toBe("application/json");
    const missing = await read(app, "no-such-note");
    expect(missing.status).toBe(404);
    expect((await read(app, "no-such-note")).cache).toBeNull();
  });

  it("makes the next read a MISS with fresh data after any write, over HTTP or app.api", async () => {
    const { id } = await create({ owner: "alice", text: "v1" });
    await read(app, id);
    expect((await read(app, id)).cache).toBe("HIT");

    await call(app, "PATCH", `/api/note/${id}`, { body: { text: "v2" }, headers: ALICE });
    const afterHttp = await read(app, id);
    expect(afterHttp).toMatchObject({ cache: "MISS", body: { text: "v2" } });

    await app.api.updateNote({ params: { id }, body: { text: "v3" }, overrideAccess: true });
    expect(await read(app, id)).toMatchObject({ cache: "MISS", body: { text: "v3" } });
    expect((await read(app, id)).cache).toBe("HIT");

    const listed = async () =>
      (await call(app, "GET", "/api/notes?limit=100", { headers: ALICE })).body.items.length;
    const before = await listed();
    await app.api.createNote({ body: { owner: "alice", text: "another" }, overrideAccess: true });
    expect(await listed()).toBe(before + 1);

    await call(app, "DELETE", `/api/note/${id}`, { headers: ALICE });
    expect((await read(app, id)).status).toBe(404);
    expect(await listed()).toBe(before);
  });

  it("still runs the access rule on every hit", async () => {
    const { id } = await create({ owner: "alice", text: "private" });
    await read(app, id);
    expect((await read(app, id)).cache).toBe("HIT");
    const denied = await call(app, "GET", `/api/note/${id}`, { headers: MALLORY });
    expect(denied.status).toBe(403);
    expect(denied.headers.get("x-cache")).toBeNull();
    expect(denied.text).not.toContain("private");
    expect((await call(app, "GET", "/api/notes", { headers: MALLORY })).status).toBe(403);
    expect((await call(app, "GET", `/api/note/${id}`)).status).toBe(403);
    const forged = await call(app, "GET", `/api/note/${id}`, { headers: { "x-api-key": "forged" } });
    expect(forged.status).toBe(401);
    expectNoLeak(forged.text);
  });

  it("never serves one caller's answer to a caller who sees something else", async () => {
    const { id } = await create({ owner: "alice", text: "shared", secret: "only admins" });
    await create({ owner: "bob", text: "bob's" }, BOB);
    const asAdmin = await read(app, id, ADMIN);
    expect(asAdmin).toMatchObject({ cache: "MISS", body: { secret: "only admins" } });
    expect((await read(app, id, ADMIN)).cache).toBe("HIT");
    const asAlice = await read(app, id, ALICE);
    expect(asAlice.cache).toBe("MISS");
    expect(asAlice.body.secret).toBe("");
    expect((await read(app, id, ALICE)).body.secret).toBe("");

    const owners = async (headers: Record<string, string>) => {
      const response = await call(app, "GET", "/api/notes?limit=100", { headers });
      return [...new Set(response.body.items.map((n: { owner: string }) => n.owner))].sort();
    };
    expect(await owners(ALICE)).toEqual(["alice"]);
    expect(await owners(BOB)).toEqual(["bob"]);
    expect(await owners(ADMIN)).toEqual(["alice", "bob"]);
    expect(await owners(BOB)).toEqual(["bob"]);
  });

  it("counts hits and misses on a stats route only its rule opens", async () => {
    const stats = await call(app, "GET", "/api/cache/stats", { headers: ADMIN });
    expect(stats.status).toBe(200);
    expect(stats.body).toMatchObject({ store: "memory", errors: 0 });
    expect(stats.body.hits).toBeGreaterThan(5);
    expect(stats.body.misses).toBeGreaterThan(5);
    expect(stats.body.entries).toBeGreaterThan(0);
    expect(stats.body.bytes).toBeGreaterThan(0);
    expect((await call(app, "GET", "/api/cache/stats", { headers: ALICE })).status).toBe(403);
    expect((await call(app, "GET", "/api/cache/stats")).status).toBe(403);
  });

  it("serves in-process reads from the database", async () => {
    const { id } = await create({ owner: "alice", text: "direct" });
    await read(app, id);
    const record = await app.api.readNote({ params: { id }, headers: ALICE });
    expect(record.text).toBe("direct");
  });
}

describe("cache", () => {
  forEachDialect(suite);

  it("forgets entries after their TTL", async () => {
    const app = makeApp({ provider: "sqlite", url: ":memory:" }, undefined, 0.15);
    try {
      const { id } = (
        await call(app, "POST", "/api/note", { body: { owner: "a", text: "t" }, headers: ALICE })
      ).body;
      await read(app, id);
      expect((await read(app, id)).cache).toBe("HIT");
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect((await read(app, id)).cache).toBe("MISS");
    } finally {
      await app.close();
    }
  });

  it("shares entries between callers with varyBy, and leaves resources it is not given alone", async () => {
    const memo = createResource({
      name: "memo",
      schema: withId({ text: z.string() }),
      access: { create: true, read: ({ user }) => user !== null && user.id !== "mallory" },
    });
    const app = crudkit({
      database: { provider: "sqlite", url: ":memory:" },
      autoMigrate: true,
      resources: [note, memo],
      plugins: [identity, cache({ varyBy: () => "", resources: ["memo"] })],
    });
    try {
      const { id } = (await call(app, "POST", "/api/memo", { body: { text: "same for all" } })).body;
      const first = await call(app, "GET", `/api/memo/${id}`, { headers: ALICE });
      const second = await call(app, "GET", `/api/memo/${id}`, { headers: BOB });
      expect([first.headers.get("x-cache"), second.headers.get("x-cache")]).toEqual(["MISS", "HIT"]);
      // Shared entries still answer only callers the rule lets in.
      expect((await call(app, "GET", `/api/memo/${id}`, { headers: MALLORY })).status).toBe(403);
      const made = (
        await call(app, "POST", "/api/note", { body: { owner: "alice", text: "n" }, headers: ALICE })
      ).body;
      expect(
        (await call(app, "GET", `/api/note/${made.id}`, { headers: ALICE })).headers.get("x-cache"),
      ).toBeNull();
    } finally {
      await app.close();
    }
  });

  it("bounds the memory store by entries and by bytes, oldest use out first", async () => {
    const byCount = memoryStore({ maxEntries: 3 });
    for (const key of ["a", "b", "c"]) await byCount.save("r", key, "0", `"${key}"`, 60_000);
    await byCount.lookup("r", "a"); // a is now the most recently used
    await byCount.save("r", "d", "0", '"d"', 60_000);
    expect(byCount.usage?.().entries).toBe(3);
    expect((await byCount.lookup("r", "b")).body).toBeUndefined();
    expect((await byCount.lookup("r", "a")).body).toBe('"a"');

    const byBytes = memoryStore({ maxBytes: 4096 });
    for (let i = 0; i < 20; i++) await byBytes.save("r", `k${i}`, "0", "x".repeat(500), 60_000);
    const usage = byBytes.usage?.();
    expect(usage!.bytes).toBeLessThanOrEqual(4096);
    expect(usage!.entries).toBeLessThan(20);
    expect((await byBytes.lookup("r", "k19")).body).toBeDefined();
    // One answer larger than the whole store is not kept (and evicts nothing).
    await byBytes.save("r", "huge", "0", "y".repeat(10_000), 60_000);
    expect((await byBytes.lookup("r", "huge")).body).toBeUndefined();
    expect(byBytes.usage?.().entries).toBe(usage!.entries);
  });

  it("does not keep an answer loaded before a write that committed meanwhile", async () => {
    const store = memoryStore();
    const { generation } = await store.lookup("r", "k");
    await store.invalidate("r");
    await store.save("r", "k", generation, '"stale"', 60_000);
    expect((await store.lookup("r", "k")).body).toBeUndefined();
  });
});

const redisUrl = process.env.CRUDKIT_TEST_REDIS_URL;
const postgres = DIALECTS.find((d) => d.name === "postgres")!;
const redisMissing = redisUrl
  ? postgres.missing
  : "CRUDKIT_TEST_REDIS_URL is not set (source scripts/services.sh)";

describe.skipIf(redisMissing !== undefined && !process.env.CI)(
  `cache with Redis${redisMissing ? ` (skipped: ${redisMissing})` : ""}`,
  () => {
    const clients: Redis[] = [];
    const apps: App[] = [];
    const prefix = `crudkit-test:${randomBytes(4).toString("hex")}:`;
    afterAll(async () => {
      for (const app of apps) await app.close();
      for (const client of clients) client.disconnect();
    });

    const instance = (database: DatabaseOptions) => {
      const client = new Redis(redisUrl!, { lazyConnect: false, maxRetriesPerRequest: 1 });
      clients.push(client);
      const app = makeApp(database, redisStore(client, { prefix }));
      apps.push(app);
      return app;
    };

    it("has its Redis and PostgreSQL (under CI a missing service is a failure)", () => {
      expect(redisMissing).toBeUndefined();
    });

    it("two app instances sharing Redis: a write on one, then a read on the other, returns the new data", async () => {
      const database = await postgres.fresh();
      const first = instance(database);
      await first.ready;
      const second = instance(database);
      await second.ready;

      const { id } = (
        await call(first, "POST", "/api/note", { body: { owner: "alice", text: "old" }, headers: ALICE })
      ).body;
      expect(await read(second, id)).toMatchObject({ cache: "MISS", body: { text: "old" } });
      expect(await read(second, id)).toMatchObject({ cache: "HIT", body: { text: "old" } });
      expect(await read(first, id)).toMatchObject({ cache: "HIT", body: { text: "old" } });

      await call(first, "PATCH", `/api/note/${id}`, { body: { text: "new" }, headers: ALICE });
      expect(await read(second, id)).toMatchObject({ cache: "MISS", body: { text: "new" } });
      expect(await read(first, id)).toMatchObject({ cache: "HIT", body: { text: "new" } });

      const listed = async (app: App) => {
        const response = await call(app, "GET", "/api/notes?limit=100", { headers: ALICE });
        return {
          cache: response.headers.get("x-cache"),
          texts: response.body.items.map((n: { text: string }) => n.text),
        };
      };
      expect(await listed(second)).toEqual({ cache: "MISS", texts: ["new"] });
      expect((await listed(second)).cache).toBe("HIT");
      await call(first, "POST", "/api/note", { body: { owner: "alice", text: "newer" }, headers: ALICE });
      expect(await listed(second)).toEqual({ cache: "MISS", texts: ["newer", "new"] });

      await second.api.deleteNote({ params: { id }, overrideAccess: true });
      expect((await read(first, id)).status).toBe(404);

      const stats = await call(second, "GET", "/api/cache/stats", { headers: ADMIN });
      expect(stats.body).toMatchObject({ store: "redis", entries: null, errors: 0 });
    });

    it("answers from the database when Redis is unreachable", async () => {
      const logged: string[] = [];
      const down = new Redis({
        port: 1,
        host: "127.0.0.1",
        lazyConnect: true,
        enableOfflineQueue: false,
        maxRetriesPerRequest: 0,
        retryStrategy: () => null,
      });
      clients.push(down);
      const app = crudkit({
        database: { provider: "sqlite", url: ":memory:" },
        autoMigrate: true,
        resources: [note],
        log: (message) => logged.push(message),
        plugins: [identity, cache({ store: redisStore(down) })],
      });
      apps.push(app);
      const { id } = (
        await call(app, "POST", "/api/note", { body: { owner: "alice", text: "up" }, headers: ALICE })
      ).body;
      const answer = await read(app, id);
      expect(answer).toMatchObject({ status: 200, body: { text: "up" } });
      expect(logged).toContain("crudkit: cache lookup failed");
    });
  },
);
