// The admin page when the database goes away: its permissions endpoint (which asks the rules,
// and the record) answers 503, never 500, while the page's own files still load; back when the
// database is. On servers of the test's own (test/own-server.ts), so stopping one disturbs no
// other suite.

import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createExampleApp, type ExampleApp } from "../examples/app.ts";
import { type OwnServer, ownMariadb, ownPostgres, ownServersPresent } from "./own-server.ts";

const suite = ownServersPresent || process.env.CI ? describe : describe.skip;
const KEY = "down-admin-key";
const engines = [
  { name: "postgres" as const, own: () => ownPostgres("admin-down") },
  { name: "mysql" as const, own: () => ownMariadb("admin-down") },
];

for (const engine of engines)
  suite(`${engine.name}: the admin page while the database is down`, () => {
    let own: OwnServer;
    let app: ExampleApp;
    let dir = "";
    beforeAll(async () => {
      own = await engine.own();
      await own.start();
      dir = await mkdtemp(join(tmpdir(), "crudkit-admin-down-"));
      app = createExampleApp({
        database: { provider: engine.name, url: own.url },
        apiKey: KEY,
        uploadDir: dir,
        cache: false,
      });
      await app.ready;
    }, 60_000);
    afterAll(async () => {
      await app?.close();
      await own?.remove();
      if (dir) await rm(dir, { recursive: true, force: true });
    });
    const get = async (path: string) => {
      const res = await app.handler(new Request(`http://local${path}`, { headers: { "x-api-key": KEY } }));
      return { status: res.status, text: await res.text() };
    };

    it("permissions answer 503 (never 500) while it is down, the page still loads, and all is back after", async () => {
      const order = await app.api.createOrder({
        body: { item: "Crate", quantity: 1 },
        headers: { "x-api-key": KEY },
      });
      const asked = [
        "/api/admin/permissions",
        `/api/admin/permissions?resource=order&id=${order.id}&fields=item,cost`,
      ];
      for (const path of asked) expect((await get(path)).status, path).toBe(200);
      await own.stop();
      try {
        for (const path of asked) {
          const { status, text } = await get(path);
          // The per-resource answer asks only rules that need no lookup: it may still be 200.
          expect([200, 503], `${path}: ${text}`).toContain(status);
          if (status === 503) expect(JSON.parse(text).code).toBe("SERVICE_UNAVAILABLE");
          expect(text).not.toMatch(/stack|ECONNREFUSED|\/work\//);
        }
        expect((await get(asked[1]!)).status).toBe(503);
        expect((await get("/api/admin")).status).toBe(200);
      } finally {
        await own.start();
      }
      await expect.poll(async () => (await get(asked[1]!)).status, { timeout: 15_000 }).toBe(200);
    }, 60_000);
  });
