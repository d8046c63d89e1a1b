// Hostile input against the example server listening on 127.0.0.1, on SQLite, PostgreSQL and
// MariaDB: deep and huge JSON in every body, odd bytes in every string, id, query parameter,
// header and filename. Each answer has its exact status and code and a JSON body that leaks
// nothing; whatever is acknowledged reads back the same; the server is healthy after each group.

import { readdirSync } from "node:fs";
import { crudkit, type DatabaseOptions } from "crudkit-api";
import { type RunningServer, serve } from "crudkit-api/node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createExampleApp } from "../examples/app.ts";
import { forEachDialect } from "./dialects.ts";
import { journal } from "./fixtures.ts";
import { expectNoLeak, readResponse, type TestResponse, tempUploadDirs } from "./helpers.ts";
import { rawRequest } from "./wire.ts";

const KEY = "hostile-suite-key";
const AUTH = { "x-api-key": KEY };
const JSON_HEADERS = { ...AUTH, "content-type": "application/json" };

/** Strings every database must store and give back exactly as sent. */
const ODD_BUT_FINE = [
  "emoji 🎩👩‍👩‍👧",
  "right-to-left ‮txt",
  "combining é é",
  "line\u2028separator\u2029",
  "controls \u0001\u0007\u001f\u007f",
  "'; drop table product; --",
  "%_\\ wildcards",
  "\ufeffbom and \ufffd",
  "tab\tnew\nline",
  "𝔘𝔫𝔦𝔠𝔬𝔡𝔢 astral",
];

const deep = (levels: number, leaf = "1") => "[".repeat(levels) + leaf + "]".repeat(levels);
const deepObject = (levels: number): string => `${'{"a":'.repeat(levels)}1${"}".repeat(levels)}`;

type Answer = TestResponse;

