// Static assets served pre-compressed (issue 46): the admin's built files have their `.br` and `.gz`
// beside them (scripts/build-admin.ts, which `npm test` runs first), and the docs page's Scalar
// script is compressed once, in memory, on its first request. Accept-Encoding picks brotli, else
// gzip, else the plain bytes; every answer says `Vary: Accept-Encoding` and its Content-Length, and
// HEAD has the same headers and no body. Through app.handler and through serve() on loopback (with
// serve's own `compress` on: an answer already encoded is not compressed again).

import { readFileSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { brotliDecompressSync, gunzipSync } from "node:zlib";
import { createResource, crudkit, withId } from "crudkit-api";
import { serve } from "crudkit-api/node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";

const manifest = JSON.parse(
  readFileSync(new URL("../dist/admin/manifest.json", import.meta.url), "utf8"),
) as { script: string; style: string; compressed?: Record<string, string[]> };
const builtScript = readFileSync(new URL(`../dist/admin/${manifest.script}`, import.meta.url));

const app = crudkit({
  database: { provider: "sqlite", url: ":memory:" },
  resources: [createResource({ name: "note", schema: withId({ text: z.string() }) })],
  admin: true,
  docs: true,
});
const ADMIN_SCRIPT = `/api/admin/assets/${manifest.script}`;
const DOCS_SCRIPT = "/api/docs/scalar.js";

interface Answer {
  status: number;
  headers: Headers;
  body: Buffer;
}

async function viaHandler(method: string, path: string, acceptEncoding?: string): Promise<Answer> {
  const headers: Record<string, string> =
    acceptEncoding === undefined ? {} : { "accept-encoding": acceptEncoding };
  const res = await app.handler(new Request(`http://x${path}`, { method, headers }));
  return { status: res.status, headers: res.headers, body: Buffer.from(await res.arrayBuffer()) };
}

let origin = "";
let close = async () => {};

/** A raw request on loopback: node:http neither asks for nor decodes any coding by itself. */
function viaServer(method: string, path: string, acceptEncoding?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const headers = acceptEncoding === undefined ? {} : { "accept-encoding": acceptEncoding };
    const req = httpRequest(`${origin}${path}`, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () => {
        const answer = new Headers();
        for (const [name, value] of Object.entries(res.headers))
          if (value !== undefined) answer.set(name, Array.isArray(value) ? value.join(", ") : value);
        resolve({ status: res.statusCode ?? 0, headers: answer, body: Buffer.concat(chunks) });
      });
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end();
  });
}

const decoded = ({ headers, body }: Answer): Buffer => {
  const coding = headers.get("content-encoding");
  if (coding === "br") return brotliDecompressSync(body);
  if (coding === "gzip") return gunzipSync(body);
  expect(coding).toBeNull();
  return body;
};

/** The headers a HEAD must repeat: all of them but the date. */
const comparable = (headers: Headers) =>
  Object.fromEntries(
    [...headers].filter(([name]) => !["date", "connection", "keep-alive", "x-request-id"].includes(name)),
  );

beforeAll(async () => {
  await app.ready;
  const running = await serve(app, { port: 0, hostname: "127.0.0.1", compress: true });
  origin = running.url.replace(/\/$/, "");
  close = () => running.close();
});
afterAll(async () => {
  await close();
  await app.close();
});

const transports = [
  ["app.handler", viaHandler],
  ["serve() on 127.0.0.1", viaServer],
] as const;

describe("the build", () => {
  it("writes a .br and a .gz beside each script and style sheet, listed in the manifest", () => {
    for (const file of [manifest.script, manifest.style]) {
      expect(manifest.compressed?.[file]).toEqual(["br", "gz"]);
      const plain = readFileSync(new URL(`../dist/admin/${file}`, import.meta.url));
      const br = readFileSync(new URL(`../dist/admin/${file}.br`, import.meta.url));
      const gz = readFileSync(new URL(`../dist/admin/${file}.gz`, import.meta.url));
      expect(brotliDecompressSync(br).equals(plain)).toBe(true);
      expect(gunzipSync(gz).equals(plain)).toBe(true);
      expect(br.byteLength).toBeLessThan(gz.byteLength);
    }
  });
});

