// The database server dies under load and comes back, an operator ends an idle session, a
// connection dies inside a write's transaction: requests get 503 (never 500, never a hang), the app
// recovers by itself, and every create acknowledged with 201 is stored with its audit entry.
// Each engine runs a server of the test's own, so killing it disturbs no other suite.

import { createResource, crudkit } from "crudkit-api";
import { type RunningServer, serve } from "crudkit-api/node";
import { audit } from "crudkit-api/plugins";
import { type Kysely, sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { openProduct, productSchema } from "./fixtures.ts";
import { type OwnServer, ownMariadb, ownPostgres, ownServersPresent } from "./own-server.ts";

const suite = ownServersPresent || process.env.CI ? describe : describe.skip;
const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Engine {
  name: "postgres" | "mysql";
  own: () => Promise<OwnServer>;
  /** Ends every session of the app from the server side, blocking the event loop meanwhile. */
  endSessions: (own: OwnServer) => void;
  /** A statement that runs for two seconds. */
  sleep: string;
}

const engines: Engine[] = [
  {
    name: "postgres",
    own: () => ownPostgres("fault"),
    sleep: "select pg_sleep(2)",
    endSessions: (own) =>
      own.adminSync(`select count(pg_terminate_backend(pid)) from pg_stat_activity
        where pid <> pg_backend_pid() and backend_type = 'client backend' and usename = 'postgres'`),
  },
  {
    name: "mysql",
    own: () => ownMariadb("fault"),
    sleep: "select sleep(2)",
    endSessions(own) {
      const ids = own
        .adminSync("select id from information_schema.processlist where user = 'app'")
        .split("\n")
        .filter((id) => /^\d+$/.test(id));
      if (ids.length > 0) own.adminSync(ids.map((id) => `kill connection ${id};`).join(" "));
    },
  },
];

/**
 * A create whose connection was lost mid-transaction: 503, nothing of it stored, the next create
 * 201, nothing unexpected logged. Closes the app.
 */
async function expectLostThenWorking(
  response: Response,
  name: string,
  {
    app,
    server,
    unexpected,
  }: { app: { db: Kysely<any>; close(): Promise<void> }; server: RunningServer; unexpected: string[] },
): Promise<void> {
  expect(response.status).toBe(503);
  expect(await response.json()).toMatchObject({ code: "SERVICE_UNAVAILABLE" });
  expect(await app.db.selectFrom("product").select("id").where("name", "=", name).execute()).toEqual([]);
  const next = await fetch(`${server.url}/api/product`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ name: `after ${name}`, price: 4 }),
  });
  expect(next.status).toBe(201);
  expect(unexpected).toEqual([]);
  await server.close();
  await app.close();
}

/** Blocks the event loop for `ms`, so the app reads nothing from its sockets meanwhile. */
const blockFor = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

