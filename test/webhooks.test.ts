// webhooks(): a transactional outbox delivered to a real receiver on 127.0.0.1, on every database.
// Every committed change (cascades and uploads included) arrives once on a 2xx; a rolled-back
// write sends nothing; signatures verify with the `standardwebhooks` package (and with either
// secret during a rotation); an outage and 500s are retried with the same webhook-id, in order per
// record; two instances deliver each event once between them; private addresses are refused.

import { lookup } from "node:dns/promises";
import { Agent as HttpAgent } from "node:http";
import { Agent as HttpsAgent } from "node:https";
import { hostname } from "node:os";
import {
  APIError,
  type CrudkitPlugin,
  createResource,
  crudkit,
  type DatabaseOptions,
  MemoryStorage,
  references,
  withId,
} from "crudkit-api";
import { upload, type WebhooksOptions, webhooks } from "crudkit-api/plugins";
import type { Kysely } from "kysely";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { send } from "../src/plugins/webhooks/send.ts";
import { forEachDialect } from "./dialects.ts";
import { type Delivery, type Receiver, startReceiver } from "./webhook-receiver.ts";

const SECRET = `whsec_${Buffer.from("a webhook secret of 32 bytes!!!!").toString("base64")}`;
const NEW_SECRET = `whsec_${Buffer.from("the rotated secret, 32 bytes long").toString("base64")}`;
const open = { create: true, read: true, update: true, delete: true, list: true } as const;

const item = createResource({
  name: "item",
  schema: withId({ name: z.string(), note: z.string().optional() }),
  access: open,
});
const part = createResource({
  name: "part",
  schema: withId({ itemId: references(item, { onDelete: "cascade" }), label: z.string() }),
  access: open,
});

let tripwire = false;
/** After the outbox's hook: when armed it fails the write, so the event inserted rolls back with it. */
const failing: CrudkitPlugin = {
  id: "tripwire",
  hooks: {
    afterCreate: () => {
      if (tripwire) throw new APIError("CONFLICT", "The tripwire refused this create.");
    },
  },
};

/** An app on in-memory SQLite with only the plugin under test (options checked at startup). */
function memoryApp(options: WebhooksOptions) {
  return crudkit({
    database: { provider: "sqlite", url: ":memory:" },
    autoMigrate: true,
    resources: [item],
    log: () => {},
    plugins: [webhooks(options)],
  });
}

const FAST_RETRY = { attempts: 30, firstDelay: 0.1, maxDelay: 0.5 };

function makeApp(database: DatabaseOptions, receiver: Receiver, options: Partial<WebhooksOptions> = {}) {
  const hooks = webhooks({
    endpoints: [{ id: "main", url: receiver.url, secret: [NEW_SECRET, SECRET], events: ["*"] }],
    allowPrivateNetworks: true,
    retry: FAST_RETRY,
    pollInterval: 0.2,
    ...options,
  });
  return crudkit({
    database,
    autoMigrate: true,
    resources: [item, part],
    log: () => {},
    plugins: [
      hooks,
      failing,
      upload({
        storage: new MemoryStorage(),
        access: { upload: true, read: true, download: true, delete: true, list: true },
      }),
    ],
  });
}

type App = ReturnType<typeof makeApp>;

