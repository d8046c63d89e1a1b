// The audit log's routes and the webhook dispatcher when the database goes away: a record's
// history, the chain's head and the log answer 503, never 500, with nothing of the driver in the
// body; the dispatcher, polling a database that is not there, lives through the outage and sends
// the next change once it is back. On servers of the test's own (test/own-server.ts), so stopping
// one disturbs no other suite.

import { mkdtemp, rm } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createExampleApp, type ExampleApp } from "../examples/app.ts";
import { type OwnServer, ownMariadb, ownPostgres, ownServersPresent } from "./own-server.ts";

const suite = ownServersPresent || process.env.CI ? describe : describe.skip;
const KEY = "down-audit-key";
const engines = [
  { name: "postgres" as const, own: () => ownPostgres("audit-down") },
  { name: "mysql" as const, own: () => ownMariadb("audit-down") },
];

for (const engine of engines)
  suite(`${engine.name}: the audit log and webhooks while the database is down`, () => {
    let own: OwnServer;
    let app: ExampleApp;
    let receiver: Server;
    const received: string[] = [];
    let dir = "";
    beforeAll(async () => {
      own = await engine.own();
      await own.start();
      dir = await mkdtemp(join(tmpdir(), "crudkit-audit-down-"));
      receiver = createServer((req, res) => {
        let body = "";
        req.on("data", (chunk) => (body += chunk));
        req.on("end", () => {
          received.push(body);
          res.end();
        });
      });
      await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
      const { port } = receiver.address() as AddressInfo;
      app = createExampleApp({
        database: { provider: engine.name, url: own.url },
        apiKey: KEY,
        uploadDir: dir,
        cache: false,
        realtime: false,
        webhook: {
          url: `http://127.0.0.1:${port}/hook`,
          secret: `whsec_${Buffer.from("a secret of 32 bytes, for tests").toString("base64")}`,
        },
      });
      await app.ready;
    }, 60_000);
    afterAll(async () => {
      await app?.close();
      await own?.remove();
      await new Promise((resolve) => receiver?.close(resolve));
      if (dir) await rm(dir, { recursive: true, force: true });
    });
    const get = async (path: string, method = "GET") => {
      const res = await app.handler(
        new Request(`http://local${path}`, { method, headers: { "x-api-key": KEY } }),
      );
      return { status: res.status, text: await res.text() };
    };
    const create = (name: string) =>
      app.api.createProduct({ body: { name, price: 1 }, headers: { "x-api-key": KEY } });
    const delivered = (id: string) => received.some((body) => body.includes(id));

    it("history, head and log answer 503 while it is down; the dispatcher lives through it and sends after", async () => {
      const before = await create("Before the outage");
      await expect.poll(() => delivered(before.id), { timeout: 15_000 }).toBe(true);
      const asked = [`/api/product/${before.id}/history`, "/api/audit/head", "/api/audit/logs?limit=5"];
      for (const path of asked) expect((await get(path)).status, path).toBe(200);

      await own.stop();
      try {
        for (const path of asked) {
          const { status, text } = await get(path);
          expect(status, `${path}: ${text}`).toBe(503);
          expect(JSON.parse(text).code).toBe("SERVICE_UNAVAILABLE");
          expect(text).not.toMatch(/stack|ECONNREFUSED|connect|\/work\/|\/tmp\//);
          // HEAD runs the same work (and the log is a tagged page, listETags being on): 503 too.
          expect((await get(path, "HEAD")).status, `HEAD ${path}`).toBe(503);
        }
        // The dispatcher polls a database that is not there for a while: nothing may crash.
        await new Promise((resolve) => setTimeout(resolve, 1500));
      } finally {
        await own.start();
      }
      for (const path of asked)
        await expect.poll(async () => (await get(path)).status, { timeout: 20_000 }).toBe(200);
      const after = await create("After the outage");
      await expect.poll(() => delivered(after.id), { timeout: 30_000 }).toBe(true);
    }, 90_000);
  });
