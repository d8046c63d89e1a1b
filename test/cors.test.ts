// CORS: preflights answer 204 with the allowed origin's headers instead of 405, answers (errors
// too) carry them with `Vary: Origin`, a refused origin gets none; then for real, a page in
// headless Chromium on one port calls the API on another, from an allowed and a refused origin.

import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { apiKey, type CorsOptions, createResource, crudkit, withId } from "crudkit-api";
import { serve } from "crudkit-api/node";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { chromiumPresent, launchChromium } from "./chromium.ts";
import { tempDatabaseUrl } from "./helpers.ts";

const ALLOWED = "http://app.example.test";
const signedIn = ({ user }: { user: unknown }) => user !== null;
const note = createResource({
  name: "note",
  schema: withId({ text: z.string().max(100) }),
  access: { create: signedIn, read: signedIn, list: signedIn, update: signedIn, delete: signedIn },
});

const makeApp = (cors: CorsOptions) =>
  crudkit({
    database: { provider: "sqlite", url: tempDatabaseUrl() },
    autoMigrate: true,
    resources: [note],
    plugins: [apiKey({ keys: { "cors-key": { id: "u" } } })],
    cors,
  });

const preflight = (origin: string, headers = "x-api-key, content-type") =>
  new Request("http://api.test/api/notes", {
    method: "OPTIONS",
    headers: { origin, "access-control-request-method": "POST", "access-control-request-headers": headers },
  });

describe("CORS", () => {
  const app = makeApp({ origin: [ALLOWED], credentials: true, maxAge: 60 });
  beforeAll(() => app.ready);
  afterAll(() => app.close());

  it("answers a preflight from an allowed origin with 204 and its headers", async () => {
    const res = await app.handler(preflight(ALLOWED));
    expect(res.status).toBe(204);
    expect(Object.fromEntries(res.headers)).toEqual({
      "access-control-allow-origin": ALLOWED,
      "access-control-allow-credentials": "true",
      "access-control-allow-methods": "GET, POST, PATCH, DELETE",
      "access-control-allow-headers": "x-api-key, content-type",
      "access-control-max-age": "60",
      // The echoed header list differs per request: caches key on it.
      vary: "Origin, Access-Control-Request-Headers",
      // Each request's own id, a preflight's too.
      "x-request-id": expect.stringMatching(/^[0-9a-f-]{36}$/),
    });
  });

  it("compares origins exactly, as listed (issue 42 §14)", async () => {
    const shouted = await app.handler(preflight(ALLOWED.toUpperCase()));
    expect(shouted.headers.get("access-control-allow-origin")).toBeNull();
    const read = await app.handler(
      new Request("http://api.test/api/notes", {
        headers: {
          origin: ALLOWED.replace(/^https?:\/\/[a-z]/, (m) => m.toUpperCase()),
          "x-api-key": "cors-key",
        },
      }),
    );
    expect(read.headers.get("access-control-allow-origin")).toBeNull();
  });

  it("gives a refused origin no CORS header, on preflights and answers", async () => {
    const res = await app.handler(preflight("http://evil.example.test"));
    expect(res.status).toBe(204);
    expect(Object.fromEntries(res.headers)).toEqual({
      vary: "Origin",
      "x-request-id": expect.stringMatching(/^[0-9a-f-]{36}$/),
    });
    const read = await app.handler(
      new Request("http://api.test/api/notes", {
        headers: { origin: "http://evil.example.test", "x-api-key": "cors-key" },
      }),
    );
    expect(read.status).toBe(200);
    expect(read.headers.get("access-control-allow-origin")).toBeNull();
    expect(read.headers.get("vary")).toBe("Origin");
  });

  it("puts the headers on every answer to an allowed origin, errors included", async () => {
    // An answer to a caller the app did not identify also depends on the key header (crudkit's Vary).
    for (const [headers, status, vary] of [
      [{ "x-api-key": "cors-key" }, 200, "Origin"],
      [{ "x-api-key": "wrong" }, 401, "x-api-key, Origin"],
      [{}, 403, "x-api-key, Origin"],
    ] as const) {
      const res = await app.handler(
        new Request("http://api.test/api/notes", { headers: { origin: ALLOWED, ...headers } }),
      );
      expect(res.status).toBe(status);
      expect(res.headers.get("access-control-allow-origin")).toBe(ALLOWED);
      expect(res.headers.get("access-control-allow-credentials")).toBe("true");
      // A page may read X-Cache, and the request id to quote from a 5xx.
      expect(res.headers.get("access-control-expose-headers")).toBe(
        "x-cache, x-request-id, crudkit-position",
      );
      expect(res.headers.get("vary")).toBe(vary);
    }
    const missing = await app.handler(
      new Request("http://api.test/api/nowhere", { headers: { origin: ALLOWED } }),
    );
    expect(missing.status).toBe(404);
    expect(missing.headers.get("access-control-allow-origin")).toBe(ALLOWED);
  });

  it("gives requests without Origin no CORS headers but Vary: Origin, and OPTIONS that is no preflight a 405", async () => {
    const plain = await app.handler(
      new Request("http://api.test/api/notes", { headers: { "x-api-key": "cors-key" } }),
    );
    expect(plain.headers.get("access-control-allow-origin")).toBeNull();
    // A shared cache must not hand this answer to a browser's request, which needs the CORS headers.
    expect(plain.headers.get("vary")).toBe("Origin");
    const options = await app.handler(new Request("http://api.test/api/notes", { method: "OPTIONS" }));
    expect(options.status).toBe(405);
  });

  it("never echoes hostile request headers, and matches origins exactly", async () => {
    for (const asked of ["x-a\tb", "a b", "x".repeat(2000), "content-type, (evil)"]) {
      const res = await app.handler(
        new Request("http://api.test/api/notes", {
          method: "OPTIONS",
          headers: {
            origin: ALLOWED,
            "access-control-request-method": "GET",
            "access-control-request-headers": asked,
          },
        }),
      );
      expect(res.status).toBe(204);
      const allowed = res.headers.get("access-control-allow-headers");
      expect(allowed === null || /^[\w-]+(, [\w-]+)*$/.test(allowed)).toBe(true);
    }
    for (const origin of [`${ALLOWED}.evil.test`, `${ALLOWED}:8080`, "null", "https://app.example.test"]) {
      const res = await app.handler(preflight(origin));
      expect(res.headers.get("access-control-allow-origin"), origin).toBeNull();
    }
  });

  it("takes any origin, or a function; refuses what cannot work at startup", async () => {
    const open = makeApp({ origin: "*" });
    await open.ready;
    const res = await open.handler(
      new Request("http://api.test/api/notes", { headers: { origin: "http://x.test" } }),
    );
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
    // No Vary: Origin for "*"; the anonymous answer still varies with the key header.
    expect(res.headers.get("vary")).toBe("x-api-key");
    await open.close();
    const bySuffix = makeApp({ origin: (o) => o.endsWith(".example.test") });
    await bySuffix.ready;
    expect(
      (await bySuffix.handler(preflight("http://a.example.test"))).headers.get("access-control-allow-origin"),
    ).toBe("http://a.example.test");
    expect(
      (await bySuffix.handler(preflight("http://a.other.test"))).headers.get("access-control-allow-origin"),
    ).toBeNull();
    await bySuffix.close();
    expect(() => makeApp({ origin: "*", credentials: true })).toThrow(
      'origin "*" cannot go with credentials',
    );
    expect(() => makeApp({ origin: ["https://a.test/path"] })).toThrow("cors: origin takes");
    expect(() => makeApp({ origin: [ALLOWED], exposeHeaders: ["bad header"] })).toThrow(
      "cors: exposeHeaders",
    );
  });
});