async function http(app: App, method: string, path: string, body?: unknown) {
  const response = await app.handler(
    new Request(`http://localhost${path}`, {
      method,
      headers: body === undefined ? {} : { "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    }),
  );
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined, text };
}

/** The standardwebhooks library's own check: throws when the signature does not verify. */
function verify(delivery: Delivery, secret: string) {
  return new Webhook(secret).verify(delivery.body, {
    "webhook-id": delivery.id,
    "webhook-timestamp": delivery.timestamp,
    "webhook-signature": delivery.signature,
  });
}

const types = (deliveries: readonly Delivery[]) => deliveries.map((d) => d.payload.type);

forEachDialect((dialect) => {
  let receiver: Receiver;
  let app: App;

  beforeAll(async () => {
    receiver = await startReceiver();
    app = makeApp(await dialect.fresh(), receiver);
    await app.ready;
  });
  afterAll(async () => {
    await app?.close();
    await receiver?.close();
  });

  const fresh = async () => {
    await app.webhooks.flush();
    receiver.deliveries.length = 0;
    receiver.refused.length = 0;
  };

  it("delivers every committed create, update, delete, cascade and upload once, signed", async () => {
    await fresh();
    const created = await http(app, "POST", "/api/item", { name: "hat" });
    expect(created.status, created.text).toBe(201);
    const id = created.body.id as string;
    const child = await app.api.createPart({ body: { itemId: id, label: "brim" }, overrideAccess: true });
    expect((await http(app, "PATCH", `/api/item/${id}`, { note: "felt" })).status).toBe(200);
    // The delete cascades to the part: its delete is an event too, before its parent's.
    expect((await http(app, "DELETE", `/api/item/${id}`)).status).toBe(200);
    const uploaded = await http(app, "POST", "/api/upload/file", {
      filename: "notes.txt",
      mimeType: "text/plain",
      file: Buffer.from("hello").toString("base64"),
    });
    expect(uploaded.status, uploaded.text).toBe(201);
    await receiver.waitFor(6);
    await app.webhooks.flush();
    await new Promise((r) => setTimeout(r, 300));
    expect(types(receiver.deliveries).sort()).toEqual(
      [
        "item.create",
        "item.delete",
        "item.update",
        "part.create",
        "part.delete",
        "uploaded_file.create",
      ].sort(),
    );
    expect(new Set(receiver.deliveries.map((d) => d.id)).size).toBe(6);
    const byType = Object.fromEntries(receiver.deliveries.map((d) => [d.payload.type, d.payload]));
    expect(byType["item.update"]!.data).toMatchObject({
      resource: "item",
      operation: "update",
      id,
      record: { id, name: "hat", note: "felt" },
      previous: { id, name: "hat" },
    });
    expect(byType["part.delete"]!.data.record).toMatchObject({ id: child.id, itemId: id });
    expect(byType["uploaded_file.create"]!.data.record).toMatchObject({ id: uploaded.body.id, size: 5 });
    for (const delivery of receiver.deliveries) {
      // Either secret verifies: the receiver may hold the old one or the new one during a rotation.
      expect(verify(delivery, SECRET)).toEqual(delivery.payload);
      expect(verify(delivery, NEW_SECRET)).toEqual(delivery.payload);
      expect(delivery.headers["content-type"]).toBe("application/json");
    }
    const other = `whsec_${Buffer.from("somebody else's secret, 32 bytes").toString("base64")}`;
    expect(() => verify(receiver.deliveries[0]!, other)).toThrow();
    // A body edited on the way fails too.
    expect(() =>
      verify({ ...receiver.deliveries[0]!, body: `${receiver.deliveries[0]!.body} ` }, SECRET),
    ).toThrow();
  });

  it("sends nothing for a write that rolled back", async () => {
    await fresh();
    tripwire = true;
    try {
      const refused = await http(app, "POST", "/api/item", { name: "never" });
      expect(refused.status).toBe(409);
    } finally {
      tripwire = false;
    }
    const kept = await http(app, "POST", "/api/item", { name: "kept" });
    await receiver.waitFor(1);
    await app.webhooks.flush();
    await new Promise((r) => setTimeout(r, 300));
    expect(receiver.deliveries.map((d) => d.payload.data.record.name)).toEqual(["kept"]);
    expect(receiver.deliveries[0]!.payload.data.id).toBe(kept.body.id);
    const status = await app.webhooks.status();
    expect(status).toEqual([
      { endpoint: "main", pending: 0, failing: 0, delivered: expect.any(Number), dead: 0 },
    ]);
  });

  it("retries an outage, then 500s, with the same webhook-id, in order per record", async () => {
    await fresh();
    await receiver.down();
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await http(app, "POST", "/api/item", { name: `r${i}` })).body.id);
    // Several changes to one record while the receiver is away: they must arrive in this order.
    for (let i = 0; i < 4; i++) await http(app, "PATCH", `/api/item/${ids[0]}`, { note: `v${i}` });
    await new Promise((r) => setTimeout(r, 5000));
    let fails = 0;
    receiver.answer = () => (fails++ < 3 ? 500 : 200);
    await receiver.up();
    try {
      await receiver.waitFor(7, 30_000);
    } finally {
      receiver.answer = 200;
    }
    await app.webhooks.flush();
    expect(receiver.refused).toHaveLength(3);
    // Each refused attempt came back under its own id: the receiver can deduplicate.
    const accepted = new Set(receiver.deliveries.map((d) => d.id));
    for (const attempt of receiver.refused) expect(accepted.has(attempt.id)).toBe(true);
    expect(accepted.size).toBe(7);
    const notes = receiver.deliveries
      .filter((d) => d.payload.data.id === ids[0] && d.payload.type === "item.update")
      .map((d) => d.payload.data.record.note);
    expect(notes).toEqual(["v0", "v1", "v2", "v3"]);
    const firstOfRecord = receiver.deliveries.findIndex((d) => d.payload.data.id === ids[0]);
    expect(receiver.deliveries[firstOfRecord]!.payload.type).toBe("item.create");
  }, 60_000);

  it("counts, dead-letters and replays per endpoint, and says degraded while a backlog waits", async () => {
    const deadReceiver = await startReceiver();
    const dead = makeApp(await dialect.fresh(), deadReceiver, {
      retry: { attempts: 2, firstDelay: 0.1, maxDelay: 0.1 },
      backlogEvents: 1,
    });
    try {
      await dead.ready;
      deadReceiver.answer = 503;
      await dead.api.createItem({ body: { name: "lost" }, overrideAccess: true });
      const until = Date.now() + 10_000;
      while ((await dead.webhooks.status())[0]!.dead === 0 && Date.now() < until)
        await new Promise((r) => setTimeout(r, 100));
      expect(await dead.webhooks.status()).toEqual([
        { endpoint: "main", pending: 0, failing: 0, delivered: 0, dead: 1 },
      ]);
      expect(deadReceiver.refused).toHaveLength(2);
      // The receiver recovers; the operator replays since an hour ago.
      deadReceiver.answer = 200;
      expect(await dead.webhooks.replay({ endpoint: "main", since: new Date(Date.now() - 3600_000) })).toBe(
        1,
      );
      await deadReceiver.waitFor(1);
      expect(deadReceiver.deliveries[0]!.id).toBe(deadReceiver.refused[0]!.id);
      await expect(dead.webhooks.replay({ endpoint: "nope", since: new Date() })).rejects.toThrow(
        /no endpoint "nope"/,
      );
      await expect(dead.webhooks.replay({ endpoint: "main", since: "not a time" })).rejects.toThrow(
        /not a time/,
      );
      // Only ISO 8601: Date() would read this as a day in 2001.
      await expect(dead.webhooks.replay({ endpoint: "main", since: "March 7" })).rejects.toThrow(/ISO 8601/);
      // A day the calendar does not have, which Date() would read as March 1.
      await expect(dead.webhooks.replay({ endpoint: "main", since: "2024-02-30" })).rejects.toThrow(
        /not a time/,
      );
      // A backlog: the receiver is away, and an event waits.
      await deadReceiver.down();
      const health = async () => (await dead.handler(new Request("http://localhost/api/health"))).json();
      await dead.webhooks.flush();
      expect(await health()).toMatchObject({ status: "ok", checks: { webhooks: "ok" } });
      await dead.webhooks.flush();
      // An event due an hour ago and never sent (written as another instance would have).
      const anHourAgo = new Date(Date.now() - 3600_000);
      const when = dialect.name === "sqlite" ? anHourAgo.toISOString() : anHourAgo;
      await (dead.db as Kysely<any>)
        .insertInto("webhook_events")
        .values({
          id: "0190a0a0-0000-7000-8000-000000000001",
          endpoint: "main",
          type: "item.create",
          queue: "main item:x",
          body: "{}",
          created_at: when,
          status: "pending",
          attempts: 0,
          next_attempt_at: when,
        })
        .execute();
      const response = await dead.handler(new Request("http://localhost/api/health"));
      expect(response.status).toBe(200);
      expect(await response.json()).toMatchObject({ status: "degraded", checks: { webhooks: "degraded" } });
    } finally {
      await dead.close();
      await deadReceiver.close();
    }
  }, 30_000);

  it("sends only the fields an endpoint names", async () => {
    const narrowReceiver = await startReceiver();
    const narrow = crudkit({
      database: await dialect.fresh(),
      autoMigrate: true,
      resources: [item],
      plugins: [
        webhooks({
          endpoints: [
            {
              id: "names",
              url: narrowReceiver.url,
              secret: SECRET,
              events: ["item.create"],
              fields: ["name"],
            },
          ],
          allowPrivateNetworks: true,
        }),
      ],
    });
    try {
      await narrow.ready;
      const created = await narrow.api.createItem({
        body: { name: "n", note: "private" },
        overrideAccess: true,
      });
      await narrow.api.updateItem({ params: { id: created.id }, body: { note: "x" }, overrideAccess: true });
      await narrowReceiver.waitFor(1);
      await narrow.webhooks.flush();
      expect(narrowReceiver.deliveries).toHaveLength(1);
      expect(narrowReceiver.deliveries[0]!.payload.data).toEqual({
        resource: "item",
        operation: "create",
        id: created.id,
        record: { name: "n" },
        userId: null,
      });
    } finally {
      await narrow.close();
      await narrowReceiver.close();
    }
  });
});

