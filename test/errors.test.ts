import type { DatabaseOptions } from "crudkit-api";
import { appPerDialect, forEachDialect } from "./dialects.ts";
// One test per row of the DESIGN §3 error table: status, code, and nothing internal in the body.

import { APIError, apiKey, createResource, crudkit, withId } from "crudkit-api";
import { describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { openProduct } from "./fixtures.ts";
import { call, expectNoLeak, tempDatabaseUrl } from "./helpers.ts";

const logged: unknown[] = [];
const exploding = createResource({
  name: "exploding",
  schema: withId({ name: z.string() }),
  access: { create: true, read: true },
  hooks: {
    beforeCreate() {
      throw new Error(`secret failure at ${process.cwd()}/src/db.ts: SQLITE_BUSY`);
    },
  },
});
const locked = createResource({
  name: "locked",
  schema: withId({ name: z.string() }),
  access: { read: false },
});

const makeApp = (database: DatabaseOptions) =>
  crudkit({
    database,
    autoMigrate: true,
    resources: [openProduct, exploding, locked],
    plugins: [apiKey({ keys: { "good-key": { id: "u1" } } })],
    bodyLimit: 1024,
    log: (message, error) => logged.push({ message, error }),
  });

forEachDialect((dialect) => {
  const app = appPerDialect(dialect, makeApp);

  function expectError(
    res: { status: number; body: any; text: string; headers: Headers },
    status: number,
    code: string,
  ) {
    expect(res.status).toBe(status);
    expect(res.headers.get("content-type")).toBe("application/json");
    expect(res.body.code).toBe(code);
    expect(typeof res.body.message).toBe("string");
    expect(res.body.message.length).toBeGreaterThan(10);
    expectNoLeak(res.text);
  }

  describe("400 VALIDATION_ERROR", () => {
    it("names each invalid field in details", async () => {
      const res = await call(app, "POST", "/api/product", { body: { name: "", price: "free" } });
      expectError(res, 400, "VALIDATION_ERROR");
      expect(res.body.details).toEqual([
        { path: "name", message: expect.any(String) },
        { path: "price", message: expect.any(String) },
      ]);
      expect(res.body.message).toMatch(/^Invalid product: name: /);
    });

    it("names unknown fields", async () => {
      const res = await call(app, "POST", "/api/product", {
        body: { name: "Hat", price: 1, colour: "red", size: 3 },
      });
      expectError(res, 400, "VALIDATION_ERROR");
      expect(res.body.details).toEqual([
        { path: "colour", message: 'Unknown field "colour".' },
        { path: "size", message: 'Unknown field "size".' },
      ]);
    });

    it("refuses a body that is not an object", async () => {
      for (const body of [[1, 2], "text", 42, null]) {
        const res = await call(app, "POST", "/api/product", { body });
        expectError(res, 400, "VALIDATION_ERROR");
      }
    });

    it("refuses a prototype-polluting key as unknown and leaves Object.prototype alone", async () => {
      const res = await call(app, "POST", "/api/product", {
        rawBody: '{"name":"x","price":1,"__proto__":{"polluted":true}}',
        headers: { "content-type": "application/json" },
      });
      expectError(res, 400, "VALIDATION_ERROR");
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    });
  });

  describe("400 BAD_REQUEST", () => {
    it("answers malformed JSON", async () => {
      const res = await call(app, "POST", "/api/product", {
        rawBody: '{"name": "Hat",',
        headers: { "content-type": "application/json" },
      });
      expectError(res, 400, "BAD_REQUEST");
      expect(res.body.message).toBe("The request body is not valid JSON.");
    });

    it("answers an empty body", async () => {
      const res = await call(app, "POST", "/api/product", {
        rawBody: "",
        headers: { "content-type": "application/json" },
      });
      expectError(res, 400, "BAD_REQUEST");
    });

    it("answers bad query parameters", async () => {
      for (const query of [
        "page=abc",
        "page=0",
        "limit=-1",
        "limit=1.5",
        "sortOrder=sideways",
        "sortBy=nope",
        "page=99999999999",
      ]) {
        expectError(await call(app, "GET", `/api/products?${query}`), 400, "BAD_REQUEST");
      }
    });

    it("answers broken percent-encoding in the path", async () => {
      expectError(await call(app, "GET", "/api/product/%E0%A4%A"), 400, "BAD_REQUEST");
    });
  });

  describe("401 UNAUTHORIZED", () => {
    it("answers a forged API key, even on an open operation", async () => {
      const res = await call(app, "GET", "/api/products", { headers: { "x-api-key": "forged" } });
      expectError(res, 401, "UNAUTHORIZED");
    });
  });

  describe("403 FORBIDDEN", () => {
    it("names the rule to set when none is", async () => {
      const res = await call(app, "POST", "/api/locked", { body: { name: "x" } });
      expectError(res, 403, "FORBIDDEN");
      expect(res.body.message).toContain("access.create");
    });

    it("answers a rule that refuses", async () => {
      expectError(await call(app, "GET", "/api/locked/any"), 403, "FORBIDDEN");
    });
  });

  describe("404 NOT_FOUND", () => {
    it("answers a missing record", async () => {
      expectError(await call(app, "GET", "/api/product/missing"), 404, "NOT_FOUND");
    });

    it("answers an unknown route, outside the base path too", async () => {
      for (const path of ["/api/nothing", "/api/product/a/b", "/", "/other", "/api/products/"]) {
        expectError(await call(app, "GET", path), 404, "NOT_FOUND");
      }
    });
  });

  describe("405 METHOD_NOT_ALLOWED", () => {
    it("answers a known path with a wrong method and lists the allowed ones", async () => {
      const res = await call(app, "POST", "/api/product/x", { body: {} });
      expectError(res, 405, "METHOD_NOT_ALLOWED");
      expect(res.headers.get("allow")).toBe("GET, HEAD, PATCH, DELETE, PUT");
      const list = await call(app, "POST", "/api/products", { body: {} });
      expect(list.headers.get("allow")).toBe("GET, HEAD");
    });
  });

  describe("409 CONFLICT", () => {
    it("answers a duplicate id", async () => {
      await call(app, "POST", "/api/product", { body: { id: "dup", name: "a", price: 1 } });
      expectError(
        await call(app, "POST", "/api/product", { body: { id: "dup", name: "b", price: 1 } }),
        409,
        "CONFLICT",
      );
    });
  });

  describe("413 PAYLOAD_TOO_LARGE", () => {
    it("answers a declared length over the limit without reading the body", async () => {
      const body = JSON.stringify({ name: "x".repeat(2000), price: 1 });
      const res = await call(app, "POST", "/api/product", {
        rawBody: body,
        headers: { "content-type": "application/json", "content-length": String(body.length) },
      });
      expectError(res, 413, "PAYLOAD_TOO_LARGE");
    });

    it("stops reading a streamed body at the limit", async () => {
      let pulled = 0;
      const stream = new ReadableStream<Uint8Array>({
        pull(controller) {
          pulled++;
          if (pulled > 1000) controller.close();
          else controller.enqueue(new TextEncoder().encode('{"name":"'.padEnd(512, "x")));
        },
      });
      const response = await app.handler(
        new Request("http://localhost/api/product", {
          method: "POST",
          body: stream,
          headers: { "content-type": "application/json" },
          duplex: "half",
        } as RequestInit),
      );
      expect(response.status).toBe(413);
      expect(((await response.json()) as { code: string }).code).toBe("PAYLOAD_TOO_LARGE");
      expect(pulled).toBeLessThan(10);
    });
  });

  describe("415 UNSUPPORTED_MEDIA_TYPE", () => {
    it("answers a body that is not JSON", async () => {
      for (const type of [
        "text/plain",
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x",
      ]) {
        const res = await call(app, "POST", "/api/product", {
          rawBody: "name=Hat&price=1",
          headers: { "content-type": type },
        });
        expectError(res, 415, "UNSUPPORTED_MEDIA_TYPE");
      }
    });

    it("accepts JSON with a charset and +json types", async () => {
      for (const type of ["application/json; charset=utf-8", "application/merge-patch+json"]) {
        const res = await call(app, "POST", "/api/product", {
          rawBody: '{"name":"Hat","price":1}',
          headers: { "content-type": type },
        });
        expect(res.status).toBe(201);
      }
    });
  });

  describe("500 INTERNAL_ERROR", () => {
    it("answers a generic message and logs the cause", async () => {
      logged.length = 0;
      const res = await call(app, "POST", "/api/exploding", { body: { name: "x" } });
      expectError(res, 500, "INTERNAL_ERROR");
      expect(res.body).toEqual({
        code: "INTERNAL_ERROR",
        message: "The server could not complete the request.",
        // The request's id, for the user to quote (test/request-id.test.ts).
        requestId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      });
      expect(res.text).not.toContain("secret");
      expect(logged).toHaveLength(1);
      expect(String((logged[0] as { error: Error }).error.message)).toContain("secret failure");
    });

    it("logs to console.error by default", async () => {
      const spy = vi.spyOn(console, "error").mockImplementation(() => {});
      const quiet = crudkit({
        database: { provider: "sqlite", url: tempDatabaseUrl() },
        autoMigrate: true,
        resources: [exploding],
      });
      const res = await call(quiet, "POST", "/api/exploding", { body: { name: "x" } });
      expect(res.status).toBe(500);
      expect(spy).toHaveBeenCalledOnce();
      spy.mockRestore();
    });
  });
});

describe("APIError", () => {
  it("carries no stack (it is an answer, never logged) and leaves the stack depth of other errors alone", () => {
    const before = Error.stackTraceLimit;
    const error = new APIError("NOT_FOUND", "No such product.", { cause: new Error("inner") });
    expect(error).toBeInstanceOf(Error);
    expect(error.stack).not.toMatch(/\n\s+at /);
    expect((error.cause as Error).stack).toMatch(/\n\s+at /);
    expect(Error.stackTraceLimit).toBe(before);
    expect(new Error("other").stack).toMatch(/\n\s+at /);
  });
});
