// Realtime on every database: two users with different row rules receive exactly the events they
// may see (a hidden field never appears), filters apply, Last-Event-ID resumes (or says reset),
// a slow consumer is dropped with a final event and memory stays bounded, expired credentials end
// the stream, hostile subscriptions are a 4xx; and across two instances sharing Redis or
// PostgreSQL (LISTEN/NOTIFY), events reach the other instance's subscribers.

import { randomBytes } from "node:crypto";
import { connect } from "node:net";
import {
  APIError,
  createResource,
  crudkit,
  type DatabaseOptions,
  postgresBus,
  type RealtimeBus,
  redisBus,
  withId,
} from "crudkit-api";
import { createClient, type RealtimeEvent } from "crudkit-api/client";
import { type RunningServer, serve } from "crudkit-api/node";
import { jwt } from "crudkit-api/plugins";
import { Redis } from "ioredis";
import { SignJWT } from "jose";
import { afterAll, describe, expect, expectTypeOf, it } from "vitest";
import { z } from "zod";
import { DIALECTS, forEachDialect, servedPerDialect } from "./dialects.ts";
import { call } from "./helpers.ts";

const isRoot = (user: { id: string } | null) => user?.id === "root";

const task = createResource({
  name: "task",
  schema: withId({
    title: z.string().max(100_000),
    owner: z.string(),
    priority: z.number().int().min(0).max(9),
    secret: z.string().optional(),
  }),
  access: {
    create: true,
    read: true,
    update: true,
    delete: true,
    list: ({ user }) => (!user ? false : isRoot(user) ? true : { owner: user.id }),
    fields: { secret: { read: ({ user }) => isRoot(user) } },
  },
});

/** x-user: "ann" or "ann:<expiry ms>", a credential that stops being valid at that time. */
const identify = (request: Request) => {
  const header = request.headers.get("x-user");
  if (!header) return null;
  const [id, expiry] = header.split(":");
  if (expiry !== undefined) {
    if (Date.now() >= Number(expiry)) throw new APIError("UNAUTHORIZED", "The token has expired.");
    return { id: id!, expiresAt: Number(expiry) };
  }
  return { id: id! };
};

const makeApp = (database: DatabaseOptions, realtime: { bus?: RealtimeBus; maxQueued?: number } = {}) =>
  crudkit({ database, autoMigrate: true, resources: [task], realtime, identify });

type App = ReturnType<typeof makeApp>;
type Task = RealtimeEvent<{ id: string; title: string; owner: string; priority: number; secret?: string }>;

/** A subscription through the client (fetch-based in Node), collecting what arrives. */
function listen(server: RunningServer, user: string, where?: object) {
  const events: Task[] = [];
  const resets: string[] = [];
  const closes: string[] = [];
  let opened!: () => void;
  const open = new Promise<void>((resolve) => (opened = resolve));
  const client = createClient<App>({ baseURL: `${server.url}/api`, headers: { "x-user": user } });
  const stop = client.task.subscribe(where ? { where } : undefined, (event) => events.push(event as Task), {
    onOpen: () => opened(),
    onReset: (reason) => resets.push(reason),
    onClose: (reason) => closes.push(reason),
  });
  return { events, resets, closes, open, stop };
}

const settle = (ms = 150) => new Promise((resolve) => setTimeout(resolve, ms));
async function until(check: () => boolean, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error("timed out waiting");
    await settle(20);
  }
}

/** A raw SSE request: status, and the text of what arrived until `stop()`. */
async function rawStream(url: string, headers: Record<string, string>) {
  const controller = new AbortController();
  const response = await fetch(url, {
    headers: { accept: "text/event-stream", ...headers },
    signal: controller.signal,
  });
  let text = "";
  const done = (async () => {
    if (!response.body || response.status !== 200) return;
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return;
        text += value;
      }
    } catch {}
  })();
  return {
    response,
    get text() {
      return text;
    },
    ids: () => [...text.matchAll(/^id: (.+)$/gm)].map((m) => m[1]!),
    stop: async () => {
      controller.abort();
      await done;
    },
  };
}