const present = chromiumPresent;
const browserSuite = present || process.env.CI ? describe : describe.skip;

browserSuite(
  `CORS in headless Chromium${present ? "" : " (skipped: /usr/bin/chromium is not installed)"}`,
  () => {
    let browser: Browser | undefined;
    const pages: Server[] = [];
    let api: Awaited<ReturnType<typeof serve>> | undefined;
    let allowedPage = "";
    let refusedPage = "";

    /** A page server: its own origin, a blank page the test runs fetches from. */
    const pageServer = async () => {
      const server = createServer((_, res) => {
        res.writeHead(200, { "content-type": "text/html" });
        res.end("<!doctype html><title>page</title>");
      });
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      pages.push(server);
      return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    };

    beforeAll(async () => {
      allowedPage = await pageServer();
      refusedPage = await pageServer();
      api = await serve(makeApp({ origin: [allowedPage] }), { port: 0 });
      browser = await launchChromium();
    }, 60_000);
    afterAll(async () => {
      await browser?.close();
      await api?.close();
      for (const server of pages) server.close();
    });

    /** Creates then lists notes from the page's origin; the error's name when the browser blocks it. */
    const callFrom = async (origin: string) => {
      const page = await browser!.newPage();
      await page.goto(`${origin}/`);
      const result = await page.evaluate(async (base) => {
        try {
          const headers = { "x-api-key": "cors-key", "content-type": "application/json" };
          const created = await fetch(`${base}/api/note`, {
            method: "POST",
            headers,
            body: JSON.stringify({ text: "hi" }),
          });
          const listed = await fetch(`${base}/api/notes`, { headers });
          return {
            status: created.status,
            total: (await listed.json()).pagination.total,
            cache: listed.headers.get("x-cache"),
          };
        } catch (error) {
          return { error: (error as Error).name };
        }
      }, api!.url);
      await page.close();
      return result;
    };

    it("a page on an allowed origin calls the API on another port", async () => {
      const result = await callFrom(allowedPage);
      expect(result).toMatchObject({ status: 201, total: 1 });
    });

    it("a page on a refused origin is blocked by the browser, and its preflight created nothing", async () => {
      expect(await callFrom(refusedPage)).toEqual({ error: "TypeError" });
      expect(await callFrom(allowedPage)).toMatchObject({ total: 2 });
    });
  },
);
