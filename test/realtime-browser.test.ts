// Realtime in a real browser: headless Chromium loads a page that imports the client bundle and
// subscribes with client.<resource>.subscribe(), which uses the browser's EventSource (the cookie
// names the caller). Changes made on the server arrive on the page under the caller's row rule and
// filter, without hidden fields; after the server drops the connection, EventSource reconnects
// with Last-Event-ID and the page misses nothing.

import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createResource, crudkit, withId } from "crudkit-api";
import { toNodeListener } from "crudkit-api/node";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { bundleClient } from "../scripts/bundle-client.ts";
import { chromiumPresent, launchChromium } from "./chromium.ts";
import { tempDatabaseUrl } from "./helpers.ts";

const note = createResource({
  name: "note",
  schema: withId({
    text: z.string().max(100),
    owner: z.string(),
    level: z.number().int(),
    secret: z.string().optional(),
  }),
  access: {
    create: true,
    read: true,
    update: true,
    delete: true,
    list: ({ user }) => (user ? { owner: user.id } : false),
    fields: { secret: { read: false } },
  },
});

const app = crudkit({
  database: { provider: "sqlite", url: tempDatabaseUrl() },
  autoMigrate: true,
  resources: [note],
  realtime: { heartbeat: 1 },
  identify: (request) => {
    const user = /(?:^|;\s*)user=(\w+)/.exec(request.headers.get("cookie") ?? "")?.[1];
    return user ? { id: user } : null;
  },
});

const PAGE = `<!doctype html><meta charset="utf-8"><title>live</title><script type="module">
  import { createClient } from "/client.js";
  window.opened = 0;
  window.sources = 0;
  const Native = window.EventSource;
  window.EventSource = class extends Native { constructor(...args) { super(...args); window.sources++; } };
  window.events = [];
  const client = createClient({ baseURL: location.origin + "/api", fetchOptions: { credentials: "include" } });
  client.note.subscribe({ where: { level: { gte: 2 } } }, (event) => window.events.push(event), {
    onOpen: () => window.opened++,
  });
</script>`;

describe.skipIf(!chromiumPresent && !process.env.CI)("realtime in Chromium", () => {
  let browser: Browser;
  let server: Server;
  let origin: string;
  beforeAll(async () => {
    await app.ready;
    const { code } = await bundleClient();
    const api = toNodeListener(app);
    server = createServer((req, res) => {
      if (req.url === "/") return void res.writeHead(200, { "content-type": "text/html" }).end(PAGE);
      if (req.url === "/client.js")
        return void res.writeHead(200, { "content-type": "text/javascript" }).end(code);
      void api(req, res);
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    browser = await launchChromium();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await app.endStreams();
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
    await app.close();
  });

  it("has Chromium (under CI a missing browser is a failure)", () => {
    expect(chromiumPresent).toBe(true);
  });

  it("client.note.subscribe uses EventSource; events arrive under the row rule and filter, and resume after a drop", async () => {
    const context = await browser.newContext();
    await context.addCookies([{ name: "user", value: "ann", url: origin }]);
    const page = await context.newPage();
    await page.goto(origin);
    await page.waitForFunction(() => (window as any).opened === 1);
    expect(await page.evaluate(() => (window as any).sources)).toBe(1);

    const mine = await app.api.createNote({
      body: { text: "for ann", owner: "ann", level: 3, secret: "s3cr3t" },
    });
    await app.api.createNote({ body: { text: "too low", owner: "ann", level: 1 } });
    await app.api.createNote({ body: { text: "bob's", owner: "bob", level: 5 } });
    await app.api.updateNote({ params: { id: mine.id }, body: { level: 4 } });
    await page.waitForFunction(() => (window as any).events.length === 2);
    const events = await page.evaluate(() => (window as any).events);
    expect(events.map((e: any) => [e.type, e.record.text, e.record.level])).toEqual([
      ["create", "for ann", 3],
      ["update", "for ann", 4],
    ]);
    expect(JSON.stringify(events)).not.toContain("s3cr3t");
    expect(events.every((e: any) => typeof e.id === "string" && e.id.length > 0)).toBe(true);

    // The server ends every stream; what changes meanwhile is sent when EventSource comes back.
    await app.endStreams();
    const missed = await app.api.createNote({ body: { text: "while away", owner: "ann", level: 7 } });
    await page.waitForFunction(() => (window as any).opened === 2, undefined, { timeout: 15_000 });
    await page.waitForFunction(() => (window as any).events.length === 3, undefined, { timeout: 15_000 });
    const last = await page.evaluate(() => (window as any).events[2]);
    expect([last.type, last.record.id]).toEqual(["create", missed.id]);
    await context.close();
  }, 60_000);
});
