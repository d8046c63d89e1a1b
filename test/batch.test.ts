// Transactional batches (issue 41 §2) on SQLite, PostgreSQL and MariaDB: POST /api/batch runs its
// requests in order in one transaction, each through its own endpoint (rules, validation, hooks,
// audit); the first failure undoes them all and answers with its own status and
// `details: { index, error }`; what waits for a commit runs once, after the batch's. Hostile
// batches are refused before anything runs. Through HTTP, app.api and the client.

import {
  apiKey,
  createResource,
  crudkit,
  type DatabaseOptions,
  ownedBy,
  references,
  withId,
} from "crudkit-api";
import { createClient } from "crudkit-api/client";
import { audit, idempotency, webhooks } from "crudkit-api/plugins";
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { appPerDialect, forEachDialect } from "./dialects.ts";
import { call, expectNoLeak } from "./helpers.ts";

const order = createResource({
  name: "order",
  schema: withId({
    ownerId: z.string().max(255).optional(),
    label: z.string().max(100),
    total: z.number().default(0),
  }),
  access: ownedBy("ownerId"),
});
const line = createResource({
  name: "line",
  schema: withId({
    ownerId: z.string().max(255).optional(),
    orderId: references(order, { onDelete: "cascade" }),
    sku: z.string().max(40),
    quantity: z.number().int().min(1),
  }),
  unique: ["sku"],
  access: ownedBy("ownerId"),
});

const keys = apiKey({ keys: { "alice-key": { id: "alice" }, "bob-key": { id: "bob" } } });
const ALICE = { "x-api-key": "alice-key" };
const BOB = { "x-api-key": "bob-key" };

/** After-commit work, counted: it must run once per write, after the batch commits, never after a rollback. */
const SECRET = `whsec_${Buffer.from("a webhook secret of 32 bytes!!!!").toString("base64")}`;
const committed: string[] = [];
const commits = {
  id: "commits",
  hooks: {
    // A hook that writes through ctx.api: on the batch's transaction, undone with it.
    beforeCreate: async ({
      resource,
      data,
      api,
    }: {
      resource: string;
      data: Record<string, unknown>;
      api: any;
    }) => {
      if (resource === "line" && data.sku === "HOOKED")
        await api.updateOrder({ params: { id: data.orderId }, body: { total: 99 } });
    },
    afterCreateCommit: ({ record, resource }: { record: { id: string }; resource: string }) =>
      void committed.push(`${resource} ${record.id}`),
  },
};

const makeApp = (database: DatabaseOptions) =>
  crudkit({
    database,
    autoMigrate: true,
    resources: [order, line],
    bodyLimit: 64 * 1024,
    batch: { maxRequests: 5 },
    realtime: true,
    log: () => {},
    plugins: [
      keys,
      audit(),
      idempotency(),
      commits,
      // The outbox writes its events in the write's transaction; nothing is sent here.
      webhooks({
        endpoints: [{ id: "sink", url: "http://127.0.0.1:9/hook", secret: SECRET, events: ["*"] }],
        allowPrivateNetworks: true,
        deliver: false,
      }),
    ],
  });

