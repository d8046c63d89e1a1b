// HTTP as clients and proxies expect it (issue 46), on SQLite and PostgreSQL, through serve() and
// the Express 5 and Fastify 5 adapters, each on a real socket: HEAD is GET without the body, header
// for header; compressed answers are negotiated from Accept-Encoding and decompress to the same
// bytes; pages of records carry weak ETags that revalidate for their caller only; and
// `Prefer: return=minimal` answers writes without the record, the typed client included.
// HEAD and compression are read on raw sockets: fetch drops whatever follows a HEAD answer's
// headers and undoes Content-Encoding, which are both what is checked.

import { randomBytes } from "node:crypto";
import type { Server } from "node:http";
import { connect } from "node:net";
import { brotliDecompressSync, gunzipSync } from "node:zlib";
import { apiKey, type ByteRange, createResource, crudkit, LocalStorage, ownedBy, withId } from "crudkit-api";
import { createClient } from "crudkit-api/client";
import { crudkitFastify, type Servable, type ServeOptions, serve, toExpressHandler } from "crudkit-api/node";
import { audit, rateLimit, upload } from "crudkit-api/plugins";
import express from "express";
import Fastify from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { forEachDialect, type TestDialect } from "./dialects.ts";
import { tempUploadDirs } from "./helpers.ts";

const ALICE = { "x-api-key": "alice-key" };
const BOB = { "x-api-key": "bob-key" };
const signedIn = ({ user }: { user: unknown }) => user !== null;

// Each caller sees her own notes only: a record outside her rows is a 404.
const note = createResource({
  name: "note",
  schema: withId({ ownerId: z.string().optional(), text: z.string() }),
  access: ownedBy("ownerId"),
});
// Anyone lists the catalogue: the same page for alice, bob and the anonymous caller.
const gadget = createResource({
  name: "gadget",
  schema: withId({ name: z.string(), blurb: z.string() }),
  access: { create: signedIn, read: true, list: true, update: signedIn, delete: signedIn },
});
// The one rate-limited resource, so that counters never get in the way of the other cases.
const ticket = createResource({
  name: "ticket",
  schema: withId({ subject: z.string() }),
  access: { create: signedIn, read: signedIn, list: signedIn },
});

/** Local storage that counts how often a file's bytes are read: a HEAD must not read them. */
class CountingStorage extends LocalStorage {
  reads = 0;
  override async read(path: string, range?: ByteRange) {
    this.reads++;
    return super.read(path, range);
  }
  override async retrieve(path: string) {
    this.reads++;
    return super.retrieve(path);
  }
}

/** Everything this file turns on: list ETags, an identity plugin, rate limits, audit, uploads, events. */
function tunedApp(database: Awaited<ReturnType<TestDialect["fresh"]>>, storage: CountingStorage) {
  return crudkit({
    database,
    autoMigrate: true,
    resources: [note, gadget, ticket],
    listETags: true,
    realtime: true,
    plugins: [
      apiKey({ keys: { "alice-key": { id: "alice" }, "bob-key": { id: "bob" } } }),
      // Windows are aligned to the clock: an hour-long one makes a count that straddles two rare.
      rateLimit({ operations: ["ticket.*"], max: 3, window: 3600 }),
      audit({ access: { read: signedIn } }),
      upload({
        storage,
        access: { upload: signedIn, read: signedIn, download: signedIn, list: signedIn },
      }),
    ],
  });
}
type TunedApp = ReturnType<typeof tunedApp>;

/** The defaults: no list ETags here, and its server is given no `compress`. */
function plainApp(database: Awaited<ReturnType<TestDialect["fresh"]>>) {
  return crudkit({
    database,
    autoMigrate: true,
    resources: [gadget],
    plugins: [apiKey({ keys: { "alice-key": { id: "alice" } } })],
  });
}

/** A catalogue line as a shop would write it: JSON pages of these compress as real ones do. */
const blurbOf = (i: number) =>
  `Gadget number ${i}: a sturdy ${["steel", "oak", "brass", "ceramic"][i % 4]} tool for the kitchen ` +
  `and the workshop, ${["red", "green", "blue"][i % 3]}, with a two-year warranty and free returns.`;

// ---------------------------------------------------------------------------------------------
// The hosts: the same app behind serve(), Express 5 and Fastify 5, each on 127.0.0.1, port 0.

type Compress = ServeOptions["compress"];
interface Listening {
  url: string;
  close(): Promise<void>;
}
interface Host {
  name: string;
  /** `compress` undefined: the option is not given at all (the default is what is tested). */
  listen(app: Servable & { close(): Promise<void> }, compress: Compress): Promise<Listening>;
}

const options = (compress: Compress) => (compress === undefined ? {} : { compress });
const closing = (server: Server) => () => new Promise<void>((resolve) => server.close(() => resolve()));