forEachDialect(
  (dialect) => {
    it("two instances on one database deliver each event once between them", async () => {
      const receiver = await startReceiver();
      const database = await dialect.fresh();
      const one = makeApp(database, receiver, { pollInterval: 0.05 });
      await one.ready;
      const two = makeApp(database, receiver, { pollInterval: 0.05 });
      await two.ready;
      try {
        // Writes on both, at once: each instance is woken by its own and polls for the other's.
        await Promise.all(
          Array.from({ length: 200 }, (_, i) =>
            (i % 2 ? one : two).api.createItem({ body: { name: `i${i}` }, overrideAccess: true }),
          ),
        );
        await receiver.waitFor(200);
        await Promise.all([one.webhooks.flush(), two.webhooks.flush()]);
        await new Promise((r) => setTimeout(r, 500));
        expect(receiver.deliveries).toHaveLength(200);
        expect(new Set(receiver.deliveries.map((d) => d.id)).size).toBe(200);
      } finally {
        await one.close();
        await two.close();
        await receiver.close();
      }
    }, 60_000);
  },
  ["postgres", "mysql"],
);

forEachDialect(
  (dialect) => {
    it("an instance with deliver: false writes events and sends none; a worker sends what it wrote", async () => {
      const receiver = await startReceiver();
      const database = await dialect.fresh();
      const api = makeApp(database, receiver, { pollInterval: 0.05, deliver: false });
      await api.ready;
      let worker: App | undefined;
      try {
        for (let i = 0; i < 20; i++)
          await api.api.createItem({ body: { name: `w${i}` }, overrideAccess: true });
        await new Promise((r) => setTimeout(r, 300));
        expect(receiver.deliveries).toHaveLength(0);
        expect((await api.webhooks.status())[0]).toMatchObject({ pending: 20, delivered: 0 });
        worker = makeApp(database, receiver, { pollInterval: 0.05 });
        await worker.ready;
        await receiver.waitFor(20);
        // Different records go out side by side: the order holds per record only.
        expect(receiver.deliveries.map((d) => d.payload.data.record.name).sort()).toEqual(
          Array.from({ length: 20 }, (_, i) => `w${i}`).sort(),
        );
      } finally {
        await api.close();
        await worker?.close();
        await receiver.close();
      }
    }, 60_000);
  },
  ["sqlite", "postgres", "mysql"],
);