forEachDialect((dialect) => {
  describe("realtime", () => {
    const served = servedPerDialect(dialect, (database) => makeApp(database, { maxQueued: 64 * 1024 }));
    const api = () => served.app.api;

    it("two users with different row rules get exactly their events; a hidden field never appears", async () => {
      const ann = listen(served.server, "ann");
      const bob = listen(served.server, "bob");
      const root = listen(served.server, "root");
      await Promise.all([ann.open, bob.open, root.open]);
      const a = await api().createTask({
        body: { title: "ann's", owner: "ann", priority: 1, secret: "s3cr3t-ann" },
      });
      const b = await api().createTask({
        body: { title: "bob's", owner: "bob", priority: 2, secret: "s3cr3t-bob" },
      });
      await api().updateTask({ params: { id: a.id }, body: { priority: 5 } });
      // Moved to Bob: from now on his, not Ann's.
      await api().updateTask({ params: { id: a.id }, body: { owner: "bob" } });
      await api().deleteTask({ params: { id: b.id } });
      await until(() => root.events.length === 5 && bob.events.length === 3);
      await settle();
      expect(ann.events.map((e) => [e.type, e.record.id, e.record.priority])).toEqual([
        ["create", a.id, 1],
        ["update", a.id, 5],
      ]);
      expect(bob.events.map((e) => [e.type, e.record.id])).toEqual([
        ["create", b.id],
        ["update", a.id],
        ["delete", b.id],
      ]);
      expect(root.events.map((e) => e.type)).toEqual(["create", "create", "update", "update", "delete"]);
      expect(root.events[0]!.record.secret).toBe("s3cr3t-ann");
      for (const e of [...ann.events, ...bob.events]) {
        expect(e.record).not.toHaveProperty("secret");
        expect(JSON.stringify(e)).not.toContain("s3cr3t");
      }
      for (const s of [ann, bob, root]) s.stop();
    });

    it("filters apply, on top of the row rule", async () => {
      const high = listen(served.server, "ann", { priority: { gte: 7 }, title: { contains: "URGENT" } });
      await high.open;
      await api().createTask({ body: { title: "low urgent", owner: "ann", priority: 1 } });
      const hit = await api().createTask({ body: { title: "very urgent", owner: "ann", priority: 8 } });
      await api().createTask({ body: { title: "high but calm", owner: "ann", priority: 9 } });
      await api().createTask({ body: { title: "urgent, not hers", owner: "bob", priority: 9 } });
      await until(() => high.events.length >= 1);
      await settle();
      expect(high.events.map((e) => e.record.id)).toEqual([hit.id]);
      high.stop();
    });

    it("resumes from Last-Event-ID, in order; an id no longer kept says reset", async () => {
      const url = `${served.server.url}/api/tasks/events`;
      const first = await rawStream(url, { "x-user": "ann" });
      expect(first.response.status).toBe(200);
      expect(first.response.headers.get("content-type")).toContain("text/event-stream");
      await settle(50);
      const one = await api().createTask({ body: { title: "one", owner: "ann", priority: 1 } });
      await until(() => first.ids().length === 1);
      const seen = first.ids()[0]!;
      await first.stop();
      const two = await api().createTask({ body: { title: "two", owner: "ann", priority: 1 } });
      const three = await api().createTask({ body: { title: "three", owner: "ann", priority: 1 } });
      await api().createTask({ body: { title: "not hers", owner: "bob", priority: 1 } });
      const resumed = await rawStream(url, { "x-user": "ann", "last-event-id": seen });
      await until(() => resumed.ids().length === 2);
      const four = await api().createTask({ body: { title: "four", owner: "ann", priority: 1 } });
      await until(() => resumed.ids().length === 3);
      const ids = [...resumed.text.matchAll(/"record":\{"id":"([^"]+)"/g)].map((m) => m[1]);
      expect(ids).toEqual([two.id, three.id, four.id]);
      expect(resumed.text).not.toContain(one.id);
      await resumed.stop();
      const lost = await rawStream(`${url}?lastEventId=00000000-0000-7000-8000-000000000000`, {
        "x-user": "ann",
      });
      await until(() => lost.text.includes("event: reset"));
      await lost.stop();
    });

    it("the list's own URL answers an EventSource (Accept: text/event-stream) with the stream", async () => {
      for (const path of ["/api/tasks", "/api/task"]) {
        const stream = await rawStream(`${served.server.url}${path}?filter[priority]=4`, { "x-user": "ann" });
        expect(stream.response.headers.get("content-type")).toContain("text/event-stream");
        const created = await api().createTask({ body: { title: "negotiated", owner: "ann", priority: 4 } });
        await until(() => stream.text.includes(created.id));
        await stream.stop();
      }
      // Without that Accept it is the list.
      expect(
        (await call(served.app, "GET", "/api/tasks", { headers: { "x-user": "ann" } })).body.items,
      ).toBeDefined();
    });

    it("a slow consumer is dropped with a final event, and what waits for it stays bounded", async () => {
      const { port } = new URL(served.server.url);
      const socket = connect(Number(port), "127.0.0.1");
      await new Promise((resolve) => socket.once("connect", resolve));
      socket.write(
        "GET /api/tasks/events HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\nx-user: root\r\n\r\n",
      );
      socket.pause(); // reads nothing from here on
      await settle(100);
      const before = served.app.realtime!.stats();
      const big = "x".repeat(60_000);
      for (let i = 0; i < 400 && served.app.realtime!.stats().dropped === before.dropped; i++)
        await api().createTask({ body: { title: big, owner: "zed", priority: 1 } });
      expect(served.app.realtime!.stats().dropped).toBe(before.dropped + 1);
      expect(served.app.realtime!.stats().streams).toBe(before.streams - 1);
      // Reading now: the events that were waiting, then the final one, then the end.
      let text = "";
      socket.setEncoding("utf8");
      socket.on("data", (chunk: string) => {
        text += chunk;
      });
      socket.resume();
      await until(() => text.includes("event: dropped"), 20_000);
      socket.destroy();
    });

    it("expired credentials end the stream with an `expired` event", async () => {
      const stream = listen(served.server, `ann:${Date.now() + 400}`);
      await stream.open;
      await until(() => stream.closes.length === 1, 5000);
      expect(stream.closes[0]).toMatch(/access to this stream ended/);
      // Her events no longer reach her.
      await api().createTask({ body: { title: "after expiry", owner: "ann", priority: 1 } });
      await settle();
      expect(stream.events.some((e) => e.record.title === "after expiry")).toBe(false);
      stream.stop();
    });

    it("hostile subscriptions are a 4xx, never a 500 or a stream", async () => {
      const url = `${served.server.url}/api/tasks/events`;
      const cases: [string, Record<string, string>, number][] = [
        ["", {}, 403],
        ["", { "x-user": `ann:${Date.now() - 1}` }, 401],
        ["?page=2", { "x-user": "ann" }, 400],
        ["?filter[nope]=1", { "x-user": "ann" }, 400],
        ["?filter[secret]=x", { "x-user": "ann" }, 400],
        ["?filter[priority][gte]=abc", { "x-user": "ann" }, 400],
        ["?filter[title]=%00", { "x-user": "ann" }, 400],
        [
          `?${"filter[and][0]".repeat(1)}[or][0][not][and][0][or][0][not][and][0][or][0][not][priority]=1`,
          { "x-user": "ann" },
          400,
        ],
        ["?lastEventId=..%2F..%2Fetc", { "x-user": "ann" }, 400],
        ["", { "x-user": "ann", "last-event-id": "x".repeat(101) }, 400],
        ["", { "x-user": "ann", "last-event-id": "' or 1=1 --" }, 400],
      ];
      for (const [query, headers, status] of cases) {
        const response = await fetch(url + query, { headers: { accept: "text/event-stream", ...headers } });
        expect(response.status, query + JSON.stringify(headers)).toBe(status);
        expect(response.headers.get("content-type")).toContain("application/json");
        await response.text();
      }
    });

    it("app.realtime.subscribe streams what the caller named by the headers may see, typed", async () => {
      const app = makeApp(await dialect.fresh());
      await app.ready;
      const events: { type: string; title: string }[] = [];
      const stop = app.realtime!.subscribe(
        "task",
        { headers: { "x-user": "ann" }, where: { priority: { gte: 2 } } },
        (event) => {
          expectTypeOf(event.record.priority).toEqualTypeOf<number>();
          events.push({ type: event.type, title: event.record.title });
        },
      );
      await settle(100);
      await app.api.createTask({ body: { title: "kept", owner: "ann", priority: 2, secret: "s3cr3t" } });
      await app.api.createTask({ body: { title: "low", owner: "ann", priority: 1 } });
      await app.api.createTask({ body: { title: "bob's", owner: "bob", priority: 5 } });
      await until(() => events.length === 1);
      await settle();
      expect(events).toEqual([{ type: "create", title: "kept" }]);
      stop();
      // @ts-expect-error only resources of the app
      expect(() => app.realtime!.subscribe("nope", {}, () => {})).toThrow(/no resource named/);
      await app.close();
    });

    it("the client's events are typed from the resource", () => {
      const client = createClient<App>({ baseURL: "http://127.0.0.1:1/api" });
      type Subscribe = typeof client.task.subscribe;
      expectTypeOf<Parameters<Parameters<Subscribe>[1]>[0]["record"]["priority"]>().toEqualTypeOf<number>();
      expectTypeOf<Parameters<Parameters<Subscribe>[1]>[0]["type"]>().toEqualTypeOf<
        "create" | "update" | "delete"
      >();
      // @ts-expect-error where names the resource's fields
      void (() => client.task.subscribe({ where: { nope: 1 } }, () => {}));
    });
  });
});

const redisUrl = process.env.CRUDKIT_TEST_REDIS_URL;
const postgres = DIALECTS.find((d) => d.name === "postgres")!;

describe.skipIf((postgres.missing || !redisUrl) && !process.env.CI)("realtime across two instances", () => {
  const clients: Redis[] = [];
  const servers: RunningServer[] = [];
  afterAll(async () => {
    for (const server of servers) await server.close();
    for (const client of clients) client.disconnect();
  });
  const redis = () => {
    const client = new Redis(redisUrl!, { maxRetriesPerRequest: 1 });
    clients.push(client);
    return client;
  };

  it("has its Redis and PostgreSQL (under CI a missing service is a failure)", () => {
    expect(postgres.missing).toBeUndefined();
    expect(redisUrl).toBeDefined();
  });

  for (const kind of ["redis", "postgres"] as const) {
    it(`a change on one instance reaches subscribers of the other, under their rules (${kind})`, async () => {
      const database = await postgres.fresh();
      const channel = `ck_${randomBytes(4).toString("hex")}`;
      const bus = () =>
        kind === "redis"
          ? redisBus({ publisher: redis(), subscriber: redis(), channel })
          : postgresBus({ url: database.url, channel });
      const a = await serve(makeApp(database, { bus: bus() }), { port: 0 });
      servers.push(a);
      const b = await serve(makeApp(database, { bus: bus() }), { port: 0 });
      servers.push(b);
      const annOnB = listen(b, "ann");
      const bobOnA = listen(a, "bob");
      await Promise.all([annOnB.open, bobOnA.open]);
      const theirs = await fetch(`${a.url}/api/task`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ title: "made on A", owner: "ann", priority: 2, secret: "s3cr3t" }),
      }).then((r) => r.json() as Promise<{ id: string }>);
      // Larger than a NOTIFY can carry: it travels by id and is read again.
      const large = await fetch(`${b.url}/api/task`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ title: "y".repeat(20_000), owner: "ann", priority: 3 }),
      }).then((r) => r.json() as Promise<{ id: string }>);
      await fetch(`${b.url}/api/task`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ title: "bob's, made on B", owner: "bob", priority: 1 }),
      });
      await until(() => annOnB.events.length === 2 && bobOnA.events.length === 1);
      await settle();
      expect(annOnB.events.map((e) => e.record.id)).toEqual([theirs.id, large.id]);
      expect(annOnB.events[1]!.record.title).toHaveLength(20_000);
      expect(JSON.stringify(annOnB.events)).not.toContain("s3cr3t");
      expect(bobOnA.events.map((e) => e.record.title)).toEqual(["bob's, made on B"]);
      annOnB.stop();
      bobOnA.stop();
    });
  }
});