const HOSTS: Host[] = [
  {
    name: "serve()",
    async listen(app, compress) {
      const server = await serve(app, { port: 0, ...options(compress) });
      return { url: server.url, close: () => server.close() };
    },
  },
  {
    name: "Express 5 (toExpressHandler)",
    async listen(app, compress) {
      const server = express();
      server.use("/api", toExpressHandler(app, options(compress)));
      const http = server.listen(0, "127.0.0.1");
      await new Promise((resolve) => http.once("listening", resolve));
      return { url: `http://127.0.0.1:${(http.address() as { port: number }).port}`, close: closing(http) };
    },
  },
  {
    name: "Fastify 5 (crudkitFastify)",
    async listen(app, compress) {
      const server = Fastify();
      await server.register(crudkitFastify(app, options(compress)), { prefix: "/api" });
      const url = await server.listen({ port: 0, host: "127.0.0.1" });
      return { url, close: () => server.close() };
    },
  },
];

// ---------------------------------------------------------------------------------------------
// Raw HTTP/1.1 on a socket: the status, every header as sent (names lowercased, repeats joined
// with ", " as node:http does) and the bytes after the headers, content coding left alone.

interface Exchange {
  status: number;
  headers: Record<string, string>;
  /** The body as sent (chunked transfer undone, content coding not), or what followed a HEAD's headers. */
  body: Buffer;
}

function parseHead(raw: Buffer): { status: number; headers: Record<string, string>; end: number } {
  const end = raw.indexOf("\r\n\r\n");
  const [statusLine = "", ...fields] = raw.subarray(0, end).toString("latin1").split("\r\n");
  const headers: Record<string, string> = {};
  for (const field of fields) {
    const colon = field.indexOf(":");
    const name = field.slice(0, colon).trim().toLowerCase();
    const value = field.slice(colon + 1).trim();
    headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
  }
  return { status: Number(statusLine.split(" ")[1]), headers, end };
}

function requestBytes(method: string, path: string, headers: Record<string, string>): Buffer {
  const lines = [`${method} ${path} HTTP/1.1`, "Host: 127.0.0.1", "Connection: close"];
  for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
  // latin1: a header of junk may hold bytes above 0x7f, sent as themselves.
  return Buffer.from(`${lines.join("\r\n")}\r\n\r\n`, "latin1");
}

function socketTo(base: string) {
  const socket = connect(Number(new URL(base).port), "127.0.0.1");
  socket.setTimeout(10_000, () => socket.destroy(new Error("no answer within 10 s")));
  return socket;
}

/** One request on a connection of its own, read until the server closes it. */
async function exchange(
  base: string,
  method: string,
  path: string,
  headers: Record<string, string> = {},
): Promise<Exchange> {
  const socket = socketTo(base);
  // write, not end: the request is whole, and a half-closed socket can read as a client gone.
  socket.write(requestBytes(method, path, headers));
  const chunks: Buffer[] = [];
  for await (const chunk of socket) chunks.push(chunk as Buffer);
  const raw = Buffer.concat(chunks);
  const head = parseHead(raw);
  expect(head.end, `no complete answer to ${method} ${path}`).toBeGreaterThan(0);
  let body: Buffer = raw.subarray(head.end + 4);
  if (method !== "HEAD" && head.headers["transfer-encoding"] === "chunked") body = unchunked(body);
  return { status: head.status, headers: head.headers, body };
}

/** Status and headers of an answer that never ends (an event stream); the connection is then cut. */
async function headersOf(base: string, path: string, headers: Record<string, string>) {
  const socket = socketTo(base);
  socket.write(requestBytes("GET", path, headers));
  let raw = Buffer.alloc(0);
  for await (const chunk of socket) {
    raw = Buffer.concat([raw, chunk as Buffer]);
    if (raw.includes("\r\n\r\n")) break;
  }
  socket.destroy();
  return parseHead(raw);
}

function unchunked(data: Buffer): Buffer {
  const parts: Buffer[] = [];
  for (let at = 0; ; ) {
    const eol = data.indexOf("\r\n", at);
    const size = Number.parseInt(data.subarray(at, eol).toString("latin1"), 16);
    if (!size) return Buffer.concat(parts);
    parts.push(data.subarray(eol + 2, eol + 2 + size));
    at = eol + 2 + size + 2;
  }
}

/** Headers a HEAD and its GET may differ in: the clock, how the connection is kept, each request's id. */
const TRANSIENT = new Set(["date", "connection", "keep-alive", "x-request-id"]);
const lasting = (headers: Record<string, string>) =>
  Object.fromEntries(Object.entries(headers).filter(([name]) => !TRANSIENT.has(name)));

const varyOf = (headers: Record<string, string>) =>
  (headers.vary ?? "")
    .split(",")
    .map((name) => name.trim().toLowerCase())
    .filter(Boolean);

/** GET and HEAD of one URL: same status, same headers, and nothing after the HEAD's headers. */
async function expectHeadIsGet(base: string, path: string, headers: Record<string, string> = {}) {
  const get = await exchange(base, "GET", path, headers);
  const head = await exchange(base, "HEAD", path, headers);
  expect(head.status, `HEAD ${path}`).toBe(get.status);
  expect(lasting(head.headers), `HEAD ${path}`).toEqual(lasting(get.headers));
  expect(head.body.byteLength, `bytes after HEAD ${path}'s headers`).toBe(0);
  // The length HEAD states is that of the body GET sent.
  expect(Number(head.headers["content-length"])).toBe(get.body.byteLength);
  return get;
}

