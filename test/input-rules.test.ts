// The input rules through every entry point besides raw HTTP (app.api, the client), stored rows
// that cannot be read back, /health, and the default logger.

import {
  APIError,
  type CrudkitPlugin,
  crudkit,
  type DatabaseOptions,
  MemoryStorage,
  type UpdateInputOf,
} from "crudkit-api";
import { createClient } from "crudkit-api/client";
import { type RunningServer, serve } from "crudkit-api/node";
import { audit, cache, redisStore, upload } from "crudkit-api/plugins";
import { Redis } from "ioredis";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, expectTypeOf, it, vi } from "vitest";
import { type ClientTestApp, createClientTestApp } from "./client-app.ts";
import { forEachDialect } from "./dialects.ts";
import { journal } from "./fixtures.ts";
import { call, expectNoLeak, tempDatabaseUrl } from "./helpers.ts";

const refusal = async (promise: Promise<unknown>) => {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(APIError);
  return error as APIError;
};

forEachDialect((dialect) => {
  let app: ReturnType<typeof makeApp>;
  const makeApp = (database: DatabaseOptions) =>
    crudkit({ database, autoMigrate: true, resources: [journal], log: () => {} });
  beforeAll(async () => {
    app = makeApp(await dialect.fresh());
    await app.ready;
  });
  afterAll(() => app?.close());

  describe("app.api", () => {
    it("refuses NUL, lone surrogates, non-finite numbers, deep and self-referring values with 400", async () => {
      const cyclic: Record<string, unknown> = { a: 1 };
      cyclic.self = cyclic;
      let deep: unknown = 1;
      for (let i = 0; i < 40; i++) deep = [deep];
      const bodies: [unknown, string, string][] = [
        [{ title: "a\0b" }, "VALIDATION_ERROR", "title"],
        [{ title: "\ud800" }, "VALIDATION_ERROR", "title"],
        [{ title: "t", data: { n: Number.POSITIVE_INFINITY } }, "VALIDATION_ERROR", "data.n"],
        [{ title: "t", data: { n: Number.NaN } }, "VALIDATION_ERROR", "data.n"],
        [{ title: "t", data: { n: 10n } }, "VALIDATION_ERROR", "data.n"],
        [{ title: "t", data: { f: () => 1 } }, "VALIDATION_ERROR", "data.f"],
        [{ title: "t", data: cyclic }, "BAD_REQUEST", ""],
        [{ title: "t", data: { deep } }, "BAD_REQUEST", ""],
      ];
      for (const [body, code, path] of bodies) {
        const error = await refusal(app.api.createJournal({ body: body as never }));
        expect(error.status).toBe(400);
        expect(error.code).toBe(code);
        if (path) expect(error.details?.[0]?.path).toBe(path);
      }
      const notFound = await refusal(app.api.readJournal({ params: { id: "a\0" } }));
      expect(notFound).toMatchObject({ status: 400, code: "BAD_REQUEST" });
      expect(notFound.message).toMatch(/path parameter id/);
      const badHeaders = await refusal(app.api.listJournals({ headers: { "x-api-key": "a\nb" } }));
      expect(badHeaders).toMatchObject({ status: 400, code: "BAD_REQUEST" });
      const badQuery = await refusal(app.api.listJournals({ query: { search: "\0" } }));
      expect(badQuery).toMatchObject({ status: 400, code: "BAD_REQUEST" });
      expect((await app.api.listJournals()).pagination.total).toBe(0);
    });

    it("takes nested dates as Dates or ISO strings, and clears an optional field with null", async () => {
      const created = await app.api.createJournal({
        body: {
          title: "t",
          subtitle: "s",
          events: [
            { at: new Date("2024-01-02T03:04:05Z"), what: "date" },
            { at: "2024-06-01", what: "string" },
          ],
        },
      });
      expect(created.events).toEqual([
        { at: "2024-01-02T03:04:05.000Z", what: "date" },
        { at: "2024-06-01T00:00:00.000Z", what: "string" },
      ]);
      const cleared = await app.api.updateJournal({ params: { id: created.id }, body: { subtitle: null } });
      expect(cleared).not.toHaveProperty("subtitle");
      expect(await app.api.readJournal({ params: { id: created.id } })).toEqual(cleared);
      // A required field cannot be cleared, and the types say so.
      expectTypeOf<UpdateInputOf<typeof journal>["title"]>().toEqualTypeOf<string | undefined>();
      expectTypeOf<UpdateInputOf<typeof journal>["subtitle"]>().toEqualTypeOf<string | null | undefined>();
      const required = await refusal(
        app.api.updateJournal({ params: { id: created.id }, body: { title: null } as never }),
      );
      expect(required.code).toBe("VALIDATION_ERROR");
    });
  });
});