forEachDialect((dialect) => {
  let server: RunningServer;
  let journalServer: RunningServer;
  let uploadDir: string;
  let spoolDir: string;
  const logged: string[] = [];

  beforeAll(async () => {
    ({ uploadDir, spoolDir } = tempUploadDirs());
    const example = createExampleApp({
      database: await dialect.fresh(),
      apiKey: KEY,
      uploadDir,
      spoolDir,
    });
    server = await serve(example, { port: 0 });
    const journals = crudkit({
      database: (await dialect.fresh()) as DatabaseOptions,
      autoMigrate: true,
      resources: [journal],
      log: (message) => logged.push(message),
    });
    journalServer = await serve(journals, { port: 0 });
  });
  afterAll(async () => {
    await server?.close();
    await journalServer?.close();
  });
  afterAll(() => {
    console.log(
      `hostile probes on ${dialect.name}: ${probes.total}, answered 5xx: ${probes.serverErrors.length}`,
    );
    expect(probes.serverErrors).toEqual([]);
  });

  /** Every probe's answer, counted: the suite ends with none of them a 5xx (issue 39). */
  const probes = { total: 0, serverErrors: [] as string[] };
  const send = async (path: string, init: RequestInit & { base?: string } = {}): Promise<Answer> => {
    const answer = await readResponse(await fetch(`${init.base ?? server.url}${path}`, init));
    probes.total++;
    if (answer.status >= 500)
      probes.serverErrors.push(`${init.method ?? "GET"} ${path.slice(0, 80)}: ${answer.status}`);
    return answer;
  };
  const post = (path: string, body: string, base?: string) =>
    send(path, { method: "POST", headers: JSON_HEADERS, body, base });
  const patch = (path: string, body: string, base?: string) =>
    send(path, { method: "PATCH", headers: JSON_HEADERS, body, base });
  const get = (path: string, base?: string) => send(path, { headers: AUTH, base });

  /** The documented error: status, code, JSON content type, a message, and no leak. */
  const expectError = (answer: Answer, status: number, code: string, message?: RegExp) => {
    expect(answer.status, answer.text.slice(0, 200)).toBe(status);
    expect(answer.headers.get("content-type")).toBe("application/json");
    expect(answer.body?.code, answer.text.slice(0, 200)).toBe(code);
    expect(typeof answer.body.message).toBe("string");
    if (message) expect(answer.body.message).toMatch(message);
    expectNoLeak(answer.text);
  };

  /** After each group: readiness answers ok, lists answer, nothing is left in the spool. */
  const expectHealthy = async () => {
    const health = await send("/api/health");
    expect(health.status).toBe(200);
    expect(health.body).toEqual({ status: "ok", checks: { database: "ok" } });
    expect((await get("/api/products")).status).toBe(200);
    expect((await get("/api/upload/files")).status).toBe(200);
    expect((await get("/api/audit/logs")).status).toBe(200);
    expect((await get("/api/journals", journalServer.url)).status).toBe(200);
    expect(readdirSync(spoolDir)).toEqual([]);
    expect(readdirSync(uploadDir).filter((name) => name.startsWith(".tmp-"))).toEqual([]);
  };

  describe("hostile input", () => {
    it("deep or huge JSON in every body is a 400 or 413 that says the limit", async () => {
      // 32 levels; 30 on MariaDB, whose JSON columns stop at 31 and crudkit's audit wraps a level more.
      const limit = new RegExp(`${dialect.name === "mysql" ? 30 : 32} levels`);
      for (const body of [deep(33), deep(4100), deep(100_000), deepObject(40)]) {
        expectError(await post("/api/product", body), 400, "BAD_REQUEST", limit);
        expectError(await post("/api/journal", body, journalServer.url), 400, "BAD_REQUEST", limit);
        expectError(await patch("/api/product/x", body), 400, "BAD_REQUEST", limit);
      }
      // Inside a JSON field, and inside upload metadata, the same limit holds.
      const nested = `{"title":"t","data":{"x":${deep(40)}}}`;
      expectError(await post("/api/journal", nested, journalServer.url), 400, "BAD_REQUEST", limit);
      for (const levels of [40, 4100, 10_000]) {
        const upload = `{"filename":"a.txt","mimeType":"text/plain","metadata":${deepObject(levels)},"file":"aGk="}`;
        expectError(await post("/api/upload/file", upload), 400, "BAD_REQUEST", limit);
      }
      // Within the limit is fine, and reads back the same.
      const ok = await post("/api/journal", `{"title":"t","data":{"x":${deep(27)}}}`, journalServer.url);
      expect(ok.status).toBe(201);
      expect((await get(`/api/journal/${ok.body.id}`, journalServer.url)).body.data.x).toEqual(
        JSON.parse(deep(27)),
      );
      // Over the body limit (1 MiB), declared or chunked.
      const huge = JSON.stringify({ name: "x".repeat(1_100_000), price: 1 });
      expectError(await post("/api/product", huge), 413, "PAYLOAD_TOO_LARGE");
      const chunked = new ReadableStream({
        start(controller) {
          controller.enqueue(new TextEncoder().encode(huge));
          controller.close();
        },
      });
      expectError(
        await send("/api/product", {
          method: "POST",
          headers: JSON_HEADERS,
          body: chunked,
          duplex: "half",
        } as never),
        413,
        "PAYLOAD_TOO_LARGE",
      );
      // A 900 KB string and a JSON field of 20,000 keys fit the limit and every database.
      const long = await post(
        "/api/journal",
        JSON.stringify({ title: "y".repeat(900_000) }),
        journalServer.url,
      );
      expect(long.status).toBe(201);
      expect((await get(`/api/journal/${long.body.id}`, journalServer.url)).body.title).toHaveLength(900_000);
      const wide = Object.fromEntries(Array.from({ length: 20_000 }, (_, i) => [`k${i}`, i]));
      const many = await post(
        "/api/journal",
        JSON.stringify({ title: "wide", data: wide }),
        journalServer.url,
      );
      expect(many.status).toBe(201);
      expect((await get(`/api/journal/${many.body.id}`, journalServer.url)).body.data).toEqual(wide);
      await expectHealthy();
    });

    it("malformed, mistyped and prototype-polluting bodies are refused", async () => {
      const cases: [string, number, string][] = [
        ["{", 400, "BAD_REQUEST"],
        ['{"name":"a","price":1', 400, "BAD_REQUEST"],
        ["[]", 400, "VALIDATION_ERROR"],
        ["null", 400, "VALIDATION_ERROR"],
        ['"text"', 400, "VALIDATION_ERROR"],
        ['{"name":1,"price":"1"}', 400, "VALIDATION_ERROR"],
        ['{"name":"a","price":1e400}', 400, "VALIDATION_ERROR"],
        ['{"name":"a","price":-1}', 400, "VALIDATION_ERROR"],
        ['{"name":"a","price":1,"__proto__":{"admin":true}}', 400, "VALIDATION_ERROR"],
        ['{"name":"a","price":1,"constructor":{"prototype":{}}}', 400, "VALIDATION_ERROR"],
        ['{"name":"a","price":1,"id":""}', 400, "VALIDATION_ERROR"],
        [`{"name":"a","price":1,"id":"${"i".repeat(300)}"}`, 400, "VALIDATION_ERROR"],
        ['{"name":"a","price":1,"createdAt":"2020-01-01"}', 400, "VALIDATION_ERROR"],
        ["\u0000", 400, "BAD_REQUEST"],
        ["", 400, "BAD_REQUEST"],
      ];
      for (const [body, status, code] of cases) expectError(await post("/api/product", body), status, code);
      expectError(
        await send("/api/product", {
          method: "POST",
          headers: { ...AUTH, "content-type": "text/plain" },
          body: "{}",
        }),
        415,
        "UNSUPPORTED_MEDIA_TYPE",
      );
      // Dates outside what every database stores, top-level or nested.
      for (const at of ["10000-01-01", "2024-13-01", "yesterday", "", 1700000000000]) {
        expectError(
          await post(
            "/api/journal",
            JSON.stringify({ title: "t", events: [{ at, what: "x" }] }),
            journalServer.url,
          ),
          400,
          "VALIDATION_ERROR",
        );
      }
      expect(({} as Record<string, unknown>).admin).toBeUndefined();
      await expectHealthy();
    });

    it("NUL and lone surrogates in any body string or key are a 400 naming the field", async () => {
      const bad: [string, string][] = [
        ['{"name":"a\\u0000b","price":1}', "name"],
        ['{"name":"\\ud800","price":1}', "name"],
        ['{"name":"x\\udfffy","price":1}', "name"],
      ];
      for (const [body, path] of bad) {
        const answer = await post("/api/product", body);
        expectError(answer, 400, "VALIDATION_ERROR");
        expect(answer.body.details[0].path).toBe(path);
      }
      const nested: [string, string][] = [
        ['{"title":"t","data":{"k":"\\u0000"}}', "data.k"],
        ['{"title":"t","data":{"\\u0000":1}}', "data.?"],
        ['{"title":"t","data":{"list":["ok","\\ud83d"]}}', "data.list.1"],
        ['{"title":"t","events":[{"at":"2024-01-01","what":"\\udc00"}]}', "events.0.what"],
      ];
      for (const [body, path] of nested) {
        const answer = await post("/api/journal", body, journalServer.url);
        expectError(answer, 400, "VALIDATION_ERROR");
        expect(answer.body.details[0].path).toBe(path);
      }
      const created = await post("/api/product", '{"name":"fine","price":1}');
      expect(created.status).toBe(201);
      expectError(
        await patch(`/api/product/${created.body.id}`, '{"name":"\\u0000"}'),
        400,
        "VALIDATION_ERROR",
      );
      expect((await get(`/api/product/${created.body.id}`)).body.name).toBe("fine");
      // Invalid UTF-8 bytes are not JSON text: they decode to U+FFFD, stored and read back as such.
      const raw = Buffer.concat([
        Buffer.from('{"name":"a'),
        Buffer.from([0xff, 0xfe]),
        Buffer.from('","price":1}'),
      ]);
      const replaced = await send("/api/product", { method: "POST", headers: JSON_HEADERS, body: raw });
      expect(replaced.status).toBe(201);
      expect((await get(`/api/product/${replaced.body.id}`)).body.name).toBe(replaced.body.name);
      await expectHealthy();
    });

    it("odd but valid text is stored and read back exactly as acknowledged, and found by search", async () => {
      for (const name of ODD_BUT_FINE) {
        const created = await post("/api/product", JSON.stringify({ name, price: 1 }));
        expect(created.status, name).toBe(201);
        expect(created.body.name).toBe(name);
        const read = await get(`/api/product/${created.body.id}`);
        expect(read.body).toEqual(created.body);
        const updated = await patch(`/api/product/${created.body.id}`, JSON.stringify({ name: `${name}!` }));
        expect(updated.body.name).toBe(`${name}!`);
        expect((await get(`/api/product/${created.body.id}`)).body).toEqual(updated.body);
        const entries = await get(
          `/api/audit/logs?recordId=${encodeURIComponent(created.body.id)}&operation=update`,
        );
        expect(entries.body.items[0].before.name).toBe(name);
        expect(entries.body.items[0].after.name).toBe(`${name}!`);
      }
      const found = await get(`/api/products?search=${encodeURIComponent("%_\\")}`);
      expect(found.body.items.map((p: { name: string }) => p.name)).toEqual(["%_\\ wildcards!"]);
      // Ids with odd but valid text too.
      for (const id of ["id with spaces", "ïd-ünicode-🎩", "a/b", "'; drop table product; --"]) {
        const created = await post("/api/product", JSON.stringify({ id, name: "n", price: 1 }));
        expect(created.status, id).toBe(201);
        const read = await get(`/api/product/${encodeURIComponent(id)}`);
        expect(read.body.id).toBe(id);
      }
      await expectHealthy();
    });

    it("odd bytes in path ids are a 400 or a 404, never a 500", async () => {
      for (const method of ["GET", "PATCH", "DELETE"]) {
        const init = { method, headers: JSON_HEADERS, body: method === "PATCH" ? '{"price":2}' : undefined };
        expectError(await send("/api/product/%00", init), 400, "BAD_REQUEST", /path parameter id/);
        expectError(await send("/api/product/a%00b", init), 400, "BAD_REQUEST");
        expectError(await send("/api/product/%ED%A0%80", init), 400, "BAD_REQUEST");
        expectError(await send("/api/product/%E0%A4%A", init), 400, "BAD_REQUEST");
        expectError(await send(`/api/product/${"z".repeat(5000)}`, init), 404, "NOT_FOUND");
        expectError(await send("/api/product/1'%20OR%20'1'%3D'1", init), 404, "NOT_FOUND");
        expectError(
          await send("/api/upload/file/%00", init),
          method === "PATCH" ? 405 : 400,
          method === "PATCH" ? "METHOD_NOT_ALLOWED" : "BAD_REQUEST",
        );
      }
      expectError(await get("/api/upload/download/%00"), 400, "BAD_REQUEST");
      // An id differing only by trailing spaces is another id: MySQL's padding comparison must not
      // let a request for "pad " read, change or delete "pad".
      const padded = await post("/api/product", '{"id":"pad","name":"n","price":1}');
      expect(padded.status).toBe(201);
      for (const method of ["GET", "PATCH", "DELETE"]) {
        const init = { method, headers: JSON_HEADERS, body: method === "PATCH" ? '{"price":9}' : undefined };
        expectError(await send("/api/product/pad%20", init), 404, "NOT_FOUND");
      }
      expect((await get("/api/product/pad")).body.price).toBe(1);
      expectError(await get("/api/product/..%2F..%2Fetc%2Fpasswd"), 404, "NOT_FOUND");
      await expectHealthy();
    });

    it("odd bytes in query parameters are a 400 naming the parameter", async () => {
      const cases: [string, RegExp][] = [
        ["/api/products?search=%00", /query parameter search/],
        ["/api/products?search=a%00", /query parameter search/],
        ["/api/products?sortBy=%00", /query parameter sortBy/],
        ["/api/products?%00=1", /query parameter/],
        ["/api/audit/logs?resource=%00", /query parameter resource/],
        ["/api/audit/logs?userId=x%00y", /query parameter userId/],
        ["/api/upload/files?mimeType=image%2F%00", /query parameter mimeType/],
      ];
      for (const [path, message] of cases) expectError(await get(path), 400, "BAD_REQUEST", message);
      const refused: [string, string][] = [
        ["/api/products?page=-1", "BAD_REQUEST"],
        ["/api/products?page=1e3", "BAD_REQUEST"],
        ["/api/products?limit=99999999999999999999", "BAD_REQUEST"],
        ["/api/products?sortBy=name;drop%20table%20product", "BAD_REQUEST"],
        ["/api/products?sortOrder=sideways", "BAD_REQUEST"],
        [`/api/products?search=${"s".repeat(201)}`, "BAD_REQUEST"],
        ["/api/audit/logs?from=yesterday", "VALIDATION_ERROR"],
        ["/api/audit/logs?colour=red", "BAD_REQUEST"],
        ["/api/upload/files?mimeType=not-a-type", "BAD_REQUEST"],
        ["/api/products?filter[__proto__][admin]=true", "BAD_REQUEST"],
        ["/api/products?filter[constructor][prototype]=1", "BAD_REQUEST"],
      ];
      for (const [path, code] of refused) expectError(await get(path), 400, code);
      // Search of LIKE wildcards is literal, and of an injection finds nothing.
      expect((await get("/api/products?search=zz%25zz")).body.pagination.total).toBe(0);
      expect((await get("/api/products?search=zz_zz")).body.pagination.total).toBe(0);
      expect((await get("/api/products?search=%27%20OR%201%3D1%20--")).body.pagination.total).toBe(0);
      expect((await get("/api/audit/logs?resource=product%27%20OR%201%3D1%20--")).body.pagination.total).toBe(
        0,
      );
      await expectHealthy();
    });

    it("odd headers: bad keys are 401, malformed hosts and paths get the JSON error body", async () => {
      for (const key of ["\u00ff\u00fe", "k".repeat(5000), `${KEY}x`, "' OR 1=1 --"]) {
        const answer = await rawRequest(
          server.url,
          `GET /api/products HTTP/1.1\r\nHost: 127.0.0.1\r\nx-api-key: ${key}\r\nConnection: close\r\n\r\n`,
        );
        expect(answer.status, key.slice(0, 20)).toBe(401);
        expect(JSON.parse(answer.body).code).toBe("UNAUTHORIZED");
      }
      const malformed = [
        "GET /api/products HTTP/1.1\r\nHost: exa mple.com\r\nConnection: close\r\n\r\n",
        "GET /api/products HTTP/1.1\r\nHost: [::1\r\nConnection: close\r\n\r\n",
        "GET /api\\products HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n",
        "GET /api/products HTTP/1.1\r\nHost: a@b\r\nConnection: close\r\n\r\n",
        "GET /api/products HTTP/9.9\r\nHost: 127.0.0.1\r\n\r\n",
        "NONSENSE\r\n\r\n",
        "GET /api/products HTTP/1.1\r\nHost: 127.0.0.1\r\nBad Header Line\r\n\r\n",
        "POST /api/product HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n",
        "POST /api/product HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
      ];
      for (const head of malformed) {
        const answer = await rawRequest(server.url, head);
        expect(answer.status, head.slice(0, 40)).toBe(400);
        expect(answer.headers["content-type"]).toBe("application/json");
        expect(JSON.parse(answer.body).code).toBe("BAD_REQUEST");
        expectNoLeak(answer.body);
      }
      const oversized = await rawRequest(
        server.url,
        `GET /api/products HTTP/1.1\r\nHost: 127.0.0.1\r\nx-big: ${"b".repeat(20_000)}\r\n\r\n`,
      );
      expect(oversized.status).toBe(431);
      expect(oversized.headers["content-type"]).toBe("application/json");
      expect(JSON.parse(oversized.body).code).toBe("HEADERS_TOO_LARGE");
      // A user agent of odd bytes is recorded as received, and read back the same.
      const agent = "agent \u00e9\u00ff";
      const body = '{"name":"ua","price":1}';
      const answer = await rawRequest(
        server.url,
        `POST /api/product HTTP/1.1\r\nHost: 127.0.0.1\r\nx-api-key: ${KEY}\r\nuser-agent: ${agent}\r\n` +
          `content-type: application/json\r\ncontent-length: ${body.length}\r\nConnection: close\r\n\r\n`,
        body,
      );
      expect(answer.status).toBe(201);
      const created = { body: JSON.parse(answer.body) };
      const entry = await get(`/api/audit/logs?recordId=${created.body.id}`);
      expect(entry.body.items[0].userAgent).toBe(agent);
      await expectHealthy();
    });

    it("uploads: odd filenames, metadata and bodies are refused and leave no file", async () => {
      const upload = (fields: Record<string, unknown>) =>
        post(
          "/api/upload/file",
          JSON.stringify({ file: "aGk=", filename: "a.txt", mimeType: "text/plain", ...fields }),
        );
      const refused: [Record<string, unknown>, string, string][] = [
        [{ filename: "a\u0000.txt" }, "VALIDATION_ERROR", "filename"],
        [{ filename: "\ud800.txt" }, "VALIDATION_ERROR", "filename"],
        [{ filename: "" }, "VALIDATION_ERROR", "filename"],
        [{ filename: 5 }, "VALIDATION_ERROR", "filename"],
        [{ mimeType: "text/plain\u0000" }, "VALIDATION_ERROR", "mimeType"],
        [{ metadata: { note: "a\u0000b" } }, "VALIDATION_ERROR", "metadata.note"],
        [{ metadata: { "\udc00": 1 } }, "VALIDATION_ERROR", "metadata.?"],
        [{ metadata: [1, 2] }, "VALIDATION_ERROR", "metadata"],
        [JSON.parse('{"metadata":{"__proto__":{"admin":true}}}'), "VALIDATION_ERROR", "metadata.__proto__"],
        [
          JSON.parse('{"metadata":{"constructor":{"prototype":{}}}}'),
          "VALIDATION_ERROR",
          "metadata.constructor",
        ],
        [{ file: "not base64!" }, "BAD_REQUEST", ""],
        [{ file: "data:text/plain;base64,aGk=" }, "BAD_REQUEST", ""],
      ];
      for (const [fields, code, path] of refused) {
        const answer = await upload(fields);
        expectError(answer, 400, code);
        if (path) expect(answer.body.details[0].path).toBe(path);
      }
      // The file before its name: spooled, then refused, spool emptied.
      const fileFirst = await post(
        "/api/upload/file",
        `{"file":"aGk=","filename":"b\\u0000.txt","mimeType":"text/plain"}`,
      );
      expectError(fileFirst, 400, "VALIDATION_ERROR");
      // Odd Range and If-None-Match headers on a download: a 2xx, 304 or 416, never a 5xx.
      const stored = await upload({
        filename: "range.txt",
        file: Buffer.from("0123456789").toString("base64"),
      });
      for (const range of [
        "bytes=abc",
        "bytes=-0",
        "bytes=99999999999999999999-",
        "bytes=0-1,2-3",
        "bytes=5-1",
        "bytes=-99999999999999999999",
        "items=0-1",
        "bytes=\u00ff",
      ]) {
        const answer = await rawRequest(
          server.url,
          `GET /api/upload/download/${stored.body.id} HTTP/1.1\r\nHost: 127.0.0.1\r\nx-api-key: ${KEY}\r\n` +
            `Range: ${range}\r\nIf-None-Match: "\u00ff, W/\r\nConnection: close\r\n\r\n`,
        );
        expect([200, 206, 304, 416], range).toContain(answer.status);
        if (answer.status === 416) expect(JSON.parse(answer.body).code).toBe("RANGE_NOT_SATISFIABLE");
      }
      // Accepted odd names read back exactly, in the record and the list.
      for (const filename of ["ünïcödé 🎩.txt", "'; drop table uploaded_files; --.txt", "a\u0007b.txt"]) {
        const created = await upload({ filename, metadata: { note: filename } });
        expect(created.status, filename).toBe(201);
        const record = await get(`/api/upload/file/${created.body.id}`);
        expect(record.body.originalName).toBe(filename);
        expect(record.body.metadata).toEqual({ note: filename });
      }
      await expectHealthy();
    });

    it("optional fields clear with null, nested dates accept ISO strings", async () => {
      const created = await post(
        "/api/journal",
        JSON.stringify({ title: "t", subtitle: "s", events: [{ at: "2024-05-01T10:00:00Z", what: "w" }] }),
        journalServer.url,
      );
      expect(created.status).toBe(201);
      expect(created.body.events).toEqual([{ at: "2024-05-01T10:00:00.000Z", what: "w" }]);
      const cleared = await patch(`/api/journal/${created.body.id}`, '{"subtitle":null}', journalServer.url);
      expect(cleared.status).toBe(200);
      expect("subtitle" in cleared.body).toBe(false);
      expect(await get(`/api/journal/${created.body.id}`, journalServer.url)).toMatchObject({
        body: cleared.body,
      });
      // A required field still refuses null.
      expectError(
        await patch(`/api/journal/${created.body.id}`, '{"title":null}', journalServer.url),
        400,
        "VALIDATION_ERROR",
      );
      await expectHealthy();
    });
  });
});
