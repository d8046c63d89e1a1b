// Issue 42 §4, written as the attack: with cookie identity, another site's page made writes as
// the victim without a preflight (a body without Content-Type from `fetch(…, { mode: "no-cors" })`
// or `sendBeacon`, and `POST /_rpc/deleteFile`). Now a write without `Content-Type:
// application/json` is 415, and a write carrying cookies from another site is 403 unless CORS
// lists that origin with credentials. Driven through the handler, then in headless Chromium with
// an attacker page on another port.

import { createServer, type Server } from "node:http";
import { createResource, crudkit, type DatabaseOptions, MemoryStorage, withId } from "crudkit-api";
import { type RunningServer, serve } from "crudkit-api/node";
import { upload } from "crudkit-api/plugins";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { chromiumPresent, launchChromium } from "./chromium.ts";
import { appPerDialect, forEachDialect } from "./dialects.ts";
import { call, tempDatabaseUrl } from "./helpers.ts";

const note = createResource({
  name: "note",
  schema: withId({ text: z.string().max(100) }),
  access: {
    create: ({ user }) => user !== null,
    read: ({ user }) => user !== null,
    list: ({ user }) => user !== null,
    update: ({ user }) => user !== null,
    delete: ({ user }) => user !== null,
  },
});

/** Cookie identity, as betterAuth() or a session cookie gives it. */
const identify = (request: Request) =>
  /(?:^|;\s*)session=alice(?:;|$)/.test(request.headers.get("cookie") ?? "") ? { id: "alice" } : null;

const makeApp = (database: DatabaseOptions, allowed?: string) =>
  crudkit({
    database,
    autoMigrate: true,
    resources: [note],
    identify,
    plugins: [
      upload({
        storage: new MemoryStorage(),
        access: { upload: ({ user }) => user !== null, read: true, list: true, delete: true },
      }),
    ],
    ...(allowed ? { cors: { origin: [allowed], credentials: true } } : {}),
  });

const cookie = { cookie: "session=alice" };

// The handler's rules, on SQLite and PostgreSQL; the browser attack below, on SQLite.
forEachDialect(
  (dialect) => {
    describe("writes without a JSON content type", () => {
      const app = appPerDialect(dialect, (database) => makeApp(database));

      it("are 415 on resources, uploads and _rpc, and store nothing", async () => {
        const sent = [
          ["/api/note", JSON.stringify({ text: "no type" })],
          ["/api/upload/file", JSON.stringify({ file: "aGk=", filename: "a.txt", mimeType: "text/plain" })],
          ["/api/_rpc/deleteFile", JSON.stringify({ id: "x" })],
        ] as const;
        for (const [path, body] of sent)
          for (const type of [
            undefined,
            "text/plain",
            "multipart/form-data; boundary=x",
            "application/x-www-form-urlencoded",
          ]) {
            const res = await call(app, "POST", path, {
              headers: { ...cookie, ...(type ? { "content-type": type } : {}) },
              // Bytes, not a string: a string body would get text/plain from the Request itself.
              rawBody: new TextEncoder().encode(body),
            });
            expect(res.status, `${path} ${type}`).toBe(415);
            expect(res.body.code).toBe("UNSUPPORTED_MEDIA_TYPE");
          }
        const patched = await call(app, "PATCH", "/api/note/x", {
          headers: cookie,
          rawBody: new TextEncoder().encode('{"text":"t"}'),
        });
        expect(patched.status).toBe(415);
        expect((await call(app, "GET", "/api/notes", { headers: cookie })).body.items).toEqual([]);
      });
    });

    describe("writes with cookies from another site", () => {
      const app = appPerDialect(dialect, (database) => makeApp(database, "http://partner.test"));
      const post = (headers: Record<string, string>) =>
        call(app, "POST", "/api/note", {
          headers: { ...headers, "content-type": "application/json" },
          rawBody: '{"text":"t"}',
        });

      it("are 403 when Sec-Fetch-Site or the Origin says another site, unless CORS lists it", async () => {
        for (const headers of [
          { ...cookie, "sec-fetch-site": "cross-site", origin: "http://evil.test" },
          { ...cookie, "sec-fetch-site": "same-site", origin: "http://sub.localhost" },
          { ...cookie, origin: "null" },
          { ...cookie, origin: "http://evil.test" },
        ]) {
          const res = await post(headers);
          expect(res.status, JSON.stringify(headers)).toBe(403);
          expect(res.body.code).toBe("FORBIDDEN");
        }
        const deleted = await call(app, "DELETE", "/api/note/x", {
          headers: { ...cookie, "sec-fetch-site": "cross-site", origin: "http://evil.test" },
        });
        expect(deleted.status).toBe(403);
        expect((await call(app, "GET", "/api/notes", { headers: cookie })).body.items).toEqual([]);
      });

      it("pass from the same origin, from a listed origin, and without cookies", async () => {
        expect(
          (await post({ ...cookie, "sec-fetch-site": "same-origin", origin: "http://localhost" })).status,
        ).toBe(201);
        expect((await post({ ...cookie, origin: "http://localhost" })).status).toBe(201);
        expect((await post({ ...cookie, "sec-fetch-site": "none" })).status).toBe(201);
        expect(
          (await post({ ...cookie, "sec-fetch-site": "cross-site", origin: "http://partner.test" })).status,
        ).toBe(201);
        // No cookie: the caller names herself (an API key, a bearer token); here anonymous, so 403 by the rule.
        const anonymous = await post({ "sec-fetch-site": "cross-site", origin: "http://evil.test" });
        expect(anonymous.body.message).not.toContain("another site");
      });
    });
  },
  ["sqlite", "postgres"],
);