describe("addresses a webhook may not reach", () => {
  const endpoint = (url: string) => ({ id: "x", url, secret: SECRET, events: ["*"] });
  it.each([
    "http://127.0.0.1/hooks",
    "http://10.1.2.3/",
    "http://172.16.0.1/",
    "http://192.168.1.1/",
    "http://169.254.169.254/latest/meta-data/",
    "http://100.64.0.1/",
    "http://0.0.0.0/",
    "http://[::1]/",
    "http://[fd00:ec2::254]/",
    "http://[fe80::1]/",
    "http://[::ffff:127.0.0.1]/",
    "http://[::ffff:a9fe:a9fe]/",
    "http://localhost:8080/",
    "http://api.localhost/",
    "http://2130706433/", // 127.0.0.1 as one number: the URL parser reads it as that address
    "http://0x7f.1/",
    // IPv6 spellings of IPv4 hosts (the parser writes [::127.0.0.1] as [::7f00:1]): compatible,
    // translated, 6to4, and Teredo, which hides the host it tunnels to.
    "http://[::127.0.0.1]/",
    "http://[::a9fe:a9fe]/",
    "http://[::ffff:0:127.0.0.1]/",
    "http://[2002:a9fe:a9fe::]/",
    "http://[2002:7f00:1::1]/",
    "http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/",
    // The root's dot: the same name to a resolver.
    "http://localhost./",
    "http://localhost%2e/",
    "http://api.localhost../",
  ])("refuses %s at startup without allowPrivateNetworks", (url) => {
    expect(() => webhooks({ endpoints: [endpoint(url)] })).toThrow(/private or loopback/);
  });

  it.each([
    "https://example.com./hooks",
    "https://[2606:4700::1111]/",
    "https://[2002:808:808::1]/", // 6to4 of a public address
    "https://[::ffff:8.8.8.8]/",
  ])("accepts %s, a public address", (url) => {
    expect(() => webhooks({ endpoints: [endpoint(url)] })).not.toThrow();
  });

  it.each([
    ["ftp://example.com/", /http or https/],
    ["file:///etc/passwd", /http or https/],
    ["not a url", /not a URL/],
    ["https://user:pass@example.com/", /credentials/],
  ])("refuses %s", (url, message) => {
    expect(() => webhooks({ endpoints: [endpoint(url)] })).toThrow(message);
  });

  it("refuses bad secrets, events, ids and options, naming them", () => {
    const ok = { id: "x", url: "https://example.com/", secret: SECRET, events: ["*"] };
    expect(() => webhooks({ endpoints: [{ ...ok, secret: "plain" }] })).toThrow(/whsec_/);
    expect(() => webhooks({ endpoints: [{ ...ok, secret: "whsec_c2hvcnQ=" }] })).toThrow(/24 to 64 bytes/);
    expect(() => webhooks({ endpoints: [{ ...ok, secret: "whsec_!!!!" }] })).toThrow(/24 to 64 bytes/);
    expect(() => webhooks({ endpoints: [{ ...ok, events: [] }] })).toThrow(/needs events/);
    expect(() => webhooks({ endpoints: [{ ...ok, id: "a b" }] })).toThrow(/id of 1 to 64/);
    expect(() => webhooks({ endpoints: [ok, ok] })).toThrow(/two endpoints have the id "x"/);
    expect(() => webhooks({ endpoints: [{ ...ok, headers: { "x-a": "1\r\nx-b: 2" } }] })).toThrow(
      /not a valid header/,
    );
    expect(() => webhooks({ endpoints: [{ ...ok, headers: { "webhook-id": "1" } }] })).toThrow(
      /set by crudkit/,
    );
    // A value Node would refuse to send (past Latin-1): refused now, not at every delivery.
    expect(() => webhooks({ endpoints: [{ ...ok, headers: { "x-note": "café ✓" } }] })).toThrow(
      /"x-note" is not a valid header/,
    );
    expect(() => webhooks({ endpoints: [{ ...ok, headers: { "x-note": "café\tok" } }] })).not.toThrow();
    // Past a Node timer's range, a timer fires after 1 ms: every delivery a timeout, a busy poll.
    expect(() => webhooks({ endpoints: [ok], timeout: 3_000_000 })).toThrow(
      /timeout must be at most 2147483 seconds/,
    );
    expect(() => webhooks({ endpoints: [ok], pollInterval: 3_000_000 })).toThrow(
      /pollInterval must be at most/,
    );
    expect(() => webhooks({ endpoints: [ok], timeout: 2_147_483 })).not.toThrow();
    expect(() =>
      webhooks({ endpoints: [{ ...ok, url: "https://example.com/", evnets: ["*"] } as never] }),
    ).toThrow(/evnets/);
    expect(() => webhooks({ endpoints: [ok], timeout: -1 })).toThrow(/timeout must be a positive number/);
    expect(() => webhooks({ endpoints: [ok], deliver: "no" as never })).toThrow(
      /deliver must be true or false/,
    );
    expect(() => webhooks({ endpoints: [ok], retry: { attempts: 0 } })).toThrow(/attempts/);
    expect(() => webhooks({ endpoints: [] })).toThrow(/at least one endpoint/);
  });

  it("an attempt Node refuses to send fails alone, with a reason, and the next one goes", async () => {
    // Startup refuses such a header; this is the send itself, should anything else throw there.
    const receiver = await startReceiver();
    const agents = { http: new HttpAgent(), https: new HttpsAgent() };
    const options = { timeoutMs: 2000, allowPrivateNetworks: true, agents };
    try {
      const url = new URL(receiver.url);
      const refused = await send({ url, headers: { "x-note": "café ✓" } }, {}, "{}", options);
      expect(refused).toEqual({ ok: false, reason: "not sent (ERR_INVALID_CHAR)" });
      expect(await send({ url, headers: {} }, {}, "{}", options)).toEqual({ ok: true });
      expect(receiver.deliveries).toHaveLength(1);
    } finally {
      agents.http.destroy();
      await receiver.close();
    }
  });

  it("refuses an event that names no resource when the app starts", async () => {
    const app = memoryApp({
      endpoints: [{ id: "x", url: "https://example.com/", secret: SECRET, events: ["iten.create"] }],
    });
    await expect(app.ready).rejects.toThrow(/"iten.create" names no resource/);
    await app.close();
    for (const event of ["item.upsert", "item", "item.create.x", "", "*.*.*"])
      expect(() =>
        webhooks({ endpoints: [{ id: "x", url: "https://example.com/", secret: SECRET, events: [event] }] }),
      ).toThrow(/is not an event/);
  });

  it("refuses, when the app starts, a field to send that no resource its events name has", async () => {
    const endpoint = (events: string[], fields: string[]) => ({
      endpoints: [{ id: "narrow", url: "https://example.com/", secret: SECRET, events, fields }],
    });
    const refused: [string[], string[]][] = [
      [["item.create"], ["nmae"]],
      // Built-in keys are not fields, whatever an object holds.
      [["item.*"], ["__proto__"]],
      [["*"], ["constructor"]],
      [["uploaded_file.create"], ["name"]],
      [["item.update"], ["name", "nul\u0000"]],
    ];
    for (const [events, fields] of refused) {
      const app = memoryApp(endpoint(events, fields));
      await expect(app.ready).rejects.toThrow(/is a field of none of the resources its events name/);
      await app.close();
    }
    const allowed: [string[], string[]][] = [
      [["item.create"], ["name", "id"]],
      [["*.delete"], ["note"]],
      [["*"], ["originalName"]],
      [
        ["uploaded_file.*", "item.create"],
        ["mimeType", "name"],
      ],
    ];
    for (const [events, fields] of allowed) {
      const app = memoryApp(endpoint(events, fields));
      await expect(app.ready).resolves.toBeUndefined();
      await app.close();
    }
  });

  it("refuses at send time a name that resolves to a private address, and follows no redirect", async () => {
    // A name this machine resolves to one of its own private addresses (its hosts file).
    let name: string | undefined;
    for (const candidate of ["ip6-localhost", "ip6-loopback", hostname()]) {
      const found = await lookup(candidate, { all: true }).catch(() => []);
      if (found.length > 0) {
        name = candidate;
        break;
      }
    }
    expect(name, "a name that resolves to a private address").toBeDefined();
    const receiver = await startReceiver();
    const app = memoryApp({
      endpoints: [
        { id: "rebound", url: `http://${name}:${receiver.port}/hooks`, secret: SECRET, events: ["*"] },
      ],
      retry: { attempts: 1, firstDelay: 1 },
    });
    try {
      await app.ready;
      await app.api.createItem({ body: { name: "x" }, overrideAccess: true });
      await app.webhooks.flush();
      expect(await app.webhooks.status()).toEqual([
        { endpoint: "rebound", pending: 0, failing: 0, delivered: 0, dead: 1 },
      ]);
      const [row] = await (app.db as Kysely<any>).selectFrom("webhook_events").select("last_error").execute();
      expect(row!.last_error).toBe("private address");
      expect(receiver.deliveries).toHaveLength(0);
      expect(receiver.refused).toHaveLength(0);
    } finally {
      await app.close();
    }
    // A redirect is a failure, not a hop: the receiver answers 301 to the metadata address.
    receiver.answer = 301;
    const redirected = memoryApp({
      endpoints: [{ id: "moved", url: receiver.url, secret: SECRET, events: ["*"] }],
      allowPrivateNetworks: true,
      retry: { attempts: 1, firstDelay: 1 },
    });
    try {
      await redirected.ready;
      await redirected.api.createItem({ body: { name: "x" }, overrideAccess: true });
      await redirected.webhooks.flush();
      const [row] = await (redirected.db as Kysely<any>)
        .selectFrom("webhook_events")
        .select("last_error")
        .execute();
      expect(row!.last_error).toBe("redirect 301 (not followed)");
      expect(receiver.refused).toHaveLength(1);
    } finally {
      await redirected.close();
      await receiver.close();
    }
  });
});