for (const engine of engines) {
  suite(`${engine.name}: the database fails under the app`, () => {
    let own: OwnServer;
    beforeAll(async () => {
      own = await engine.own();
      await own.start();
    }, 60_000);
    afterAll(async () => {
      await own?.remove();
    });

    /** The example's shape: products, audited, served on loopback; 500s and their causes kept. */
    async function startApp(product = openProduct) {
      const unexpected: string[] = [];
      const app = crudkit({
        database: { provider: engine.name, url: own.url },
        autoMigrate: true,
        resources: [product],
        plugins: [audit()],
        log: (message, error) => {
          if (message !== "crudkit: the database is unavailable" && !/connection failed/.test(message))
            unexpected.push(`${message}: ${String(error)}`);
        },
      });
      const server = await serve(app, { port: 0 });
      return { app, server, unexpected };
    }

    it("SIGKILL under 8 writers and 4 readers, 5 rounds: 0 × 500, every acknowledged write stored and audited, back within 2 s", async () => {
      const { app, server, unexpected } = await startApp();
      const acknowledged: string[] = [];
      const statuses: Record<string, number> = {};
      let down = 0;
      let running = true;
      let sequence = 0;
      let lastSuccess = 0;
      const count = (status: number) => {
        statuses[status] = (statuses[status] ?? 0) + 1;
        if (status === 503) down++;
        if (status === 200 || status === 201) lastSuccess = Date.now();
      };
      const request = async (path: string, init?: RequestInit) => {
        try {
          const response = await fetch(`${server.url}${path}`, {
            ...init,
            signal: AbortSignal.timeout(10_000),
          });
          const body = (await response.json()) as { id?: string; code?: string };
          if (response.status === 503) {
            expect(response.headers.get("retry-after")).toBe("2");
            // Pause a little, as a client honouring Retry-After would, without hiding the recovery.
            await wait(50);
          }
          return { status: response.status, body };
        } catch {
          return { status: -1, body: {} }; // a hang past the timeout, or a dropped connection
        }
      };
      const writer = async () => {
        while (running) {
          const { status, body } = await request("/api/product", {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ name: `load ${sequence++}`, price: 1 }),
          });
          if (status === 201) acknowledged.push(body.id!);
          count(status);
        }
      };
      const reader = async () => {
        while (running) {
          const known = acknowledged[acknowledged.length - 1];
          count((await request(known ? `/api/product/${known}` : "/api/product?limit=5")).status);
          count((await request("/api/product?limit=3&search=load")).status);
        }
      };
      const clients = [...Array.from({ length: 8 }, writer), ...Array.from({ length: 4 }, reader)];

      const rounds: { round: number; "503": number; backWithinMs: number }[] = [];
      for (let round = 1; round <= 5; round++) {
        await wait(1000);
        down = 0;
        await own.kill();
        await wait(3000);
        await own.start();
        const accepting = Date.now();
        while (lastSuccess < accepting && Date.now() - accepting < 10_000) await wait(20);
        rounds.push({ round, "503": down, backWithinMs: lastSuccess - accepting });
      }
      await wait(500);
      running = false;
      await Promise.all(clients);
      console.log(`${engine.name} fault loop:`, JSON.stringify(rounds), JSON.stringify(statuses));

      expect(unexpected).toEqual([]);
      expect(Object.keys(statuses).sort()).toEqual(["200", "201", "503"]);
      for (const { "503": refused, backWithinMs } of rounds) {
        expect(refused).toBeGreaterThan(0);
        expect(backWithinMs).toBeGreaterThanOrEqual(0);
        expect(backWithinMs).toBeLessThanOrEqual(2000);
      }
      // Every acknowledged create is stored, with its audit entry.
      const stored = new Set((await app.db.selectFrom("product").select("id").execute()).map((r) => r.id));
      expect(acknowledged.filter((id) => !stored.has(id))).toEqual([]);
      // PostgreSQL queues audit entries until they are sealed, a few milliseconds after commit.
      await app.audit.seal();
      const audited = new Set(
        (
          await app.db
            .selectFrom("audit_logs")
            .select("record_id")
            .where("resource", "=", "product")
            .where("operation", "=", "create")
            .execute()
        ).map((r) => r.record_id),
      );
      expect(acknowledged.filter((id) => !audited.has(id))).toEqual([]);
      // And chained: entries written around each restart (PostgreSQL seals them after commit) too.
      expect(await app.audit.verify()).toMatchObject({ ok: true, unchained: 0 });
      await server.close();
      await app.close();
    }, 150_000);

    it("stopped for 5 s under 8 writers: the default log writes at most 10 lines, and its count is the 503s", async () => {
      const written: string[] = [];
      const spy = vi.spyOn(console, "error").mockImplementation((message: unknown) => {
        written.push(String(message));
      });
      try {
        // No `log` option: the default, flood-guarded log to stderr.
        const app = crudkit({
          database: { provider: engine.name, url: own.url },
          autoMigrate: true,
          resources: [openProduct],
        });
        const server = await serve(app, { port: 0 });
        let running = true;
        let refused = 0;
        let lastCreated = 0;
        const writer = async () => {
          while (running) {
            const response = await fetch(`${server.url}/api/product`, {
              method: "POST",
              headers: { "content-type": "application/json" },
              body: JSON.stringify({ name: "flood", price: 1 }),
              signal: AbortSignal.timeout(10_000),
            }).catch(() => undefined);
            await response?.arrayBuffer();
            if (response?.status === 201) lastCreated = Date.now();
            if (response?.status === 503) {
              refused++;
              await wait(20);
            }
          }
        };
        const clients = Array.from({ length: 8 }, writer);
        await wait(500);
        // The lines of the outage (startup may have written its own before).
        const before = written.length;
        await own.stop();
        await wait(5000);
        await own.start();
        const back = Date.now();
        while (lastCreated < back && Date.now() - back < 10_000) await wait(20);
        running = false;
        await Promise.all(clients);
        expect(refused).toBeGreaterThan(100);
        // The guard ends an episode once its message stayed away for a whole window (5 s).
        await wait(11_000);
        await server.close();
        await app.close();
        const outage = written.slice(before);
        console.log(`${engine.name} flood:`, refused, "answers of 503;", JSON.stringify(outage, null, 1));
        expect(outage.length).toBeLessThanOrEqual(10);
        const ended = outage.filter((line) =>
          line.startsWith("crudkit: the database is unavailable: not seen again"),
        );
        expect(ended.length).toBeGreaterThan(0);
        const total = ended.reduce(
          (sum, line) => sum + Number(/ ([\d,]+) times in all/.exec(line)![1]!.replaceAll(",", "")),
          0,
        );
        expect(total).toBe(refused);
      } finally {
        spy.mockRestore();
      }
    }, 60_000);

    it("idle pooled connections ended by the server: the next reads answer 200 (retried), never 500", async () => {
      const { app, server, unexpected } = await startApp();
      const created = await app.api.createProduct({ body: { name: "kept", price: 2 }, overrideAccess: true });
      for (let attempt = 0; attempt < 5; attempt++) {
        // Fill the pool with idle connections, then end them all from the server side while the
        // app reads nothing: the pool still holds them as good, as it would in the instant after an
        // operator's kill or a proxy's reset.
        await Promise.all(Array.from({ length: 6 }, () => app.api.listProducts({ overrideAccess: true })));
        engine.endSessions(own);
        blockFor(200);
        const [byId, list] = await Promise.all([
          app.api.readProduct({ params: { id: created.id }, overrideAccess: true }),
          app.api.listProducts({ query: { limit: 5 }, overrideAccess: true }),
        ]);
        expect(byId.id).toBe(created.id);
        expect(list.items.length).toBeGreaterThan(0);
        // Over HTTP too, and a write: one that may have reached the server may answer 503, never 500.
        await Promise.all(Array.from({ length: 6 }, () => fetch(`${server.url}/api/product?limit=1`)));
        engine.endSessions(own);
        blockFor(200);
        const [read, write] = await Promise.all([
          fetch(`${server.url}/api/product/${created.id}`),
          fetch(`${server.url}/api/product/${created.id}`, {
            method: "PATCH",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ price: attempt }),
          }),
        ]);
        expect(read.status).toBe(200);
        expect([200, 503]).toContain(write.status);
      }
      expect(unexpected).toEqual([]);
      await server.close();
      await app.close();
    }, 60_000);

    it("a connection lost inside a write's transaction: 503, nothing stored, the next request works", async () => {
      let holding: (() => void) | undefined;
      let inside: (() => void) | undefined;
      const entered = new Promise<void>((resolve) => {
        inside = resolve;
      });
      const held = createResource({
        name: "product",
        schema: productSchema,
        access: { create: true, read: true, update: true, delete: true, list: true },
        hooks: {
          // Inside the create's transaction: the test ends the session while it waits here.
          afterCreate: async ({ record }) => {
            if (record.name !== "held") return;
            inside!();
            await new Promise<void>((resolve) => {
              holding = resolve;
            });
          },
        },
      });
      const { app, server, unexpected } = await startApp(held);
      await app.ready;
      const answer = fetch(`${server.url}/api/product`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ name: "held", price: 3 }),
      });
      await entered;
      engine.endSessions(own);
      await wait(100);
      holding!();
      await expectLostThenWorking(await answer, "held", { app, server, unexpected });
    }, 60_000);

    it("a connection lost while a statement of a write's transaction runs: 503 (the ROLLBACK that follows fails too), nothing stored", async () => {
      let inside: (() => void) | undefined;
      const entered = new Promise<void>((resolve) => {
        inside = resolve;
      });
      const slow = createResource({
        name: "product",
        schema: productSchema,
        access: { create: true, read: true, update: true, delete: true, list: true },
        hooks: {
          // A statement of the create's transaction, running when the test ends the session.
          afterCreate: async ({ record, db }) => {
            if (record.name !== "slow") return;
            inside!();
            await sql.raw(engine.sleep).execute(db);
          },
        },
      });
      const { app, server, unexpected } = await startApp(slow);
      await app.ready;
      const answer = fetch(`${server.url}/api/product`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ name: "slow", price: 3 }),
      });
      await entered;
      await wait(200);
      engine.endSessions(own);
      await expectLostThenWorking(await answer, "slow", { app, server, unexpected });
    }, 60_000);
  });
}