// The in-memory check of an event against a filter must decide as the database's WHERE does, nulls,
// negations, text matching and all: the same filters, asked of a list and of each record, agree.
forEachDialect((dialect) => {
  describe("the event filter decides as the database does", () => {
    const served = servedPerDialect(dialect, (database) => makeApp(database));
    const filters: object[] = [
      { priority: { gte: 3 } },
      { priority: { ne: 3 } },
      { secret: { isNull: true } },
      { secret: { isNull: false } },
      { secret: { ne: "a" } },
      { not: { secret: "a" } },
      { not: { secret: { in: ["a", "b"] } } },
      { secret: { nin: ["a"] } },
      { or: [{ secret: "a" }, { priority: { lt: 2 } }] },
      { and: [{ not: { priority: 1 } }, { not: { secret: "b" } }] },
      { title: { contains: "ha" } },
      { title: { contains: "%" } },
      { title: { contains: "_" } },
      { title: { startsWith: "h" } },
      { title: { endsWith: "T" } },
      { title: { contains: "é" } },
      { title: { contains: "É" } },
      { title: { endsWith: "fé" } },
      { title: { gt: "hat" } },
      { title: "Hat" },
      { owner: { in: ["ann", "bob"] }, priority: { lte: 5 } },
      { createdAt: { gte: "2000-01-01T00:00:00.000Z" } },
      { createdAt: { lt: "2000-01-01" } },
    ];

    it("for every filter, the records the list returns are the ones the event check lets through", async () => {
      const { parseListFilter } = await import("../src/query/list-query.ts");
      const { matchesWhere } = await import("../src/query/where-match.ts");
      const { flattenFilter } = await import("../src/client/filter-params.ts");
      const { filterFields } = await import("../src/resource/runtime.ts");
      const fields = filterFields(task);
      const rows = [
        { title: "hat", priority: 1, secret: "a" },
        { title: "Hat", priority: 3 },
        { title: "HAT", priority: 5, secret: "b" },
        { title: "50% off", priority: 2, secret: "c" },
        { title: "snake_case", priority: 4 },
        { title: "café", priority: 0, secret: "a" },
        { title: "CAFÉ au lait", priority: 6 },
        { title: "zebra", priority: 9 },
      ];
      for (const row of rows) await served.app.api.createTask({ body: { ...row, owner: "ann" } });
      const all = (await served.app.api.listTasks({ query: { limit: 100 }, overrideAccess: true })).items;
      for (const where of filters) {
        const listed = await served.app.api.listTasks({ query: { where, limit: 100 }, overrideAccess: true });
        const query = Object.fromEntries(flattenFilter(where));
        const condition = parseListFilter(query, { filterable: fields })!;
        const matched = all.filter((r) =>
          matchesWhere(
            condition,
            r,
            fields,
            { sqlite: "ascii case", postgres: "case", mysql: "case and accents" }[dialect.name] as never,
          ),
        );
        expect(matched.map((r) => r.id).sort(), JSON.stringify(where)).toEqual(
          listed.items.map((r) => r.id).sort(),
        );
      }
    });
  });
});

describe("realtime with JWTs", () => {
  it("a token's exp ends the stream (`expired`) once the jwt plugin refuses it", async () => {
    const secret = "a realtime test secret that is long enough";
    const app = crudkit({
      database: { provider: "sqlite", url: ":memory:" },
      autoMigrate: true,
      resources: [task],
      realtime: true,
      plugins: [jwt({ secret, clockTolerance: 0 })],
    });
    const server = await serve(app, { port: 0 });
    const token = await new SignJWT({})
      .setSubject("ann")
      .setExpirationTime(Math.floor(Date.now() / 1000) + 2)
      .setProtectedHeader({ alg: "HS256" })
      .sign(new TextEncoder().encode(secret));
    const stream = await rawStream(`${server.url}/api/tasks/events`, { authorization: `Bearer ${token}` });
    expect(stream.response.status).toBe(200);
    await until(() => stream.text.includes("event: expired"), 6000);
    await stream.stop();
    await server.close();
  });
});