forEachDialect((dialect) => {
  const app = appPerDialect(dialect, makeApp);
  const batch = (headers: Record<string, string>, requests: unknown, extra: Record<string, string> = {}) =>
    call(app, "POST", "/api/batch", { headers: { ...headers, ...extra }, body: { requests } });
  const rows = async (table: string) =>
    Number(
      (
        await app.db
          .selectFrom(table)
          .select((eb) => eb.fn.countAll().as("n"))
          .executeTakeFirst()
      )?.n,
    );
  let bobsOrder = "";
  beforeAll(async () => {
    bobsOrder = (await call(app, "POST", "/api/order", { headers: BOB, body: { label: "bob's" } })).body.id;
  });
  beforeEach(() => void committed.splice(0));

  describe("POST /api/batch", () => {
    it("runs every request in one transaction and answers each as it would alone", async () => {
      const res = await batch(ALICE, [
        { method: "POST", path: "/order", body: { id: "o-1", label: "first" } },
        { method: "POST", path: "/line", body: { orderId: "o-1", sku: "L-1", quantity: 2 } },
        { method: "PATCH", path: "/order/o-1", body: { total: 20 } },
        { method: "PUT", path: "/line/l-2", body: { orderId: "o-1", sku: "L-2", quantity: 1 } },
      ]);
      expect(res.status).toBe(200);
      expect(res.body.results.map((r: { status: number }) => r.status)).toEqual([201, 201, 200, 201]);
      expect(res.body.results[0].body).toMatchObject({
        id: "o-1",
        ownerId: "alice",
        label: "first",
        total: 0,
      });
      expect(res.body.results[2].body).toMatchObject({ id: "o-1", total: 20 });
      expect(res.body.results[3].body).toMatchObject({ id: "l-2", orderId: "o-1" });
      expect((await call(app, "GET", "/api/order/o-1", { headers: ALICE })).body.total).toBe(20);
      // After the commit, once per write.
      expect(committed.sort()).toEqual(
        [`line ${res.body.results[1].body.id}`, "line l-2", "order o-1"].sort(),
      );
      // PostgreSQL queues audit entries until they are sealed, a few milliseconds after commit.
      await app.audit.seal();
      const entries = await app.db
        .selectFrom("audit_logs")
        .select("operation")
        .where("record_id", "=", "o-1")
        .execute();
      expect(entries.map((e) => e.operation).sort()).toEqual(["create", "update"]);
    });

    it("the first failure undoes everything: its status, and details { index, error }; no row, audit entry, outbox row, realtime event or commit work", async () => {
      const heard: string[] = [];
      const stops = ["order", "line"].map((resource) =>
        app.realtime!.subscribe(resource as "order", { headers: ALICE }, (event) =>
          heard.push(`${resource} ${event.type}`),
        ),
      );
      await new Promise((resolve) => setTimeout(resolve, 100));
      await app.audit.seal();
      const before = {
        orders: await rows("order"),
        lines: await rows("line"),
        audit: await rows("audit_logs"),
        outbox: await rows("webhook_events"),
      };
      const alone = await call(app, "PATCH", `/api/order/${bobsOrder}`, {
        headers: ALICE,
        body: { total: 1 },
      });
      const res = await batch(ALICE, [
        { method: "POST", path: "/order", body: { id: "o-2", label: "second" } },
        { method: "POST", path: "/line", body: { orderId: "o-2", sku: "L-3", quantity: 1 } },
        { method: "PATCH", path: `/order/${bobsOrder}`, body: { total: 1 } },
        { method: "POST", path: "/order", body: { label: "never" } },
      ]);
      expect(res.status).toBe(404);
      expect(res.body.code).toBe("NOT_FOUND");
      expect(res.body.details).toEqual({ index: 2, error: alone.body });
      expectNoLeak(res.text);
      expect({
        orders: await rows("order"),
        lines: await rows("line"),
        audit: await rows("audit_logs"),
        outbox: await rows("webhook_events"),
      }).toEqual(before);
      expect(committed).toEqual([]);
      // A committed write is heard (the subscriptions work); the rolled-back ones never were.
      await call(app, "POST", "/api/order", { headers: ALICE, body: { label: "heard" } });
      for (let i = 0; i < 40 && heard.length === 0; i++)
        await new Promise((resolve) => setTimeout(resolve, 50));
      for (const stop of stops) stop();
      expect(heard).toEqual(["order create"]);
      expect(await rows("webhook_events")).toBe(before.outbox + 1);
      expect((await call(app, "GET", `/api/order/${bobsOrder}`, { headers: BOB })).body.total).toBe(0);
    });

    it("a failing validation, a reference to bob's record and a stale If-Match each roll the batch back", async () => {
      const before = await rows("order");
      const cases = [
        [{ method: "POST", path: "/line", body: { orderId: "o-1", sku: "L-9", quantity: 0 } }, 400],
        [{ method: "POST", path: "/line", body: { orderId: bobsOrder, sku: "L-9", quantity: 1 } }, 400],
        [
          { method: "PATCH", path: "/order/o-1", body: { total: 3 }, headers: { "If-Match": '"stale"' } },
          412,
        ],
        [{ method: "POST", path: "/line", body: { orderId: "o-1", sku: "L-1", quantity: 1 } }, 409],
      ] as const;
      for (const [failing, status] of cases) {
        const res = await batch(ALICE, [{ method: "POST", path: "/order", body: { label: "x" } }, failing]);
        expect(res.status, JSON.stringify(failing)).toBe(status);
        expect(res.body.details.index).toBe(1);
      }
      expect(await rows("order")).toBe(before);
      expect(committed).toEqual([]);
    });

    it("a hook's ctx.api writes on the batch's transaction: committed with it, undone with it", async () => {
      const failed = await batch(ALICE, [
        { method: "POST", path: "/order", body: { id: "o-h1", label: "hooked" } },
        { method: "POST", path: "/line", body: { orderId: "o-h1", sku: "HOOKED", quantity: 1 } },
        { method: "DELETE", path: `/order/${bobsOrder}` },
      ]);
      expect(failed.status).toBe(404);
      expect((await call(app, "GET", "/api/order/o-h1", { headers: ALICE })).status).toBe(404);
      const done = await batch(ALICE, [
        { method: "POST", path: "/order", body: { id: "o-h2", label: "hooked" } },
        { method: "POST", path: "/line", body: { orderId: "o-h2", sku: "HOOKED", quantity: 1 } },
      ]);
      expect(done.status).toBe(200);
      expect((await call(app, "GET", "/api/order/o-h2", { headers: ALICE })).body.total).toBe(99);
    });

    it("deletes in a batch, and an If-Match per request that names the current version", async () => {
      const made = await call(app, "POST", "/api/order", {
        headers: ALICE,
        body: { id: "o-del", label: "d" },
      });
      const res = await batch(ALICE, [
        {
          method: "PATCH",
          path: "/order/o-del",
          body: { label: "e" },
          headers: { "If-Match": made.headers.get("etag")! },
        },
        { method: "DELETE", path: "/order/o-del" },
      ]);
      expect(res.status).toBe(200);
      expect(res.body.results).toEqual([
        { status: 200, body: expect.objectContaining({ label: "e" }) },
        { status: 200, body: { success: true, id: "o-del" } },
      ]);
      expect((await call(app, "GET", "/api/order/o-del", { headers: ALICE })).status).toBe(404);
    });

    it("an Idempotency-Key covers the whole batch: a retry answers the first result and writes nothing more", async () => {
      const requests = [{ method: "POST", path: "/order", body: { label: "once" } }];
      const first = await batch(ALICE, requests, { "idempotency-key": "batch-key-1" });
      const again = await batch(ALICE, requests, { "idempotency-key": "batch-key-1" });
      expect(first.status).toBe(200);
      expect(again.body).toEqual(first.body);
      const made = await app.db.selectFrom("order").select("id").where("label", "=", "once").execute();
      expect(made).toHaveLength(1);
    });

    it("hostile batches are refused with a 4xx before anything runs, and store nothing", async () => {
      const before = await rows("order");
      const create = { method: "POST", path: "/order", body: { label: "h" } };
      const cases: [unknown, number][] = [
        [Array.from({ length: 6 }, () => create), 400],
        [[], 400],
        ["not a list", 400],
        [[create, { method: "GET", path: "/orders" }], 400],
        [[create, { method: "POST", path: "/batch", body: { requests: [create] } }], 400],
        [[create, { method: "GET", path: "/audit/logs" }], 400],
        [[create, { method: "POST", path: "/upload/file", body: {} }], 400],
        [[create, { method: "POST", path: "/openapi.json" }], 400],
        [[create, { method: "post", path: "/order" }], 400],
        [[create, { method: "POST", path: "order" }], 400],
        [[create, { method: "POST", path: `/${"x".repeat(3000)}` }], 400],
        [[create, { method: "POST", path: "/../admin" }], 400],
        [[create, { method: "POST", path: "/order\u0000" }], 400],
        [[create, { method: "POST", path: "/order", extra: true }], 400],
        [[create, { method: "POST", path: "/order", headers: { authorization: "Bearer x" } }], 400],
        [[create, { method: "POST", path: "/order?sortBy=label" }], 400],
        [[create, "text"], 400],
        [[create, null], 400],
        [[create, { method: "POST", path: "/order'; drop table order; --" }], 400],
      ];
      for (const [requests, status] of cases) {
        const res = await batch(ALICE, requests);
        expect(res.status, JSON.stringify(requests).slice(0, 120)).toBe(status);
        expectNoLeak(res.text);
      }
      const tooBig = await call(app, "POST", "/api/batch", {
        headers: ALICE,
        body: { requests: [{ ...create, body: { label: "x".repeat(70_000) } }] },
      });
      expect(tooBig.status).toBe(413);
      // The batch sent without Content-Type, or as text: 415; nested past the depth limit, a
      // constructor key in a request's body: 400.
      for (const headers of [ALICE, { ...ALICE, "content-type": "text/plain" }]) {
        const raw = await call(app, "POST", "/api/batch", {
          headers,
          rawBody: JSON.stringify({ requests: [create] }),
        });
        expect(raw.status).toBe(415);
      }
      const deep = await call(app, "POST", "/api/batch", {
        headers: { ...ALICE, "content-type": "application/json" },
        rawBody: `{"requests":[{"method":"POST","path":"/order","body":{"label":${"[".repeat(5000)}${"]".repeat(5000)}}}]}`,
      });
      expect(deep.status).toBe(400);
      const ctor = await batch(ALICE, [
        {
          method: "POST",
          path: "/order",
          body: JSON.parse('{"label":"c","constructor":{"prototype":{"x":1}}}'),
        },
      ]);
      expect(ctor.status).toBe(400);
      expect(({} as Record<string, unknown>).x).toBeUndefined();
      const extraKey = await call(app, "POST", "/api/batch", {
        headers: ALICE,
        body: { requests: [create], more: 1 },
      });
      expect(extraKey.status).toBe(400);
      expect(await rows("order")).toBe(before);
      expect(committed).toEqual([]);
    });

    it("a caller without rights gets each request's own refusal", async () => {
      const res = await batch({}, [{ method: "POST", path: "/order", body: { label: "anon" } }]);
      expect(res.status).toBe(403);
      expect(res.body.details.index).toBe(0);
    });
  });

  describe("app.api.batch and client.$batch", () => {
    it("app.api.batch runs the same; a failure throws the failing request's error", async () => {
      const answer = await app.api.batch({
        body: { requests: [{ method: "POST", path: "/order", body: { id: "api-1", label: "api" } }] },
        headers: ALICE,
      });
      expect(answer.results[0]).toMatchObject({ status: 201, body: { id: "api-1", ownerId: "alice" } });
      await expect(
        app.api.batch({
          body: {
            requests: [
              { method: "POST", path: "/order", body: { id: "api-2", label: "api" } },
              { method: "DELETE", path: `/order/${bobsOrder}` },
            ],
          },
          headers: ALICE,
        }),
      ).rejects.toMatchObject({ status: 404, code: "NOT_FOUND", index: 1, failure: { code: "NOT_FOUND" } });
      expect((await call(app, "GET", "/api/order/api-2", { headers: ALICE })).status).toBe(404);
    });

    it("client.$batch resolves to a typed tuple of the records", async () => {
      const client = createClient<typeof app>({
        baseURL: "http://localhost/api",
        headers: ALICE,
        fetch: (input, init) => app.handler(new Request(input, init)),
      });
      const { data, error } = await client.$batch((b) => [
        b.order.create({ id: "cl-1", label: "client" }),
        b.line.create({ orderId: "cl-1", sku: "CL-1", quantity: 3 }),
        b.order.update("cl-1", { total: 9 }),
      ]);
      expect(error).toBeNull();
      const [created, added, updated] = data!;
      expect(created.label).toBe("client");
      expect(added.quantity).toBe(3);
      expect(updated.total).toBe(9);
      const failed = await client.$batch((b) => [b.order.create({ label: "no" }), b.order.delete(bobsOrder)]);
      expect(failed.data).toBeNull();
      expect(failed.error).toMatchObject({
        status: 404,
        code: "NOT_FOUND",
        failed: { index: 1, error: { code: "NOT_FOUND" } },
      });
    });
  });
});