// ---------------------------------------------------------------------------------------------
// One suite per database and host: a tuned app (its server compresses) and a plain one (defaults).

interface Site {
  tuned: TunedApp;
  storage: CountingStorage;
  /** The tuned app, served with `compress: true`. */
  url: string;
  /** The plain app, served with no options: compression and list ETags as they are by default. */
  plainUrl: string;
}

function siteFor(dialect: TestDialect, host: Host): Site {
  const site = {} as Site;
  const running: Listening[] = [];
  const apps: { close(): Promise<void> }[] = [];
  beforeAll(async () => {
    site.storage = new CountingStorage(tempUploadDirs().uploadDir);
    site.tuned = tunedApp(await dialect.fresh(), site.storage);
    const plain = plainApp(await dialect.fresh());
    apps.push(site.tuned, plain);
    await Promise.all([site.tuned.ready, plain.ready]);
    // A 100-record page for compression; the plain app needs only enough to pass the threshold.
    for (let i = 0; i < 100; i++)
      await site.tuned.api.createGadget({ body: { name: `Gadget ${i}`, blurb: blurbOf(i) }, headers: ALICE });
    for (let i = 0; i < 20; i++)
      await plain.api.createGadget({ body: { name: `Gadget ${i}`, blurb: blurbOf(i) }, headers: ALICE });
    const tuned = await host.listen(site.tuned, true);
    const defaults = await host.listen(plain, undefined);
    running.push(tuned, defaults);
    site.url = tuned.url;
    site.plainUrl = defaults.url;
  });
  afterAll(async () => {
    for (const server of running) await server.close();
    for (const app of apps) await app.close();
  });
  return site;
}