describe("the client", () => {
  const app = createClientTestApp();
  let server: RunningServer;
  let client: ReturnType<typeof createClient<ClientTestApp>>;
  beforeAll(async () => {
    server = await serve(app, { port: 0 });
    client = createClient<ClientTestApp>({ baseURL: `${server.url}/api`, headers: { "x-api-key": "admin" } });
  });
  afterAll(() => server.close());

  it("gets the 400 for NUL and lone surrogates, clears optional fields, and reads /health", async () => {
    for (const name of ["a\0b", "\udfff"]) {
      const { data, error } = await client.person.create({ name });
      expect(data).toBeNull();
      expect(error).toMatchObject({ status: 400, code: "VALIDATION_ERROR", details: [{ path: "name" }] });
    }
    const { data: created } = await client.person.create({ name: "Ada", born: "1815-12-10" });
    expect(created?.born).toBe("1815-12-10T00:00:00.000Z");
    const { data: cleared } = await client.person.update(created!.id, { born: null });
    expect(cleared).not.toHaveProperty("born");
    const read = await client.product.read("\0");
    expect(read.error).toMatchObject({ status: 400, code: "BAD_REQUEST" });
    const health = await client.$fetch("/health");
    // The memory store is in the process: nothing to ask.
    expect(health.data).toEqual({ status: "ok", checks: { database: "ok" } });
  });
});

describe("stored rows that cannot be read back", () => {
  it("answer the other rows, read and delete, and are logged (SQLite, where nothing checks stored JSON)", async () => {
    const logged: string[] = [];
    const storage = new MemoryStorage();
    const app = crudkit({
      database: { provider: "sqlite", url: tempDatabaseUrl() },
      autoMigrate: true,
      resources: [journal],
      plugins: [
        upload({ storage, access: { upload: true, read: true, delete: true, list: true } }),
        audit({ access: { read: true } }),
      ],
      log: (message) => logged.push(message),
    });
    await app.ready;
    const good = await app.api.createJournal({ body: { title: "good", data: { ok: 1 } } });
    const bad = await app.api.createJournal({ body: { title: "bad", data: { ok: 2 } } });
    const deepText = `{"x":${"[".repeat(5000)}${"]".repeat(5000)}}`;
    await sql`update journal set data = ${"{not json"} where id = ${bad.id}`.execute(app.db);
    const file = await call(app, "POST", "/api/upload/file", {
      body: { file: "aGk=", filename: "a.txt", mimeType: "text/plain" },
    });
    await sql`update uploaded_files set metadata = ${deepText}`.execute(app.db);
    await sql`update audit_logs set after = ${"[broken"} where record_id = ${bad.id}`.execute(app.db);

    const list = await call(app, "GET", "/api/journals");
    expect(list.status).toBe(200);
    expect(list.body.items.map((j: { title: string }) => j.title).sort()).toEqual(["bad", "good"]);
    expect(list.body.items.find((j: { id: string }) => j.id === good.id).data).toEqual({ ok: 1 });
    expect((await call(app, "GET", `/api/journal/${bad.id}`)).body.data).toBeNull();
    expect((await call(app, "GET", "/api/upload/files")).status).toBe(200);
    expect((await call(app, "GET", `/api/upload/file/${file.body.id}`)).body.metadata).toBeNull();
    const logs = await call(app, "GET", "/api/audit/logs");
    expect(logs.status).toBe(200);
    expectNoLeak(logs.text);
    expect((await call(app, "DELETE", `/api/upload/file/${file.body.id}`)).status).toBe(200);
    expect((await call(app, "DELETE", `/api/journal/${bad.id}`)).status).toBe(200);
    expect((await call(app, "GET", "/api/journals")).body.pagination.total).toBe(1);
    expect(logged.filter((m) => m.includes("could not be read")).length).toBeGreaterThan(0);
    await app.close();
  });
});

