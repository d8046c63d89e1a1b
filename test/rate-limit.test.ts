// Rate limits: exact counts at the boundary per caller, resource and operation, the RateLimit-*
// and Retry-After headers, windows that reset, operation selectors, the in-process API left alone
// unless asked, an upload-bytes budget counted as bodies stream, and two instances sharing Redis.

import { randomBytes } from "node:crypto";
import { createResource, crudkit, type DatabaseOptions, MemoryStorage, withId } from "crudkit-api";
import { createClient } from "crudkit-api/client";
import {
  type RateLimitOptions,
  type RateLimitStore,
  rateLimit,
  redisRateLimitStore,
  upload,
} from "crudkit-api/plugins";
import { Redis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { forEachDialect, servedPerDialect } from "./dialects.ts";
import { call, tempDatabaseUrl } from "./helpers.ts";

const product = createResource({
  name: "product",
  schema: withId({ name: z.string().max(100), price: z.number() }),
  access: { create: true, read: true, update: true, delete: true, list: true },
});

const ALL = { upload: true, read: true, download: true, delete: true, list: true } as const;
const storage = new MemoryStorage();

const makeApp = (database: DatabaseOptions, limits: RateLimitOptions[]) =>
  crudkit({
    database,
    autoMigrate: true,
    resources: [product],
    plugins: [
      ...limits.map((options) => rateLimit(options)),
      upload({ storage, access: ALL, maxFileSize: 64 * 1024 }),
    ],
    identify: (request) => {
      const id = request.headers.get("x-user");
      return id ? { id } : null;
    },
  });

const ANN = { "x-user": "ann" };
const BOB = { "x-user": "bob" };

forEachDialect((dialect) => {
  describe("rateLimit", () => {
    const served = servedPerDialect(dialect, (database) =>
      makeApp(database, [
        { window: 60, max: 5 },
        { id: "writes", window: 60, max: 3, operations: ["create"] },
      ]),
    );

    it("exactly max requests per caller, resource and operation; the next is a 429 with Retry-After", async () => {
      const created = await call(served.app, "POST", "/api/product", {
        body: { name: "Hat", price: 5 },
        headers: BOB,
      });
      const path = `/api/product/${created.body.id}`;
      for (let i = 1; i <= 5; i++) {
        const res = await call(served.app, "GET", path, { headers: ANN });
        expect(res.status).toBe(200);
        expect(res.headers.get("ratelimit-limit")).toBe("5");
        expect(res.headers.get("ratelimit-remaining")).toBe(String(5 - i));
        expect(res.headers.get("ratelimit-policy")).toBe("5;w=60");
        const reset = Number(res.headers.get("ratelimit-reset"));
        expect(reset).toBeGreaterThanOrEqual(1);
        expect(reset).toBeLessThanOrEqual(60);
      }
      const over = await call(served.app, "GET", path, { headers: ANN });
      expect(over.status).toBe(429);
      expect(over.body.code).toBe("RATE_LIMITED");
      expect(over.headers.get("ratelimit-remaining")).toBe("0");
      const retryAfter = Number(over.headers.get("retry-after"));
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(60);
      // Other operations and other callers have counters of their own.
      expect((await call(served.app, "GET", "/api/products", { headers: ANN })).status).toBe(200);
      expect((await call(served.app, "GET", path, { headers: BOB })).status).toBe(200);
    });

    it("two limits stack (the tighter wins for creates), and failed requests count and carry the headers", async () => {
      const first = await call(served.app, "POST", "/api/product", {
        body: { name: 42 },
        headers: { "x-user": "carl" },
      });
      expect(first.status).toBe(400);
      expect(first.headers.get("ratelimit-remaining")).not.toBeNull();
      for (let i = 0; i < 2; i++) {
        const res = await call(served.app, "POST", "/api/product", {
          body: { name: "Sock", price: 1 },
          headers: { "x-user": "carl" },
        });
        expect(res.status).toBe(201);
      }
      const over = await call(served.app, "POST", "/api/product", {
        body: { name: "Sock", price: 1 },
        headers: { "x-user": "carl" },
      });
      expect(over.status).toBe(429);
      expect(over.headers.get("ratelimit-policy")).toBe("3;w=60");
    });

    it("the client gets a 429 as its error, with the code and the limit in its message", async () => {
      const client = createClient<ReturnType<typeof makeApp>>({
        baseURL: `${served.server.url}/api`,
        headers: { "x-user": "erin" },
      });
      const answers = [];
      for (let i = 0; i < 6; i++) answers.push(await client.product.list());
      expect(answers.slice(0, 5).every((a) => a.error === null)).toBe(true);
      expect(answers[5]!.error).toMatchObject({ status: 429, code: "RATE_LIMITED" });
      expect(answers[5]!.error!.message).toMatch(/retry in \d+ s/);
    });

    it("the in-process API is not limited unless asked", async () => {
      for (let i = 0; i < 12; i++) await served.app.api.listProducts({ headers: { "x-user": "dora" } });
      expect((await call(served.app, "GET", "/api/products", { headers: { "x-user": "dora" } })).status).toBe(
        200,
      );
    });
  });
});

describe("rateLimit on one instance", () => {
  const apps: { close(): Promise<void> }[] = [];
  afterAll(async () => {
    for (const app of apps) await app.close();
  });
  const appWith = (...limits: RateLimitOptions[]) => {
    const app = makeApp({ provider: "sqlite", url: tempDatabaseUrl() }, limits);
    apps.push(app);
    return app;
  };

  it("a new window starts a new count", async () => {
    const app = appWith({ window: 1, max: 2 });
    // Start just after a window begins, so the two requests and the refusal share it.
    await new Promise((resolve) => setTimeout(resolve, 1000 - (Date.now() % 1000) + 20));
    expect((await call(app, "GET", "/api/products", { headers: ANN })).status).toBe(200);
    expect((await call(app, "GET", "/api/products", { headers: ANN })).status).toBe(200);
    expect((await call(app, "GET", "/api/products", { headers: ANN })).status).toBe(429);
    await new Promise((resolve) => setTimeout(resolve, 1000 - (Date.now() % 1000) + 20));
    expect((await call(app, "GET", "/api/products", { headers: ANN })).status).toBe(200);
  });

  it("by ip: every caller from one address shares the count; a function may leave callers unlimited", async () => {
    const byIp = appWith({ window: 60, max: 2, by: "ip" });
    const send = (headers: Record<string, string>) =>
      byIp.handler(new Request("http://x/api/products", { headers }), { ip: "10.0.0.7" });
    expect((await send(ANN)).status).toBe(200);
    expect((await send(BOB)).status).toBe(200);
    expect((await send({})).status).toBe(429);
    expect((await byIp.handler(new Request("http://x/api/products"), { ip: "10.0.0.8" })).status).toBe(200);

    const staffFree = appWith({
      window: 60,
      max: 1,
      by: (_ctx, user) => (user?.id === "staff" ? null : (user?.id ?? "anonymous")),
    });
    for (let i = 0; i < 3; i++)
      expect((await call(staffFree, "GET", "/api/products", { headers: { "x-user": "staff" } })).status).toBe(
        200,
      );
    expect((await call(staffFree, "GET", "/api/products", { headers: ANN })).status).toBe(200);
    expect((await call(staffFree, "GET", "/api/products", { headers: ANN })).status).toBe(429);
  });

  it("operations selects endpoints: others answer without limit headers", async () => {
    const app = appWith({ window: 60, max: 1, operations: ["product.create", "uploadFile"] });
    for (let i = 0; i < 3; i++) {
      const res = await call(app, "GET", "/api/products", { headers: ANN });
      expect(res.status).toBe(200);
      expect(res.headers.get("ratelimit-limit")).toBeNull();
    }
    expect(
      (await call(app, "POST", "/api/product", { body: { name: "A", price: 1 }, headers: ANN })).status,
    ).toBe(201);
    expect(
      (await call(app, "POST", "/api/product", { body: { name: "A", price: 1 }, headers: ANN })).status,
    ).toBe(429);
  });

  it("inProcess: true counts app.api calls too, and throws the 429", async () => {
    const app = appWith({ window: 60, max: 2, inProcess: true });
    await app.api.listProducts({ headers: ANN });
    await app.api.listProducts({ headers: ANN });
    await expect(app.api.listProducts({ headers: ANN })).rejects.toMatchObject({
      status: 429,
      code: "RATE_LIMITED",
    });
  });

  it("an upload-bytes budget: declared lengths past it are refused at once, streamed ones when they cross it", async () => {
    const app = appWith({ window: 60, max: 1000, uploadBytes: { max: 3000, window: 60 } });
    const body = (size: number) =>
      JSON.stringify({
        filename: "f.bin",
        mimeType: "application/octet-stream",
        file: Buffer.alloc(size, 7).toString("base64"),
      });
    const one = body(700); // about 1 KB on the wire
    const first = await call(app, "POST", "/api/upload/file", {
      rawBody: one,
      headers: { ...ANN, "content-type": "application/json" },
    });
    expect(first.status).toBe(201);
    const second = await call(app, "POST", "/api/upload/file", {
      rawBody: one,
      headers: { ...ANN, "content-type": "application/json" },
    });
    expect(second.status).toBe(201);
    // 2 × ~1 KB spent of 3000: a declared 1 KB more does not fit.
    const declared = await call(app, "POST", "/api/upload/file", {
      rawBody: body(1500),
      headers: { ...ANN, "content-type": "application/json" },
    });
    expect(declared.status).toBe(429);
    expect(declared.body.code).toBe("RATE_LIMITED");
    expect(declared.headers.get("retry-after")).not.toBeNull();
    // Streamed without a length: refused when the bytes cross the budget, and nothing is stored.
    const chunks = [body(1500)];
    const streamed = await app.handler(
      new Request("http://x/api/upload/file", {
        method: "POST",
        headers: { ...ANN, "content-type": "application/json" },
        body: new ReadableStream({
          pull(controller) {
            const next = chunks.shift();
            if (next) controller.enqueue(new TextEncoder().encode(next));
            else controller.close();
          },
        }),
        duplex: "half",
      } as RequestInit),
    );
    expect(streamed.status).toBe(429);
    const files = await call(app, "GET", "/api/upload/files?limit=100", { headers: ANN });
    expect(files.body.pagination.total).toBe(2);
    // Another caller has a budget of her own; small uploads still fit for Ann.
    expect(
      (
        await call(app, "POST", "/api/upload/file", {
          rawBody: one,
          headers: { ...BOB, "content-type": "application/json" },
        })
      ).status,
    ).toBe(201);
    expect(
      (
        await call(app, "POST", "/api/upload/file", {
          rawBody: body(100),
          headers: { ...ANN, "content-type": "application/json" },
        })
      ).status,
    ).toBe(201);
  });

  it("refuses bad options when the app is built", () => {
    expect(() => rateLimit({ max: 0 })).toThrow(/max/);
    expect(() => rateLimit({ window: -1 })).toThrow(/window/);
    expect(() => rateLimit({ max: 1.5 })).toThrow(/max/);
    expect(() => rateLimit({ uploadBytes: { max: Number.NaN } })).toThrow(/uploadBytes/);
  });
});

const redisUrl = process.env.CRUDKIT_TEST_REDIS_URL;
describe.skipIf(!redisUrl && !process.env.CI)(
  `rateLimit with Redis${redisUrl ? "" : " (skipped: CRUDKIT_TEST_REDIS_URL is not set)"}`,
  () => {
    const clients: Redis[] = [];
    const apps: { close(): Promise<void> }[] = [];
    afterAll(async () => {
      for (const app of apps) await app.close();
      for (const client of clients) client.disconnect();
    });

    it("has its Redis (under CI a missing service is a failure)", () => {
      expect(redisUrl).toBeDefined();
    });

    it("two instances sharing Redis count together, exactly", async () => {
      const prefix = `crudkit-test:${randomBytes(4).toString("hex")}:`;
      const instance = () => {
        const client = new Redis(redisUrl!, { maxRetriesPerRequest: 1 });
        clients.push(client);
        const store: RateLimitStore = redisRateLimitStore(client, { prefix });
        const app = makeApp({ provider: "sqlite", url: tempDatabaseUrl() }, [{ window: 60, max: 5, store }]);
        apps.push(app);
        return app;
      };
      const [a, b] = [instance(), instance()];
      const statuses: number[] = [];
      for (const app of [a, a, a, b, b])
        statuses.push((await call(app, "GET", "/api/products", { headers: ANN })).status);
      expect(statuses).toEqual([200, 200, 200, 200, 200]);
      const last = await call(b, "GET", "/api/products", { headers: ANN });
      expect(last.status).toBe(429);
      expect((await call(a, "GET", "/api/products", { headers: ANN })).status).toBe(429);
      // 20 at once over both: never more than the limit gets through.
      const fresh = { "x-user": `burst-${randomBytes(3).toString("hex")}` };
      const burst = await Promise.all(
        Array.from({ length: 20 }, (_, i) => call(i % 2 ? a : b, "GET", "/api/products", { headers: fresh })),
      );
      expect(burst.filter((r) => r.status === 200)).toHaveLength(5);
      expect(burst.filter((r) => r.status === 429)).toHaveLength(15);
    });
  },
);
