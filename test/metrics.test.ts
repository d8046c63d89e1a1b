// metrics(): Prometheus text that a real parser reads, counters that match the requests made, a
// fixed set of series whatever the ids, paths and methods, and never public (a token, or a role).

import { createServer } from "node:http";
import { createResource, crudkit, withId } from "crudkit-api";
import { createClient } from "crudkit-api/client";
import { apiKey, cache, idempotency, jwt, metrics, rateLimit } from "crudkit-api/plugins";
import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { forEachDialect } from "./dialects.ts";
import { type PromFamily, parsePrometheusText, sampleValue } from "./prometheus-text.ts";

const TOKEN = "scraper-token-0123456789";
const KEYS = {
  "admin-key-000000": { id: "root", roles: ["admin"] },
  "member-key-00000": { id: "ada", roles: ["member"] },
};

const gizmo = createResource({
  name: "gizmo",
  schema: withId({ name: z.string() }),
  access: { create: true, read: true, list: true, update: true, delete: true },
});

async function scrape(send: (path: string, init?: RequestInit) => Promise<Response>): Promise<PromFamily[]> {
  const response = await send("/api/metrics", { headers: { authorization: `Bearer ${TOKEN}` } });
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
  return parsePrometheusText(await response.text());
}

describe("metrics()", () => {
  forEachDialect((dialect) => {
    it("counts requests by route template, method and status, times them and their statements", async () => {
      const app = crudkit({
        database: await dialect.fresh(),
        autoMigrate: true,
        resources: [gizmo],
        plugins: [metrics({ tokens: TOKEN })],
      });
      await app.ready;
      try {
        const send = (path: string, init?: RequestInit) =>
          app.handler(new Request(`http://localhost${path}`, init));
        const ids: string[] = [];
        for (let i = 0; i < 3; i++) {
          const created = await send("/api/gizmo", {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ name: `g${i}` }),
          });
          expect(created.status).toBe(201);
          ids.push((await created.json()).id);
        }
        for (let i = 0; i < 5; i++) expect((await send(`/api/gizmo/${ids[i % 3]}`)).status).toBe(200);
        expect((await send("/api/gizmo/no-such-id")).status).toBe(404);
        expect((await send("/api/gizmos?limit=2")).status).toBe(200);
        expect((await send("/api/not/a/route")).status).toBe(404);

        // A transaction's BEGIN and COMMIT are statements too.
        await app.db.transaction().execute((trx) => trx.selectFrom("gizmo").select("id").execute());
        const families = await scrape(send);
        const requests = (labels: Record<string, string>) =>
          sampleValue(families, "crudkit_http_requests_total", labels) ?? 0;
        expect(requests({ method: "POST", route: "/api/gizmo", status: "201" })).toBe(3);
        expect(requests({ method: "GET", route: "/api/gizmo/:id", status: "200" })).toBe(5);
        expect(requests({ method: "GET", route: "/api/gizmo/:id", status: "404" })).toBe(1);
        expect(requests({ method: "GET", route: "/api/gizmos", status: "200" })).toBe(1);
        expect(requests({ method: "GET", route: "unmatched", status: "404" })).toBe(1);
        const reads = { method: "GET", route: "/api/gizmo/:id" };
        expect(sampleValue(families, "crudkit_http_request_duration_seconds_count", reads)).toBe(6);
        expect(
          sampleValue(families, "crudkit_http_request_duration_seconds_bucket", { ...reads, le: "+Inf" }),
        ).toBe(6);
        // Every id stays out of the labels.
        const text = JSON.stringify(families);
        for (const id of ids) expect(text).not.toContain(id);
        expect(text).not.toContain("no-such-id");
        expect(text).not.toContain("/api/not/a/route");

        const statements = (operation: string) =>
          sampleValue(families, "crudkit_db_statement_duration_seconds_count", { operation }) ?? 0;
        expect(statements("insert")).toBeGreaterThanOrEqual(3);
        expect(statements("begin")).toBeGreaterThanOrEqual(1);
        expect(statements("commit")).toBeGreaterThanOrEqual(1);
        expect(statements("select")).toBeGreaterThanOrEqual(7);
        // A level nobody reports has no sample: no webhooks() here, no pool on SQLite.
        expect(sampleValue(families, "crudkit_webhook_backlog")).toBeUndefined();
        if (dialect.name === "sqlite")
          expect(sampleValue(families, "crudkit_db_pool_connections")).toBeUndefined();
        if (dialect.name !== "sqlite") {
          const pool = families.find((each) => each.name === "crudkit_db_pool_connections")!.samples;
          expect(pool.map((each) => each.labels.state).sort()).toEqual(["idle", "in_use", "waiting"]);
          expect(sampleValue(families, "crudkit_db_pool_connections", { state: "idle" })).toBeGreaterThan(0);
        }
        const utilisation = sampleValue(families, "crudkit_event_loop_utilization")!;
        expect(utilisation).toBeGreaterThanOrEqual(0);
        expect(utilisation).toBeLessThanOrEqual(1);
        // prom-client's process series, the event loop's delay among them.
        expect(sampleValue(families, "process_cpu_user_seconds_total")).toBeGreaterThan(0);
        expect(sampleValue(families, "process_resident_memory_bytes")).toBeGreaterThan(1_000_000);
        expect(sampleValue(families, "nodejs_eventloop_lag_p99_seconds")).toBeGreaterThanOrEqual(0);
      } finally {
        await app.close();
      }
    });

    if (dialect.name !== "sqlite") {
      it("counts statements the database stopped at the statement timeout", async () => {
        const sleep = dialect.name === "postgres" ? sql`select pg_sleep(2)` : sql`select sleep(2)`;
        const slow = createResource({
          name: "slow",
          schema: withId({ name: z.string() }),
          access: { list: true },
          hooks: { beforeList: async (ctx) => void (await sleep.execute(ctx.db)) },
        });
        const app = crudkit({
          database: await dialect.fresh(),
          autoMigrate: true,
          resources: [slow],
          statementTimeout: 200,
          plugins: [metrics({ tokens: TOKEN })],
        });
        await app.ready;
        try {
          const send = (path: string, init?: RequestInit) =>
            app.handler(new Request(`http://localhost${path}`, init));
          const slowList = await send("/api/slows");
          expect((await slowList.json()).code).toBe("STATEMENT_TIMEOUT");
          const families = await scrape(send);
          expect(sampleValue(families, "crudkit_db_statement_timeouts_total")).toBe(1);
          expect(sampleValue(families, "crudkit_db_statement_errors_total", { operation: "select" })).toBe(1);
        } finally {
          await app.close();
        }
      });
    }

    it("the typed client's calls are requests, logged and counted; app.api's are server code: only their statements count", async () => {
      const logged: Record<string, unknown>[] = [];
      const logger = {
        info: (fields: object, message?: string) => {
          if (message === "request") logged.push(fields as Record<string, unknown>);
        },
        warn() {},
        error() {},
      };
      const app = crudkit({
        database: await dialect.fresh(),
        autoMigrate: true,
        resources: [gizmo],
        plugins: [metrics({ tokens: TOKEN })],
        logger,
        requestLogs: true,
      });
      await app.ready;
      try {
        const send = (path: string, init?: RequestInit) =>
          app.handler(new Request(`http://localhost${path}`, init));
        const client = createClient<typeof app>({
          baseURL: "http://localhost/api",
          fetch: (input, init) => app.handler(new Request(input, init)),
        });
        const { data: created } = await client.gizmo.create({ name: "by the client" });
        expect((await client.gizmo.read(created!.id)).data?.name).toBe("by the client");
        const before = await scrape(send);
        const selects = (families: PromFamily[]) =>
          sampleValue(families, "crudkit_db_statement_duration_seconds_count", { operation: "select" }) ?? 0;
        const made = await app.api.createGizmo({ body: { name: "by app.api" } });
        expect((await app.api.readGizmo({ params: { id: made.id } })).name).toBe("by app.api");
        const after = await scrape(send);
        const requests = (families: PromFamily[], labels: Record<string, string>) =>
          sampleValue(families, "crudkit_http_requests_total", labels) ?? 0;
        // The client's two calls and the two scrapes: each a request with its line; app.api's
        // calls between the scrapes made none.
        expect(requests(after, { method: "POST", route: "/api/gizmo", status: "201" })).toBe(1);
        expect(requests(after, { method: "GET", route: "/api/gizmo/:id", status: "200" })).toBe(1);
        expect(logged.map((line) => `${line.method} ${line.route} ${line.status}`)).toEqual([
          "POST /api/gizmo 201",
          "GET /api/gizmo/:id 200",
          "GET /api/metrics 200",
          "GET /api/metrics 200",
        ]);
        // app.api's read ran its statement, timed as any other.
        expect(selects(after)).toBeGreaterThan(selects(before));
      } finally {
        await app.close();
      }
    });
  });

  describe("sqlite", () => {
    it("is never public: a token, or a user with an allowed role", async () => {
      const app = crudkit({
        database: { provider: "sqlite", url: ":memory:" },
        autoMigrate: true,
        resources: [gizmo],
        plugins: [apiKey({ keys: KEYS }), metrics({ tokens: [TOKEN, "second-token-9876543210"] })],
      });
      await app.ready;
      try {
        const get = (headers: Record<string, string>) =>
          app.handler(new Request("http://localhost/api/metrics", { headers }));
        const anonymous = await get({});
        expect(anonymous.status).toBe(401);
        expect((await anonymous.json()).code).toBe("UNAUTHORIZED");
        expect((await get({ authorization: "Bearer wrong-token-000000000" })).status).toBe(401);
        expect((await get({ authorization: `Basic ${TOKEN}` })).status).toBe(401);
        expect((await get({ authorization: `Bearer ${TOKEN}x` })).status).toBe(401);
        // A NUL byte cannot reach a header (the Headers API and Node's parser refuse it); its escape is just wrong.
        expect((await get({ authorization: `Bearer ${TOKEN}%00` })).status).toBe(401);
        expect((await get({ authorization: `Bearer ${"x".repeat(100_000)}` })).status).toBe(401);
        expect((await get({ authorization: `Bearer ${TOKEN} ${TOKEN}` })).status).toBe(401);
        expect((await get({ "x-api-key": "member-key-00000" })).status).toBe(403);
        expect((await get({ "x-api-key": "admin-key-000000" })).status).toBe(200);
        expect((await get({ authorization: `Bearer ${TOKEN}` })).status).toBe(200);
        expect((await get({ authorization: "bearer second-token-9876543210" })).status).toBe(200);
        const answer = await get({ authorization: `Bearer ${TOKEN}` });
        expect(answer.headers.get("cache-control")).toBe("no-store");
      } finally {
        await app.close();
      }
    });

    it("a scraper's token under jwt() and rateLimit(): read, and never counted as a failed sign-in", async () => {
      const app = crudkit({
        database: { provider: "sqlite", url: ":memory:" },
        autoMigrate: true,
        resources: [gizmo],
        plugins: [
          jwt({ secret: "a-shared-secret-of-32-characters!" }),
          rateLimit({ max: 2, window: 60 }),
          metrics({ tokens: TOKEN, processMetrics: false }),
        ],
      });
      await app.ready;
      try {
        for (let i = 0; i < 5; i++) {
          const answer = await app.handler(
            new Request("http://localhost/api/metrics", {
              headers: { authorization: `Bearer ${TOKEN}` },
            }),
          );
          expect(answer.status).toBe(200);
          expect(answer.headers.get("ratelimit-limit")).toBeNull();
        }
      } finally {
        await app.close();
      }
    });

    it("answers while the database is away (the API answers 503), and ignores what a scrape sends beyond its token", async () => {
      // A PostgreSQL server that is not there: startup keeps failing, requests answer 503.
      const app = crudkit({
        database: { provider: "postgres", url: "postgres://nobody@127.0.0.1:1/none" },
        autoMigrate: true,
        resources: [gizmo],
        plugins: [metrics({ tokens: TOKEN, processMetrics: false })],
        log: () => {},
      });
      await app.ready.catch(() => {});
      try {
        const send = (path: string, init?: RequestInit) =>
          app.handler(new Request(`http://localhost${path}`, init));
        const api = await send("/api/gizmos");
        expect(api.status).toBe(503);
        const bearer = { authorization: `Bearer ${TOKEN}` };
        const hostile = [
          "/api/metrics?__proto__[polluted]=1&constructor[prototype][x]=1",
          `/api/metrics?name=${"x".repeat(10_000)}`,
          "/api/metrics?name=%00%27%3B%20drop%20table%20gizmo%3B--",
        ];
        for (const path of hostile) {
          const answer = await send(path, { headers: bearer });
          expect(answer.status).toBe(200);
          const families = parsePrometheusText(await answer.text());
          expect(sampleValue(families, "crudkit_http_requests_total", { status: "503" })).toBe(1);
          // The pool holds no connection: none idle, none in use.
          expect(sampleValue(families, "crudkit_db_pool_connections", { state: "idle" })).toBe(0);
          expect(sampleValue(families, "crudkit_db_pool_connections", { state: "in_use" })).toBe(0);
        }
        expect(({} as Record<string, unknown>).polluted).toBeUndefined();
        // Only GET (and HEAD) read the metrics; a body changes nothing.
        const posted = await send("/api/metrics", { method: "POST", headers: bearer, body: "{" });
        expect(posted.status).toBe(405);
        expect((await send("/api/metrics", { method: "HEAD", headers: bearer })).status).toBe(200);
      } finally {
        await app.close();
      }
    });

    it("refuses bad options at startup", () => {
      expect(() => metrics({ listen: { port: 0 } })).toThrow(/give tokens/);
      expect(() => metrics({ tokens: "short" })).toThrow(/at least 16 characters/);
      expect(() => metrics({ tokens: ["has a space in it here"] })).toThrow(/no spaces/);
      expect(() => metrics({ listen: { port: 70000 } })).toThrow(/port/);
      expect(() => metrics({ token: TOKEN } as never)).toThrow(/token/);
    });

    it("serves on its own port with `listen`, and not under the app's basePath", async () => {
      const plugin = metrics({ tokens: TOKEN, listen: { port: 0 } });
      const app = crudkit({
        database: { provider: "sqlite", url: ":memory:" },
        autoMigrate: true,
        resources: [gizmo],
        plugins: [plugin],
      });
      await app.ready;
      try {
        expect((await app.handler(new Request("http://localhost/api/gizmos"))).status).toBe(200);
        expect((await app.handler(new Request("http://localhost/api/metrics"))).status).toBe(404);
        const address = plugin.address()!;
        const base = `http://127.0.0.1:${address.port}`;
        expect((await fetch(`${base}/metrics`)).status).toBe(401);
        expect((await fetch(`${base}/other`)).status).toBe(404);
        const scraped = await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
        expect(scraped.status).toBe(200);
        const families = parsePrometheusText(await scraped.text());
        expect(
          sampleValue(families, "crudkit_http_requests_total", { route: "/api/gizmos", status: "200" }),
        ).toBe(1);
      } finally {
        await app.close();
      }
      await expect(fetch(`http://127.0.0.1:${plugin.address()?.port ?? 1}/metrics`)).rejects.toThrow();
    });

    it("10,000 ids, 100 unknown paths and made-up methods add no series", async () => {
      const app = crudkit({
        database: { provider: "sqlite", url: ":memory:" },
        autoMigrate: true,
        resources: [gizmo],
        plugins: [metrics({ tokens: TOKEN, processMetrics: false })],
      });
      await app.ready;
      try {
        const send = (path: string, init?: RequestInit) =>
          app.handler(new Request(`http://localhost${path}`, init));
        const seriesOf = async () =>
          new Set(
            (await scrape(send)).flatMap((each) =>
              each.samples.map((one) => `${one.name}${JSON.stringify(one.labels)}`),
            ),
          );
        // One of each kind first: a read that finds nothing, an unknown path, an odd method.
        await send("/api/gizmo/first");
        await send("/api/unknown-0");
        await send("/api/gizmo/first", { method: "PURGE" });
        // The scrape's own request, counted once it is answered.
        await seriesOf();
        const before = await seriesOf();
        for (let i = 0; i < 10_000; i++) await send(`/api/gizmo/id-${i}`);
        for (let i = 0; i < 100; i++) await send(`/api/unknown-${i}/${"x".repeat(i)}`);
        for (const method of ["PURGE", "LINK", "X-ODD", "PROPFIND"]) await send("/api/gizmo/x", { method });
        const after = await seriesOf();
        expect([...after].filter((each) => !before.has(each))).toEqual([]);
        const families = await scrape(send);
        expect(
          sampleValue(families, "crudkit_http_requests_total", {
            method: "GET",
            route: "/api/gizmo/:id",
            status: "404",
          }),
        ).toBe(10_001);
        expect(
          sampleValue(families, "crudkit_http_requests_total", { method: "other" }),
        ).toBeGreaterThanOrEqual(5);
      } finally {
        await app.close();
      }
    });

    it("counts cache hits and misses, rate-limit refusals and idempotent replays", async () => {
      const app = crudkit({
        database: { provider: "sqlite", url: ":memory:" },
        autoMigrate: true,
        resources: [gizmo],
        plugins: [
          cache(),
          rateLimit({ max: 5, window: 60, operations: ["gizmo.read"], inProcess: true }),
          idempotency(),
          metrics({ tokens: TOKEN, processMetrics: false }),
        ],
      });
      await app.ready;
      try {
        const send = (path: string, init?: RequestInit) =>
          app.handler(new Request(`http://localhost${path}`, init));
        const create = () =>
          send("/api/gizmo", {
            method: "POST",
            headers: { "content-type": "application/json", "idempotency-key": "key-1" },
            body: JSON.stringify({ name: "once" }),
          });
        const first = await create();
        expect(first.status).toBe(201);
        const again = await create();
        expect(again.headers.get("idempotent-replayed")).toBe("true");
        const { id } = await first.json();
        const statuses: number[] = [];
        for (let i = 0; i < 7; i++) statuses.push((await send(`/api/gizmo/${id}`)).status);
        expect(statuses.filter((status) => status === 429)).toHaveLength(2);
        const families = await scrape(send);
        expect(sampleValue(families, "crudkit_idempotent_replays_total")).toBe(1);
        expect(sampleValue(families, "crudkit_rate_limit_refusals_total")).toBe(2);
        expect(sampleValue(families, "crudkit_cache_requests_total", { result: "miss" })).toBe(1);
        expect(sampleValue(families, "crudkit_cache_requests_total", { result: "hit" })).toBe(4);
      } finally {
        await app.close();
      }
    });

    it("counts event streams and the events sent to them", async () => {
      const app = crudkit({
        database: { provider: "sqlite", url: ":memory:" },
        autoMigrate: true,
        resources: [gizmo],
        realtime: true,
        plugins: [metrics({ tokens: TOKEN, processMetrics: false })],
      });
      await app.ready;
      const server = createServer();
      try {
        const send = (path: string, init?: RequestInit) =>
          app.handler(new Request(`http://localhost${path}`, init));
        const controller = new AbortController();
        const stream = await send("/api/gizmos", {
          headers: { accept: "text/event-stream" },
          signal: controller.signal,
        });
        expect(stream.status).toBe(200);
        const reader = stream.body!.getReader();
        await send("/api/gizmo", {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ name: "heard" }),
        });
        let text = "";
        while (!text.includes("event: create")) text += new TextDecoder().decode((await reader.read()).value);
        const families = await scrape(send);
        expect(sampleValue(families, "crudkit_realtime_streams")).toBe(1);
        expect(sampleValue(families, "crudkit_realtime_events_sent_total")).toBe(1);
        await reader.cancel();
        controller.abort();
      } finally {
        server.close();
        await app.close();
      }
    });
  });
});