describe.each(transports)("through %s", (_, send) => {
  it("the admin script: br, gzip or identity as Accept-Encoding takes them, varying with it", async () => {
    const cases = [
      ["br", "br"],
      ["gzip", "gzip"],
      ["gzip, deflate, br, zstd", "br"],
      ["br;q=0, gzip", "gzip"],
      ["gzip;q=1, br;q=0.5", "gzip"],
      ["*", "br"],
      ["deflate", null],
      ["identity", null],
      ["", null],
      [undefined, null],
    ] as const;
    for (const [acceptEncoding, coding] of cases) {
      const res = await send("GET", ADMIN_SCRIPT, acceptEncoding);
      expect(res.status, String(acceptEncoding)).toBe(200);
      expect(res.headers.get("content-encoding"), String(acceptEncoding)).toBe(coding);
      expect(res.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
      expect(res.headers.get("vary")).toMatch(/accept-encoding/i);
      expect(res.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
      expect(Number(res.headers.get("content-length"))).toBe(res.body.byteLength);
      expect(decoded(res).equals(builtScript), String(acceptEncoding)).toBe(true);
    }
    const style = await send("GET", `/api/admin/assets/${manifest.style}`, "gzip");
    expect(style.headers.get("content-encoding")).toBe("gzip");
    expect(style.headers.get("content-type")).toBe("text/css; charset=utf-8");
  });

  it("HEAD on the admin script: the same headers as GET, no body", async () => {
    for (const acceptEncoding of ["br", "gzip", undefined]) {
      const get = await send("GET", ADMIN_SCRIPT, acceptEncoding);
      const head = await send("HEAD", ADMIN_SCRIPT, acceptEncoding);
      expect(head.status).toBe(200);
      expect(head.body.byteLength).toBe(0);
      expect(comparable(head.headers)).toEqual(comparable(get.headers));
      expect(Number(head.headers.get("content-length"))).toBe(get.body.byteLength);
    }
  });

  it("a hostile Accept-Encoding gets the plain file, never a 500", async () => {
    const junk = [`${"x;q=".repeat(1500)},${",".repeat(1500)}`, ";;;,,,;q=;q=1", "\u00e9br"];
    for (const acceptEncoding of junk) {
      const res = await send("GET", ADMIN_SCRIPT, acceptEncoding);
      expect(res.status, acceptEncoding.slice(0, 40)).toBe(200);
      expect(res.headers.get("content-encoding"), acceptEncoding.slice(0, 40)).toBeNull();
      expect(res.body.equals(builtScript)).toBe(true);
    }
    // Malformed weights: whatever coding a layer makes of them, the bytes are the file's.
    for (const acceptEncoding of ["br;q=2, gzip;q=-1", "br;q=NaN, gzip;q=0x1"]) {
      const res = await send("GET", ADMIN_SCRIPT, acceptEncoding);
      expect(res.status).toBe(200);
      expect(decoded(res).equals(builtScript)).toBe(true);
    }
  });
});

describe("the docs page's script, compressed once in memory", () => {
  let plain: Buffer;
  beforeAll(async () => {
    plain = (await viaHandler("GET", DOCS_SCRIPT)).body;
    expect(plain.byteLength).toBeGreaterThan(1_000_000);
  });

  it("a browser's first request, while brotli is being made, gets gzip or brotli, never a wait of seconds", async () => {
    const res = await viaHandler("GET", DOCS_SCRIPT, "gzip, deflate, br, zstd");
    expect(["br", "gzip"]).toContain(res.headers.get("content-encoding"));
    expect(decoded(res).equals(plain)).toBe(true);
  });

  it.each(transports)(
    "through %s: br, gzip, identity, HEAD, hostile headers",
    async (_, send) => {
      const cases = [
        ["br", "br"],
        ["gzip", "gzip"],
        ["br;q=0, gzip", "gzip"],
        [undefined, null],
        [`${"x;q=".repeat(1500)},${",".repeat(1500)}`, null],
      ] as const;
      for (const [acceptEncoding, coding] of cases) {
        const get = await send("GET", DOCS_SCRIPT, acceptEncoding);
        expect(get.status).toBe(200);
        expect(get.headers.get("content-encoding"), String(acceptEncoding)).toBe(coding);
        expect(get.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
        expect(get.headers.get("vary")).toMatch(/accept-encoding/i);
        expect(Number(get.headers.get("content-length"))).toBe(get.body.byteLength);
        expect(decoded(get).equals(plain)).toBe(true);
        if (coding) expect(get.body.byteLength).toBeLessThan(plain.byteLength / 3);
        const head = await send("HEAD", DOCS_SCRIPT, acceptEncoding);
        expect(head.body.byteLength).toBe(0);
        expect(comparable(head.headers)).toEqual(comparable(get.headers));
      }
    },
    60_000,
  );

  it("the page itself states its length, compressed or not", async () => {
    for (const send of [viaHandler, viaServer]) {
      const page = await send("GET", "/api/docs", "br, gzip");
      expect(page.status).toBe(200);
      expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8");
      expect(Number(page.headers.get("content-length"))).toBe(page.body.byteLength);
      expect(decoded(page).toString()).toContain('data-url="/api/openapi.json"');
    }
  });
});
