// Idempotency keys on every database, with the database store and with the Redis store: a retry
// replays the first answer (status, body, ETag) and creates nothing; another body with the same key
// is a 422; 20 simultaneous identical requests create one record; keys expire, are per caller, and
// a failed first request leaves the key free. Uploads too. Hostile keys are a 400.

import { randomBytes, randomUUID } from "node:crypto";
import { createResource, crudkit, type DatabaseOptions, etagOf, MemoryStorage, withId } from "crudkit-api";
import { createClient } from "crudkit-api/client";
import { type IdempotencyStore, idempotency, redisIdempotencyStore, upload } from "crudkit-api/plugins";
import { Redis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { databaseStore, idempotencyKeysTable } from "../src/plugins/idempotency/store.ts";
import { forEachDialect, servedPerDialect } from "./dialects.ts";
import { call } from "./helpers.ts";

const order = createResource({
  name: "order",
  schema: withId({ item: z.string().max(100), quantity: z.number().int().positive() }),
  access: { create: ({ user }) => user !== null, read: true, list: true, update: true, delete: true },
});

const ALL = { upload: true, read: true, download: true, delete: true, list: true } as const;

const redisUrl = process.env.CRUDKIT_TEST_REDIS_URL;
const clients: Redis[] = [];
afterAll(() => {
  for (const client of clients) client.disconnect();
});

type StoreKind = "database" | "redis";
const storeOf = (kind: StoreKind): IdempotencyStore | undefined => {
  if (kind === "database") return undefined;
  const client = new Redis(redisUrl!, { maxRetriesPerRequest: 1 });
  clients.push(client);
  return redisIdempotencyStore(client, { prefix: `crudkit-test:${randomBytes(4).toString("hex")}:` });
};

const makeApp = (database: DatabaseOptions, kind: StoreKind, ttl = 3600) =>
  crudkit({
    database,
    autoMigrate: true,
    resources: [order],
    plugins: [
      idempotency({ ttl, store: storeOf(kind) }),
      upload({ storage: new MemoryStorage(), access: ALL, maxFileSize: 256 * 1024 }),
    ],
    identify: (request) => {
      const id = request.headers.get("x-user");
      return id ? { id } : null;
    },
  });

const ANN = { "x-user": "ann" };
const BOB = { "x-user": "bob" };
const kinds: StoreKind[] = redisUrl || process.env.CI ? ["database", "redis"] : ["database"];

forEachDialect((dialect) => {
  for (const kind of kinds) {
    describe(`${kind} store`, () => {
      const served = servedPerDialect(dialect, (database) => makeApp(database, kind));
      const create = (body: unknown, key: string, headers: Record<string, string> = ANN) =>
        call(served.app, "POST", "/api/order", { body, headers: { ...headers, "idempotency-key": key } });
      const countOf = async (item: string) =>
        (await call(served.app, "GET", `/api/orders?filter[item]=${encodeURIComponent(item)}&limit=100`)).body
          .pagination.total;

      it("a retry with the same key and body replays the first answer and creates nothing", async () => {
        const key = randomUUID();
        const first = await create({ item: "replay", quantity: 1 }, key);
        expect(first.status).toBe(201);
        expect(first.headers.get("idempotent-replayed")).toBeNull();
        const again = await create({ item: "replay", quantity: 1 }, key);
        expect(again.status).toBe(201);
        expect(again.body).toEqual(first.body);
        expect(again.headers.get("idempotent-replayed")).toBe("true");
        expect(again.headers.get("etag")).toBe(first.headers.get("etag"));
        expect(await countOf("replay")).toBe(1);
        // Without a key, every create creates.
        await call(served.app, "POST", "/api/order", { body: { item: "replay", quantity: 1 }, headers: ANN });
        expect(await countOf("replay")).toBe(2);
      });

      it("the same key with another body answers 422 and creates nothing", async () => {
        const key = randomUUID();
        await create({ item: "mismatch", quantity: 1 }, key);
        for (const body of [
          { item: "mismatch", quantity: 2 },
          { item: "other", quantity: 1 },
        ]) {
          const reused = await create(body, key);
          expect(reused.status).toBe(422);
          expect(reused.body.code).toBe("IDEMPOTENCY_KEY_REUSED");
        }
        // Bytes decide: the same JSON spelled differently is another request.
        const spaced = await call(served.app, "POST", "/api/order", {
          rawBody: '{ "item": "mismatch", "quantity": 1 }',
          headers: { ...ANN, "content-type": "application/json", "idempotency-key": key },
        });
        expect(spaced.status).toBe(422);
        expect(await countOf("mismatch")).toBe(1);
        expect(await countOf("other")).toBe(0);
      });

      it("20 simultaneous identical requests over real sockets create exactly one record", async () => {
        const key = randomUUID();
        const answers = await Promise.all(
          Array.from({ length: 20 }, () =>
            fetch(`${served.server.url}/api/order`, {
              method: "POST",
              headers: { ...ANN, "content-type": "application/json", "idempotency-key": key },
              body: JSON.stringify({ item: "burst", quantity: 3 }),
            }).then(async (r) => ({ status: r.status, body: (await r.json()) as any })),
          ),
        );
        expect(answers.map((a) => a.status)).toEqual(Array(20).fill(201));
        expect(new Set(answers.map((a) => a.body.id)).size).toBe(1);
        expect(await countOf("burst")).toBe(1);
      });

      it("keys are per caller: the same key from two users makes two records, each replayed to its own", async () => {
        const key = randomUUID();
        const ann = await create({ item: "scoped", quantity: 1 }, key, ANN);
        const bob = await create({ item: "scoped", quantity: 1 }, key, BOB);
        expect(bob.status).toBe(201);
        expect(bob.body.id).not.toBe(ann.body.id);
        expect((await create({ item: "scoped", quantity: 1 }, key, ANN)).body.id).toBe(ann.body.id);
        expect((await create({ item: "scoped", quantity: 1 }, key, BOB)).body.id).toBe(bob.body.id);
        expect(await countOf("scoped")).toBe(2);
      });

      it("a failed first request leaves the key free: the corrected retry runs", async () => {
        const key = randomUUID();
        const invalid = await create({ item: "fixed", quantity: -1 }, key);
        expect(invalid.status).toBe(400);
        const refused = await create({ item: "fixed", quantity: 1 }, key, {});
        expect(refused.status).toBe(403);
        const fixed = await create({ item: "fixed", quantity: 1 }, key);
        expect(fixed.status).toBe(201);
        expect(await countOf("fixed")).toBe(1);
      });

      it("uploads: a retried upload stores one file and replays its record; another file is a 422", async () => {
        const key = randomUUID();
        const file = Buffer.from(`idempotent ${key}`).toString("base64");
        const body = { filename: "a.txt", mimeType: "text/plain", file };
        const first = await call(served.app, "POST", "/api/upload/file", {
          body,
          headers: { ...ANN, "idempotency-key": key },
        });
        expect(first.status).toBe(201);
        const again = await call(served.app, "POST", "/api/upload/file", {
          body,
          headers: { ...ANN, "idempotency-key": key },
        });
        expect(again.status).toBe(201);
        expect(again.body).toEqual(first.body);
        const other = await call(served.app, "POST", "/api/upload/file", {
          body: { ...body, file: Buffer.from("another").toString("base64") },
          headers: { ...ANN, "idempotency-key": key },
        });
        expect(other.status).toBe(422);
        const files = await call(served.app, "GET", "/api/upload/files?limit=100", { headers: ANN });
        expect(files.body.items.filter((f: any) => f.id === first.body.id)).toHaveLength(1);
        expect(
          files.body.items.filter((f: any) => f.originalName === "a.txt" && f.size === first.body.size),
        ).toHaveLength(1);
      });

      it("app.api and the client take the key", async () => {
        const key = randomUUID();
        const first = await served.app.api.createOrder({
          body: { item: "server", quantity: 1 },
          headers: ANN,
          idempotencyKey: key,
        });
        const again = await served.app.api.createOrder({
          body: { item: "server", quantity: 1 },
          headers: ANN,
          idempotencyKey: key,
        });
        expect(again).toEqual(first);
        await expect(
          served.app.api.createOrder({
            body: { item: "server", quantity: 9 },
            headers: ANN,
            idempotencyKey: key,
          }),
        ).rejects.toMatchObject({ status: 422, code: "IDEMPOTENCY_KEY_REUSED" });
        expect(await countOf("server")).toBe(1);

        const client = createClient<ReturnType<typeof makeApp>>({
          baseURL: `${served.server.url}/api`,
          headers: ANN,
        });
        const clientKey = randomUUID();
        const a = await client.order.create({ item: "client", quantity: 1 }, { idempotencyKey: clientKey });
        const b = await client.order.create({ item: "client", quantity: 1 }, { idempotencyKey: clientKey });
        expect(b.data).toEqual(a.data);
        expect(b.etag).toBe(etagOf(a.data!));
        const c = await client.order.create({ item: "client", quantity: 2 }, { idempotencyKey: clientKey });
        expect(c.error).toMatchObject({ status: 422, code: "IDEMPOTENCY_KEY_REUSED" });
        expect(await countOf("client")).toBe(1);
      });

      it("hostile keys are a 400 and create nothing; a key that looks like SQL is just a key", async () => {
        const bad = ["", " ", "a b", "x".repeat(256), "cl\u00e9", "tab\there", "new\u007fline"];
        for (const key of bad) {
          const res = await call(served.app, "POST", "/api/order", {
            body: { item: "hostile", quantity: 1 },
            headers: { ...ANN, "idempotency-key": key },
          });
          expect(res.status, JSON.stringify(key)).toBe(400);
          expect(res.body.code).toBe("BAD_REQUEST");
        }
        expect(await countOf("hostile")).toBe(0);
        const sqlish = `';drop-table-orders;--${randomUUID()}`;
        expect((await create({ item: "sqlish", quantity: 1 }, sqlish)).status).toBe(201);
        expect(
          (await create({ item: "sqlish", quantity: 1 }, sqlish)).headers.get("idempotent-replayed"),
        ).toBe("true");
        expect(await countOf("sqlish")).toBe(1);
      });
    });

    describe(`${kind} store, short ttl`, () => {
      const served = servedPerDialect(dialect, (database) => makeApp(database, kind, 0.3));
      it("an expired key is forgotten: the same request creates again", async () => {
        const key = randomUUID();
        const send = () =>
          call(served.app, "POST", "/api/order", {
            body: { item: "expiring", quantity: 1 },
            headers: { ...ANN, "idempotency-key": key },
          });
        const first = await send();
        expect((await send()).body.id).toBe(first.body.id);
        await new Promise((resolve) => setTimeout(resolve, 450));
        const later = await send();
        expect(later.status).toBe(201);
        expect(later.body.id).not.toBe(first.body.id);
        expect(later.headers.get("idempotent-replayed")).toBeNull();
      });
    });

    describe(`${kind} store, a stale claim`, () => {
      // The first request hangs in a hook; its claim goes stale after 0.2 s. Two retries then find
      // it stale at once. The store is the real one, with the second release held back a little, so
      // it lands after the first retry has claimed the key afresh: the release that used to delete
      // that fresh claim (and let both retries run) must now leave it alone.
      let hang: (() => void) | undefined;
      let releases = 0;
      const held = createResource({
        name: "order",
        schema: withId({ item: z.string().max(100), quantity: z.number().int().positive() }),
        access: { create: true, read: true, list: true },
        hooks: {
          beforeCreate: async ({ data }) => {
            if (data.item === "hung") await new Promise<void>((resolve) => (hang = resolve));
          },
        },
      });
      const slowed = (inner: IdempotencyStore): IdempotencyStore => ({
        ...inner,
        claim: (key, ttl) => inner.claim(key, ttl),
        get: (key) => inner.get(key),
        answer: (...args) => inner.answer(...args),
        async release(key, token) {
          if (++releases === 2) await new Promise((resolve) => setTimeout(resolve, 150));
          return inner.release(key, token);
        },
      });
      const served = servedPerDialect(dialect, (database) => {
        let store: IdempotencyStore | undefined;
        const app = crudkit({
          database,
          autoMigrate: true,
          resources: [held],
          plugins: [
            idempotency({
              staleAfter: 0.2,
              store: slowed({
                kind: "lazy",
                claim: (...a) => store!.claim(...a),
                get: (...a) => store!.get(...a),
                answer: (...a) => store!.answer(...a),
                release: (...a) => store!.release(...a),
              }),
            }),
            // The database store's table, which idempotency() creates only for its own store.
            { id: "idempotency-keys-table", tables: kind === "database" ? [idempotencyKeysTable] : [] },
          ],
        });
        store = storeOf(kind) ?? databaseStore(() => app.db);
        return app;
      });

      it("two concurrent retries after a stale claim: one runs, the other replays its answer", async () => {
        const key = randomUUID();
        const send = (item: string) =>
          call(served.app, "POST", "/api/order", {
            body: { item, quantity: 1 },
            headers: { "idempotency-key": key },
          });
        const first = send("hung");
        while (!hang) await new Promise((resolve) => setTimeout(resolve, 10));
        await new Promise((resolve) => setTimeout(resolve, 300));
        const [one, two] = await Promise.all([send("retried"), send("retried")]);
        expect([one.status, two.status].sort()).toEqual([201, 201]);
        expect(one.body.id).toBe(two.body.id);
        const replayed = [one, two].filter((r) => r.headers.get("idempotent-replayed") === "true");
        expect(replayed).toHaveLength(1);
        const stored = await call(served.app, "GET", "/api/orders?filter[item]=retried&limit=10");
        expect(stored.body.pagination.total).toBe(1);
        hang!();
        expect((await first).status).toBe(201);
      });
    });
  }
});