describe("GET /health", () => {
  it("answers 503 naming only the failed check when Redis is down, and when the database is", async () => {
    const logged: unknown[] = [];
    const down = {
      mget: () => Promise.reject(new Error("connect ECONNREFUSED 127.0.0.1:1")),
      set: () => Promise.reject(new Error("down")),
      incr: () => Promise.reject(new Error("down")),
      ping: () => Promise.reject(new Error("connect ECONNREFUSED 127.0.0.1:1")),
    };
    const app = crudkit({
      database: { provider: "sqlite", url: tempDatabaseUrl() },
      resources: [],
      plugins: [cache({ store: redisStore(down) })],
      log: (...args) => logged.push(args),
    });
    const health = await call(app, "GET", "/api/health");
    expect(health.status).toBe(503);
    expect(health.body).toEqual({ status: "unavailable", checks: { database: "ok", cache: "unavailable" } });
    expect(health.headers.get("cache-control")).toBe("no-store");
    expect((await call(app, "GET", "/api/health/live")).status).toBe(200);
    expect(logged.length).toBe(1);
    await app.close();

    const unreachable = crudkit({
      database: { provider: "postgres", url: "postgres://nobody@127.0.0.1:1/none" },
      resources: [],
      log: () => {},
    });
    const answer = await call(unreachable, "GET", "/api/health");
    expect(answer.status).toBe(503);
    expect(answer.body).toEqual({ status: "unavailable", checks: { database: "unavailable" } });
    expectNoLeak(answer.text);
    await unreachable.close();
  });

  it("asks Redis when the cache keeps its entries there", async () => {
    const url = process.env.CRUDKIT_TEST_REDIS_URL;
    if (!url) {
      // Under CI a missing Redis is a failure; locally this test has nothing to ask.
      expect(process.env.CI).toBeFalsy();
      return;
    }
    const redis = new Redis(url, { lazyConnect: true });
    const app = crudkit({
      database: { provider: "sqlite", url: tempDatabaseUrl() },
      resources: [],
      plugins: [cache({ store: redisStore(redis) })],
    });
    const health = await call(app, "GET", "/api/health");
    expect(health.body).toEqual({ status: "ok", checks: { database: "ok", cache: "ok" } });
    expect(health.status).toBe(200);
    await app.close();
    redis.disconnect();
  });

  it("after close(), requests answer 503 instead of a destroyed driver's error", async () => {
    const app = crudkit({ database: { provider: "sqlite", url: tempDatabaseUrl() }, resources: [journal] });
    await app.close();
    await app.close();
    const answer = await call(app, "GET", "/api/journals");
    expect(answer.status).toBe(503);
    expect(answer.body.code).toBe("SERVICE_UNAVAILABLE");
  });
});

const talker: CrudkitPlugin = { id: "talker", init: (context) => context.log("hello from a plugin") };

describe("the default logger", () => {
  it("prints a message without a cause as the message alone (no trailing undefined)", async () => {
    const spy = vi.spyOn(console, "error").mockImplementation(() => {});
    try {
      const app = crudkit({
        database: { provider: "sqlite", url: tempDatabaseUrl() },
        resources: [],
        plugins: [talker],
      });
      await app.ready;
      expect(spy).toHaveBeenCalledWith("hello from a plugin");
      expect(spy.mock.calls.find((c) => c[0] === "hello from a plugin")).toHaveLength(1);
      await app.close();
    } finally {
      spy.mockRestore();
    }
  });
});