/** A write through fetch, JSON in, the answer's text out. */
async function write(
  base: string,
  method: string,
  path: string,
  body: unknown,
  headers: Record<string, string>,
) {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { ...headers, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

/** Alice uploads `bytes` as a file; its id. */
async function uploadAs(base: string, bytes: Buffer, filename: string, mimeType: string): Promise<string> {
  const uploaded = await write(
    base,
    "POST",
    "/api/upload/file",
    { file: bytes.toString("base64"), filename, mimeType },
    ALICE,
  );
  expect(uploaded.status).toBe(201);
  return (JSON.parse(uploaded.text) as { id: string }).id;
}

async function createNote(base: string, headers: Record<string, string>, text: string) {
  const created = await write(base, "POST", "/api/note", { text }, headers);
  expect(created.status).toBe(201);
  return JSON.parse(created.text) as { id: string; text: string };
}

forEachDialect(
  (dialect) => {
    for (const host of HOSTS) {
      describe(host.name, () => {
        const site = siteFor(dialect, host);

        describe("HEAD", () => {
          it("is GET without the body, header for header: a list, a read, 404s, health, openapi.json", async () => {
            const mine = await createNote(site.url, ALICE, "alice's note");
            // Anonymous (Vary on the credential header), and alice's own (private).
            await expectHeadIsGet(site.url, "/api/gadgets?limit=5");
            await expectHeadIsGet(site.url, "/api/notes", ALICE);
            const read = await expectHeadIsGet(site.url, `/api/note/${mine.id}`, ALICE);
            expect(read.status).toBe(200);
            expect(read.headers.etag).toBeDefined();
            expect((await expectHeadIsGet(site.url, "/api/note/no-such-note", ALICE)).status).toBe(404);
            expect((await expectHeadIsGet(site.url, "/api/nowhere")).status).toBe(404);
            expect((await expectHeadIsGet(site.url, "/api/health")).status).toBe(200);
            // Large enough to be compressed when asked: without Accept-Encoding it is not.
            const openapi = await expectHeadIsGet(site.url, "/api/openapi.json");
            expect(openapi.status).toBe(200);
            expect(openapi.headers["content-encoding"]).toBeUndefined();
          });

          it("answers a 304 as GET does, with If-None-Match", async () => {
            const mine = await createNote(site.url, ALICE, "revalidated");
            const { headers } = await exchange(site.url, "GET", `/api/note/${mine.id}`, ALICE);
            const revalidate = { ...ALICE, "if-none-match": headers.etag! };
            const get = await exchange(site.url, "GET", `/api/note/${mine.id}`, revalidate);
            expect(get.status).toBe(304);
            const head = await exchange(site.url, "HEAD", `/api/note/${mine.id}`, revalidate);
            expect(head.status).toBe(304);
            expect(lasting(head.headers)).toEqual(lasting(get.headers));
            expect(head.body.byteLength).toBe(0);
          });

          it("is allowed wherever GET is: a 405's Allow lists it, and a HEAD of a POST-only path is GET's 405", async () => {
            const put = await exchange(site.url, "PUT", "/api/gadgets");
            expect(put.status).toBe(405);
            expect(put.headers.allow!.split(", ")).toEqual(expect.arrayContaining(["GET", "HEAD"]));
            const one = await exchange(site.url, "POST", "/api/gadget/x");
            expect(one.headers.allow!.split(", ")).toEqual(
              expect.arrayContaining(["GET", "HEAD", "PATCH", "PUT"]),
            );
            // POST only: neither GET nor HEAD, and HEAD's 405 is GET's, message included.
            const refused = await expectHeadIsGet(site.url, "/api/upload/file", ALICE);
            expect(refused.status).toBe(405);
            expect(refused.headers.allow).toBe("POST");
            expect(JSON.parse(refused.body.toString()).message).toMatch(/^GET is not allowed/);
          });

          it("counts against the rate limit as GET does, and is refused like it once over", async () => {
            const created = await write(site.url, "POST", "/api/ticket", { subject: "help" }, BOB);
            expect(created.status).toBe(201);
            const path = `/api/ticket/${JSON.parse(created.text).id}`;
            const remaining: string[] = [];
            for (const method of ["GET", "HEAD", "HEAD"]) {
              const res = await exchange(site.url, method, path, ALICE);
              expect(res.status).toBe(200);
              remaining.push(res.headers["ratelimit-remaining"]!);
            }
            expect(remaining).toEqual(["2", "1", "0"]);
            const head = await exchange(site.url, "HEAD", path, ALICE);
            expect(head.status).toBe(429);
            expect(head.headers["retry-after"]).toBeDefined();
            expect(head.body.byteLength).toBe(0);
            const get = await exchange(site.url, "GET", path, ALICE);
            expect(get.status).toBe(429);
            expect(JSON.parse(get.body.toString()).code).toBe("RATE_LIMITED");
            // The counter is alice's: bob's HEAD still passes.
            expect((await exchange(site.url, "HEAD", path, BOB)).status).toBe(200);
          });

          it("of a record outside alice's rows is the 404 of a record that does not exist", async () => {
            const bobs = await createNote(site.url, BOB, "bob's secret");
            const outside = await expectHeadIsGet(site.url, `/api/note/${bobs.id}`, ALICE);
            expect(outside.status).toBe(404);
            expect(outside.body.toString()).not.toContain("bob's secret");
            // An id of the same length that names nothing: the same answer, byte count included.
            const nothing = await exchange(
              site.url,
              "HEAD",
              `/api/note/${"z".repeat(bobs.id.length)}`,
              ALICE,
            );
            const head = await exchange(site.url, "HEAD", `/api/note/${bobs.id}`, ALICE);
            expect(lasting(nothing.headers)).toEqual(lasting(head.headers));
          });

          it("of a download states its length and byte ranges, and reads nothing from storage", async () => {
            const bytes = randomBytes(3000);
            const id = await uploadAs(site.url, bytes, "blob.bin", "application/octet-stream");
            const path = `/api/upload/download/${id}`;
            const before = site.storage.reads;
            const head = await exchange(site.url, "HEAD", path, ALICE);
            expect(head.status).toBe(200);
            expect(head.headers["content-length"]).toBe("3000");
            expect(head.headers["accept-ranges"]).toBe("bytes");
            expect(head.headers.etag).toBeDefined();
            expect(head.body.byteLength).toBe(0);
            expect(site.storage.reads).toBe(before);
            const range = await exchange(site.url, "HEAD", path, { ...ALICE, range: "bytes=0-9" });
            expect(range.status).toBe(206);
            expect(range.headers["content-length"]).toBe("10");
            expect(range.headers["content-range"]).toBe("bytes 0-9/3000");
            expect(site.storage.reads).toBe(before);
            // GET reads it, with the same headers; so does the file's metadata.
            const get = await expectHeadIsGet(site.url, path, ALICE);
            expect(get.body.equals(bytes)).toBe(true);
            expect(site.storage.reads).toBe(before + 1);
            expect((await expectHeadIsGet(site.url, `/api/upload/file/${id}`, ALICE)).status).toBe(200);
          });

          it("of an event stream is its headers, and ends, giving back the stream's place", async () => {
            // A user may hold 5 streams at once: a HEAD that kept its place would lock her out.
            for (let i = 0; i < 8; i++) {
              const head = await exchange(site.url, "HEAD", "/api/gadgets/events", ALICE);
              expect(head.status).toBe(200);
              expect(head.headers["content-type"]).toMatch(/^text\/event-stream/);
              expect(head.body.byteLength).toBe(0);
            }
            expect((await headersOf(site.url, "/api/gadgets/events", ALICE)).status).toBe(200);
          });
        });

        describe("compression", () => {
          const page = "/api/gadgets?limit=100";

          it("sends a 100-record page at least 5x smaller in gzip and brotli, the same JSON once decoded", async () => {
            const identity = await exchange(site.url, "GET", page);
            expect(identity.status).toBe(200);
            expect(JSON.parse(identity.body.toString()).items).toHaveLength(100);
            expect(identity.headers["content-encoding"]).toBeUndefined();
            // Another client may be sent a compressed version: a cache must tell them apart.
            expect(varyOf(identity.headers)).toContain("accept-encoding");
            const gzip = await exchange(site.url, "GET", page, { "accept-encoding": "gzip" });
            expect(gzip.headers["content-encoding"]).toBe("gzip");
            expect(gunzipSync(gzip.body).equals(identity.body)).toBe(true);
            const br = await exchange(site.url, "GET", page, { "accept-encoding": "gzip, deflate, br" });
            expect(br.headers["content-encoding"]).toBe("br");
            expect(brotliDecompressSync(br.body).equals(identity.body)).toBe(true);
            for (const packed of [gzip, br]) {
              expect(identity.body.byteLength / packed.body.byteLength).toBeGreaterThanOrEqual(5);
              expect(varyOf(packed.headers)).toContain("accept-encoding");
              // The page's weak tag names the records, not the bytes: it holds across codings.
              expect(packed.headers.etag).toBe(identity.headers.etag);
            }
          });

          it("HEAD names the coding GET would use and, by design, no Content-Length", async () => {
            const asked = { "accept-encoding": "br" };
            const get = await exchange(site.url, "GET", page, asked);
            const head = await exchange(site.url, "HEAD", page, asked);
            expect(head.status).toBe(200);
            expect(head.headers["content-encoding"]).toBe("br");
            expect(head.headers["content-length"]).toBeUndefined();
            expect(head.body.byteLength).toBe(0);
            const {
              "content-length": _length,
              "transfer-encoding": _chunked,
              ...rest
            } = lasting(get.headers);
            expect(lasting(head.headers)).toEqual(rest);
          });

          it("follows Accept-Encoding's weights: brotli first, q=0 refuses, * stands for the rest", async () => {
            const cases: [string, string | undefined][] = [
              ["gzip", "gzip"],
              ["br", "br"],
              ["gzip, br", "br"],
              ["BR", "br"],
              ["br;q=0.5, gzip", "gzip"],
              ["br;q=0, gzip", "gzip"],
              ["*", "br"],
              ["gzip;q=0, *", "br"],
              ["br;q=0, gzip;q=0", undefined],
              ["*;q=0", undefined],
              ["identity", undefined],
              ["deflate, compress", undefined],
            ];
            for (const [accept, coding] of cases) {
              const res = await exchange(site.url, "GET", page, { "accept-encoding": accept });
              expect(res.status, accept).toBe(200);
              expect(res.headers["content-encoding"], accept).toBe(coding);
            }
          });

          it("falls back to identity for a hostile Accept-Encoding, and never fails on it", async () => {
            const identity = await exchange(site.url, "GET", page);
            for (const accept of [
              ",".repeat(10 * 1024),
              `${"x".repeat(5 * 1024)};q=1, ${", ;".repeat(1500)}`,
              "br;q=nan, gzip;q=-1",
              "gzip;q=1e400, br;q=",
              ";;;,=,q=1,;q=1",
              "\xff\xfe;q=\x80, \x85gzip",
            ]) {
              const res = await exchange(site.url, "GET", page, { "accept-encoding": accept });
              expect(res.status, accept.slice(0, 40)).toBe(200);
              expect(res.headers["content-encoding"], accept.slice(0, 40)).toBeUndefined();
              expect(res.body.equals(identity.body)).toBe(true);
            }
          });

          it("leaves small answers alone, without Vary: Accept-Encoding", async () => {
            const [first] = JSON.parse(
              (await exchange(site.url, "GET", "/api/gadgets?limit=1")).body.toString(),
            ).items as { id: string }[];
            for (const path of [`/api/gadget/${first!.id}`, "/api/health", "/api/gadgets?limit=1"]) {
              const res = await exchange(site.url, "GET", path, { "accept-encoding": "br, gzip" });
              expect(res.status, path).toBe(200);
              expect(res.body.byteLength, path).toBeLessThan(1024);
              expect(res.headers["content-encoding"], path).toBeUndefined();
              expect(varyOf(res.headers), path).not.toContain("accept-encoding");
            }
          });

          it("never compresses an event stream, at /events or at the list's URL", async () => {
            for (const [path, accept] of [
              ["/api/gadgets/events", "*/*"],
              ["/api/gadgets", "text/event-stream"],
            ] as const) {
              const stream = await headersOf(site.url, path, {
                ...ALICE,
                accept,
                "accept-encoding": "br, gzip",
              });
              expect(stream.status, path).toBe(200);
              expect(stream.headers["content-type"], path).toMatch(/^text\/event-stream/);
              expect(stream.headers["content-encoding"], path).toBeUndefined();
              expect(stream.headers.etag, path).toBeUndefined();
            }
          });

          it("compresses a text download as it streams; its HEAD names the coding and no length", async () => {
            const text = Buffer.from(blurbOf(3).repeat(40));
            const path = `/api/upload/download/${await uploadAs(site.url, text, "notes.txt", "text/plain")}`;
            const asked = { ...ALICE, "accept-encoding": "gzip" };
            const get = await exchange(site.url, "GET", path, asked);
            expect(get.status).toBe(200);
            expect(get.headers["content-encoding"]).toBe("gzip");
            expect(gunzipSync(get.body).equals(text)).toBe(true);
            const before = site.storage.reads;
            const head = await exchange(site.url, "HEAD", path, asked);
            expect(head.headers["content-encoding"]).toBe("gzip");
            expect(head.headers["content-length"]).toBeUndefined();
            expect(varyOf(head.headers)).toContain("accept-encoding");
            expect(head.body.byteLength).toBe(0);
            expect(site.storage.reads).toBe(before);
            // A byte range is of the stored bytes, never compressed.
            const range = await exchange(site.url, "GET", path, { ...asked, range: "bytes=0-9" });
            expect(range.status).toBe(206);
            expect(range.headers["content-encoding"]).toBeUndefined();
            expect(range.body.equals(text.subarray(0, 10))).toBe(true);
          });

          it("keeps Vary: Accept-Encoding on the 304 of a compressed answer (RFC 9110 §15.4.5)", async () => {
            // A cache refreshes its stored headers from a 304: a Vary without Accept-Encoding there
            // would let it hand its stored brotli copy to a client that never asked for brotli.
            // A record large enough to be compressed, and a page: both revalidate.
            const big = await write(
              site.url,
              "POST",
              "/api/gadget",
              { name: "Big", blurb: blurbOf(7).repeat(12) },
              ALICE,
            );
            expect(big.status).toBe(201);
            for (const path of [`/api/gadget/${JSON.parse(big.text).id}`, page]) {
              const asked = { "accept-encoding": "br" };
              const first = await exchange(site.url, "GET", path, asked);
              expect(first.headers["content-encoding"], path).toBe("br");
              expect(varyOf(first.headers), path).toContain("accept-encoding");
              const again = await exchange(site.url, "GET", path, {
                ...asked,
                "if-none-match": first.headers.etag!,
              });
              expect(again.status, path).toBe(304);
              expect(again.headers.etag, path).toBe(first.headers.etag);
              expect(varyOf(again.headers), path).toEqual(varyOf(first.headers));
            }
          });

          it("is off by default", async () => {
            const res = await exchange(site.plainUrl, "GET", "/api/gadgets?limit=20", {
              "accept-encoding": "br, gzip",
            });
            expect(res.status).toBe(200);
            expect(res.body.byteLength).toBeGreaterThan(1024);
            expect(res.headers["content-encoding"]).toBeUndefined();
            expect(varyOf(res.headers)).not.toContain("accept-encoding");
            expect(JSON.parse(res.body.toString()).items).toHaveLength(20);
          });
        });

        describe("list ETags", () => {
          const WEAK = /^W\/"[\w-]+"$/;

          it("tags a page weakly, and a repeat with its tag is a 304 with no body, GET or HEAD", async () => {
            await createNote(site.url, ALICE, "listed");
            const first = await exchange(site.url, "GET", "/api/notes", ALICE);
            expect(first.status).toBe(200);
            expect(first.headers.etag).toMatch(WEAK);
            for (const method of ["GET", "HEAD"]) {
              const again = await exchange(site.url, method, "/api/notes", {
                ...ALICE,
                "if-none-match": first.headers.etag!,
              });
              expect(again.status, method).toBe(304);
              expect(again.headers.etag).toBe(first.headers.etag);
              expect(again.headers["cache-control"]).toBe("private, no-store");
              expect(again.body.byteLength).toBe(0);
            }
          });

          it("never validates alice's tag for bob, even when his page is the same", async () => {
            const hers = await exchange(site.url, "GET", "/api/gadgets?limit=3", ALICE);
            const his = await exchange(site.url, "GET", "/api/gadgets?limit=3", {
              ...BOB,
              "if-none-match": hers.headers.etag!,
            });
            expect(his.status).toBe(200);
            expect(his.body.equals(hers.body)).toBe(true);
            expect(his.headers.etag).toMatch(WEAK);
            expect(his.headers.etag).not.toBe(hers.headers.etag);
            // Nor for the anonymous caller.
            const anonymous = await exchange(site.url, "GET", "/api/gadgets?limit=3", {
              "if-none-match": hers.headers.etag!,
            });
            expect(anonymous.status).toBe(200);
            // Notes differ per caller: bob gets his own page, none of alice's records.
            await createNote(site.url, BOB, "bob's own");
            const aliceNotes = await exchange(site.url, "GET", "/api/notes", ALICE);
            const bobNotes = await exchange(site.url, "GET", "/api/notes", {
              ...BOB,
              "if-none-match": aliceNotes.headers.etag!,
            });
            expect(bobNotes.status).toBe(200);
            const items = JSON.parse(bobNotes.body.toString()).items as { ownerId: string }[];
            expect(items.length).toBeGreaterThan(0);
            expect(items.every((n) => n.ownerId === "bob")).toBe(true);
          });

          it("changes with the query, and after a write the old tag gives the new page", async () => {
            const mine = await createNote(site.url, ALICE, "before");
            const before = await exchange(site.url, "GET", "/api/notes", ALICE);
            const otherQuery = await exchange(site.url, "GET", "/api/notes?limit=50", ALICE);
            expect(otherQuery.headers.etag).not.toBe(before.headers.etag);
            const updated = await write(site.url, "PATCH", `/api/note/${mine.id}`, { text: "after" }, ALICE);
            expect(updated.status).toBe(200);
            const after = await exchange(site.url, "GET", "/api/notes", {
              ...ALICE,
              "if-none-match": before.headers.etag!,
            });
            expect(after.status).toBe(200);
            expect(after.body.toString()).toContain('"after"');
            expect(after.headers.etag).not.toBe(before.headers.etag);
          });

          it("tags the audit log, a record's history and the list of uploaded files too", async () => {
            const mine = await createNote(site.url, ALICE, "audited");
            await write(
              site.url,
              "POST",
              "/api/upload/file",
              {
                file: Buffer.from("listed file").toString("base64"),
                filename: "l.txt",
                mimeType: "text/plain",
              },
              ALICE,
            );
            for (const path of ["/api/audit/logs", `/api/note/${mine.id}/history`, "/api/upload/files"]) {
              const first = await exchange(site.url, "GET", path, ALICE);
              expect(first.status, path).toBe(200);
              expect(first.headers.etag, path).toMatch(WEAK);
              const again = await exchange(site.url, "GET", path, {
                ...ALICE,
                "if-none-match": first.headers.etag!,
              });
              expect(again.status, path).toBe(304);
            }
          });

          it("takes a malformed If-None-Match for no match: 200, never a 500", async () => {
            const { headers } = await exchange(site.url, "GET", "/api/notes", ALICE);
            const tag = headers.etag!;
            const wrong = (n: number) => Array.from({ length: n }, (_, i) => `W/"${"t".repeat(20)}${i}"`);
            for (const garbage of [
              "garbage",
              'W/"',
              '"unterminated',
              ",,,,",
              wrong(100).join(", "),
              // etag.ts reads at most 64 tags: a longer list is answered in full, even naming the page.
              [...wrong(99), tag].join(", "),
              `W/"${"x".repeat(8 * 1024)}"`,
              "\xff\xfe\x85",
            ]) {
              const res = await exchange(site.url, "GET", "/api/notes", {
                ...ALICE,
                "if-none-match": garbage,
              });
              expect(res.status, garbage.slice(0, 40)).toBe(200);
              expect(JSON.parse(res.body.toString()).items.length, garbage.slice(0, 40)).toBeGreaterThan(0);
            }
            // If-None-Match compares weakly (RFC 9110 §13.1.2): the tag among others matches, and so
            // does its strong form.
            for (const naming of [[...wrong(30), tag, ...wrong(30)].join(", "), tag.slice(2)]) {
              const res = await exchange(site.url, "GET", "/api/notes", {
                ...ALICE,
                "if-none-match": naming,
              });
              expect(res.status, naming.slice(0, 40)).toBe(304);
            }
          });

          it("is off by default: no ETag on a page, and If-None-Match: * changes nothing", async () => {
            const res = await exchange(site.plainUrl, "GET", "/api/gadgets?limit=2");
            expect(res.status).toBe(200);
            expect(res.headers.etag).toBeUndefined();
            const star = await exchange(site.plainUrl, "GET", "/api/gadgets?limit=2", {
              "if-none-match": "*",
            });
            expect(star.status).toBe(200);
          });
        });

        describe("Vary and Cache-Control", () => {
          it("keeps alice's answers private, errors included, and varies anonymous ones on the API key header", async () => {
            for (const path of ["/api/gadgets?limit=2", "/api/note/no-such-note"]) {
              const hers = await exchange(site.url, "GET", path, ALICE);
              expect(hers.headers["cache-control"], path).toBe("private, no-store");
              // Private already: no shared cache keeps it, so there is nothing to vary on.
              expect(varyOf(hers.headers), path).not.toContain("x-api-key");
            }
            for (const path of ["/api/gadgets?limit=2", "/api/note/no-such-note"]) {
              const anonymous = await exchange(site.url, "GET", path);
              expect(anonymous.headers["cache-control"], path).toBeUndefined();
              expect(varyOf(anonymous.headers), path).toContain("x-api-key");
            }
            // The plain app's apiKey plugin reads the same header.
            const plain = await exchange(site.plainUrl, "GET", "/api/gadgets?limit=2");
            expect(varyOf(plain.headers)).toEqual(["x-api-key"]);
          });
        });

        describe("Prefer: return=minimal", () => {
          const MINIMAL = { ...ALICE, prefer: "return=minimal" };

          it("create: 201, Location of the record, its ETag, Content-Length 0 and no body", async () => {
            const res = await write(site.url, "POST", "/api/note", { text: "quiet" }, MINIMAL);
            expect(res.status).toBe(201);
            expect(res.text).toBe("");
            expect(res.headers.get("content-length")).toBe("0");
            expect(res.headers.get("preference-applied")).toBe("return=minimal");
            const location = res.headers.get("location")!;
            expect(location).toMatch(/^\/api\/note\/[^/]+$/);
            expect(res.headers.get("etag")).toBeTruthy();
            // The Location reads back the record, at the version the ETag named.
            const read = await fetch(`${site.url}${location}`, { headers: ALICE });
            expect(read.status).toBe(200);
            expect(read.headers.get("etag")).toBe(res.headers.get("etag"));
            expect(await read.json()).toMatchObject({ text: "quiet", ownerId: "alice" });
            // An id of the caller's choosing, with characters a path must escape.
            const id = `shelf/2?row= a b ${randomBytes(3).toString("hex")}`;
            const odd = await write(site.url, "POST", "/api/note", { id, text: "odd" }, MINIMAL);
            expect(odd.status).toBe(201);
            const oddRead = await fetch(`${site.url}${odd.headers.get("location")}`, { headers: ALICE });
            expect(oddRead.status).toBe(200);
            expect(await oddRead.json()).toMatchObject({ id, text: "odd" });
          });

          it("update: 204 with the new ETag; delete: 204", async () => {
            const mine = await createNote(site.url, ALICE, "to change");
            const updated = await write(
              site.url,
              "PATCH",
              `/api/note/${mine.id}`,
              { text: "changed" },
              MINIMAL,
            );
            expect(updated.status).toBe(204);
            expect(updated.text).toBe("");
            expect(updated.headers.get("preference-applied")).toBe("return=minimal");
            const read = await fetch(`${site.url}/api/note/${mine.id}`, { headers: ALICE });
            expect(read.headers.get("etag")).toBe(updated.headers.get("etag"));
            expect(((await read.json()) as { text: string }).text).toBe("changed");
            const deleted = await write(site.url, "DELETE", `/api/note/${mine.id}`, undefined, MINIMAL);
            expect(deleted.status).toBe(204);
            expect(deleted.text).toBe("");
            expect(deleted.headers.get("preference-applied")).toBe("return=minimal");
            expect((await fetch(`${site.url}/api/note/${mine.id}`, { headers: ALICE })).status).toBe(404);
          });

          it("changes nothing without it, with return=representation, or when the write fails", async () => {
            for (const headers of [ALICE, { ...ALICE, prefer: "return=representation" }]) {
              const res = await write(site.url, "POST", "/api/note", { text: "echoed" }, headers);
              expect(res.status).toBe(201);
              expect(JSON.parse(res.text)).toMatchObject({ text: "echoed" });
              expect(res.headers.get("preference-applied")).toBeNull();
            }
            // An error keeps its body: the caller needs to know what went wrong.
            const invalid = await write(site.url, "POST", "/api/note", { text: 5 }, MINIMAL);
            expect(invalid.status).toBe(400);
            expect(JSON.parse(invalid.text).code).toBe("VALIDATION_ERROR");
            const missing = await write(site.url, "PATCH", "/api/note/no-such-note", { text: "x" }, MINIMAL);
            expect(missing.status).toBe(404);
            expect(JSON.parse(missing.text).code).toBe("NOT_FOUND");
          });

          it("reads hostile Prefer headers without failing: minimal only where return=minimal is a preference", async () => {
            // prefer.ts: preferences split on ",", parameters after ";" dropped, then the name
            // compared case-insensitively with its whitespace removed.
            const cases: [string, boolean][] = [
              ["respond-async, wait=10", false],
              ["handling=lenient; foo=bar, return=minimal", true],
              ["return=minimal, return=minimal", true],
              ["return=MINIMAL", true],
              ["RETURN = minimal", true],
              ["return=minimal; charset=x", true],
              ["return=representation, return=minimal", true],
              ["return=minimalist", false],
              ["return=", false],
              [`x=${"y".repeat(8 * 1024)}`, false],
              [`${"a, ".repeat(2700)}return=minimal`, true],
              [",;,;=;,", false],
            ];
            for (const [prefer, minimal] of cases) {
              const res = await write(
                site.url,
                "POST",
                "/api/note",
                { text: "hostile" },
                { ...ALICE, prefer },
              );
              const label = prefer.slice(0, 40);
              expect(res.status, label).toBe(201);
              expect(res.headers.get("preference-applied"), label).toBe(minimal ? "return=minimal" : null);
              if (minimal) expect(res.text, label).toBe("");
              else expect(JSON.parse(res.text), label).toMatchObject({ text: "hostile" });
            }
          });

          it("the typed client's { returning: 'minimal' }: data null, the etag kept, for create, update and delete", async () => {
            const client = createClient<TunedApp>({ baseURL: `${site.url}/api`, headers: ALICE });
            const text = `typed ${randomBytes(4).toString("hex")}`;
            const created = await client.note.create({ text }, { returning: "minimal" });
            // Typed as null: there is no record to read.
            const none: null = created.data;
            expect(none).toBeNull();
            expect(created.error).toBeNull();
            expect(created.etag).toBeTruthy();
            const listed = await client.note.list({ where: { text } });
            const id = listed.data!.items[0]!.id;
            expect((await client.note.read(id)).etag).toBe(created.etag);
            const updated = await client.note.update(id, { text: `${text}!` }, { returning: "minimal" });
            expect(updated).toEqual({ data: null, error: null, etag: expect.any(String) });
            const read = await client.note.read(id);
            expect(read.data?.text).toBe(`${text}!`);
            expect(read.etag).toBe(updated.etag);
            expect(await client.note.delete(id, { returning: "minimal" })).toEqual({
              data: null,
              error: null,
            });
            expect((await client.note.read(id)).error?.code).toBe("NOT_FOUND");
            // Without it, the record as before.
            expect((await client.note.create({ text: "echoed" })).data?.text).toBe("echoed");
          });
        });
      });
    }
  },
  ["sqlite", "postgres", "mysql"],
);