const suite = chromiumPresent || process.env.CI ? describe : describe.skip;

suite("in Chromium: an attacker page on another port", () => {
  const app = makeApp({ provider: "sqlite", url: tempDatabaseUrl() });
  let api: RunningServer;
  let attacker: Server;
  let browser: Browser;
  let attackerUrl = "";
  const statuses: number[] = [];

  beforeAll(async () => {
    api = await serve(
      {
        ready: app.ready,
        close: () => app.close(),
        handler: async (request) => {
          const response = await app.handler(request);
          if (request.method !== "GET") statuses.push(response.status);
          return response;
        },
      },
      { port: 0 },
    );
    const target = api.url;
    const page = `<!doctype html><html lang="en"><title>win a prize</title><body><h1>Prize</h1><script>
      const body = JSON.stringify({ text: "pwned" });
      fetch("${target}/api/note", { method: "POST", mode: "no-cors", credentials: "include", body: new Blob([body]) });
      fetch("${target}/api/note", { method: "POST", mode: "no-cors", credentials: "include",
        headers: { "content-type": "text/plain" }, body });
      navigator.sendBeacon("${target}/api/note", new Blob([body], { type: "text/plain" }));
      fetch("${target}/api/_rpc/deleteFile", { method: "POST", mode: "no-cors", credentials: "include", body: '{"id":"x"}' })
        .finally(() => { document.title = "done"; });
    </script></body></html>`;
    attacker = createServer((_, res) => res.writeHead(200, { "content-type": "text/html" }).end(page));
    await new Promise<void>((resolve) => attacker.listen(0, "127.0.0.1", resolve));
    attackerUrl = `http://127.0.0.1:${(attacker.address() as { port: number }).port}/`;
    browser = await launchChromium();
  }, 30_000);

  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => attacker?.close(resolve));
    await api?.close();
  });

  it("creates nothing and deletes nothing as the victim", async () => {
    const context = await browser.newContext();
    await context.addCookies([{ name: "session", value: "alice", url: api.url }]);
    const page = await context.newPage();
    await page.goto(attackerUrl);
    await page.waitForFunction(() => document.title === "done", undefined, { timeout: 10_000 });
    // The beacon is sent in the background: wait until the server has answered all four.
    for (let i = 0; i < 50 && statuses.length < 4; i++) await new Promise((r) => setTimeout(r, 100));
    await context.close();
    expect(statuses.length).toBe(4);
    expect(statuses.every((s) => s === 403 || s === 415)).toBe(true);
    const notes = await app.api.listNotes({ overrideAccess: true });
    expect(notes.items).toEqual([]);
  }, 30_000);
});
