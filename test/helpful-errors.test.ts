// Errors that say what to do: a path outside basePath names it and how to set it; an unknown list
// parameter is named, with every parameter a list takes; the resource, audit and upload lists
// answer a bad limit or page alike; and a misspelt option key is a startup error with a
// "did you mean", not a silent 403 later.

import {
  apiKey,
  ConfigError,
  createResource,
  crudkit,
  type DatabaseOptions,
  MemoryStorage,
  ownedBy,
  references,
  withId,
} from "crudkit-api";
import { toExpressHandler } from "crudkit-api/node";
import {
  audit,
  betterAuth,
  cache,
  idempotency,
  jwt,
  memoryRateLimitStore,
  memoryStore,
  rateLimit,
  redisStore,
  upload,
} from "crudkit-api/plugins";
import express from "express";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { appPerDialect, forEachDialect } from "./dialects.ts";
import { openProduct } from "./fixtures.ts";
import { call } from "./helpers.ts";

const makeApp = (database: DatabaseOptions) =>
  crudkit({
    database,
    autoMigrate: true,
    resources: [openProduct],
    plugins: [
      apiKey({ keys: { "admin-key": { id: "admin" } } }),
      audit({ access: { read: true } }),
      upload({ storage: new MemoryStorage(), access: { upload: true, list: true, read: true } }),
    ],
  });

// On SQLite, PostgreSQL and MariaDB: the answers must not depend on the engine.
forEachDialect((dialect) => {
  const app = appPerDialect(dialect, makeApp);

  describe("a path outside basePath", () => {
    it("says which basePath crudkit serves, what it received, and how to set it", async () => {
      const res = await call(app, "GET", "/v1/products");
      expect(res.status).toBe(404);
      expect(res.body.code).toBe("NOT_FOUND");
      expect(res.body.message).toContain('basePath "/api"');
      expect(res.body.message).toContain("GET /v1/products");
      expect(res.body.message).toContain("crudkit({ basePath })");
    });

    it("mounted in Express under /v1 with the default basePath, the 404 says so", async () => {
      const server = express();
      server.use("/v1", toExpressHandler(app));
      const listening = server.listen(0, "127.0.0.1");
      await new Promise((resolve) => listening.once("listening", resolve));
      try {
        const { port } = listening.address() as { port: number };
        const res = await fetch(`http://127.0.0.1:${port}/v1/products`);
        expect(res.status).toBe(404);
        const body = (await res.json()) as { message: string };
        expect(body.message).toContain('basePath "/api"');
        expect(body.message).toContain("/v1/products");
      } finally {
        await new Promise((resolve) => listening.close(resolve));
      }
    });

    it("a 404 inside basePath stays as it was", async () => {
      const res = await call(app, "GET", "/api/nothing-here");
      expect(res.status).toBe(404);
      expect(res.body.message).toBe("No route answers GET /api/nothing-here.");
    });

    it("hostile paths are not echoed raw", async () => {
      const res = await call(app, "GET", `/%00${"x".repeat(5000)}`);
      expect(res.status).toBe(404);
      expect(res.text.length).toBeLessThan(1000);
      expect(res.text).not.toContain("\u0000");
    });
  });

  describe("an unknown list parameter", () => {
    it("is named, with every parameter a list takes, cursor included", async () => {
      const res = await call(app, "GET", "/api/products?filters[status]=active");
      expect(res.status).toBe(400);
      expect(res.body.code).toBe("BAD_REQUEST");
      expect(res.body.message).toContain('"filters[status]"');
      expect(res.body.message).toContain("filter[status]=active");
      for (const name of ["page", "limit", "search", "sortBy", "sortOrder", "count", "cursor"])
        expect(res.body.message).toContain(name);
      expect(res.body.details).toEqual([{ path: "filters[status]", message: "Not a list parameter." }]);
    });

    it("a name with control characters or 10 KB is not echoed", async () => {
      for (const name of ["a%00b", "x".repeat(10_000), "%3Cscript%3E"]) {
        const res = await call(app, "GET", `/api/products?${name}=1`);
        expect(res.status).toBe(400);
        expect(res.text).not.toContain("\u0000");
        expect(res.text.length).toBeLessThan(2000);
      }
    });
  });

  describe("a bad limit or page", () => {
    it("gets the same code on resource lists, the audit log and the upload list", async () => {
      const admin = { "x-api-key": "admin-key" };
      for (const query of ["limit=abc", "limit=0", "page=-1", "page=1.5"]) {
        const codes = await Promise.all(
          ["/api/products", "/api/audit/logs", "/api/upload/files"].map(async (path) => {
            const res = await call(app, "GET", `${path}?${query}`, { headers: admin });
            return `${res.status} ${res.body.code}`;
          }),
        );
        expect(codes, query).toEqual(["400 BAD_REQUEST", "400 BAD_REQUEST", "400 BAD_REQUEST"]);
      }
    });
  });
});

describe("a misspelt option key", () => {
  const schema = withId({ name: z.string() });
  const typo = (make: () => unknown, key: string, guess: string | undefined) => {
    let error: unknown;
    try {
      make();
    } catch (e) {
      error = e;
    }
    expect(error, key).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toContain(`unknown option "${key}"`);
    if (guess) expect((error as Error).message).toContain(`did you mean "${guess}"`);
  };
  const loose = (value: object) => value as never;

  it("in createResource, its access, crudkit() and references()", () => {
    typo(
      () => createResource(loose({ name: "a", schema, searchabel: ["name"] })),
      "searchabel",
      "searchable",
    );
    typo(() => createResource(loose({ name: "a", schema, acess: { read: true } })), "acess", "access");
    typo(() => createResource(loose({ name: "a", schema, access: { reed: true } })), "reed", "read");
    typo(
      () =>
        crudkit(
          loose({ database: { provider: "sqlite", url: ":memory:" }, resources: [], autoMigrat: true }),
        ),
      "autoMigrat",
      "autoMigrate",
    );
    typo(() => references("a", loose({ onDelet: "cascade" })), "onDelet", "onDelete");
    typo(() => ownedBy("ownerId", loose({ bypas: () => true })), "bypas", "bypass");
  });

  it("in each plugin factory", () => {
    typo(() => apiKey(loose({ keys: {}, hedaer: "x" })), "hedaer", "header");
    typo(() => audit(loose({ retentionDay: 3 })), "retentionDay", "retentionDays");
    typo(() => cache(loose({ tll: 3 })), "tll", "ttl");
    typo(() => memoryStore(loose({ maxEntrie: 3 })), "maxEntrie", "maxEntries");
    typo(() => redisStore(loose({}), loose({ prefx: "x" })), "prefx", "prefix");
    typo(() => idempotency(loose({ tl: 3 })), "tl", "ttl");
    typo(() => jwt(loose({ secret: "s".repeat(32), isuer: "x" })), "isuer", "issuer");
    typo(() => rateLimit(loose({ maxx: 3 })), "maxx", "max");
    typo(() => memoryRateLimitStore(loose({ maxKey: 3 })), "maxKey", "maxKeys");
    typo(() => upload(loose({ maxFilesize: 3 })), "maxFilesize", "maxFileSize");
    typo(() => betterAuth(loose({ auth: {}, usr: () => null })), "usr", "user");
  });

  it("refuses __proto__ and constructor keys, and a key far from any is named without a guess", () => {
    typo(() => cache(JSON.parse('{"__proto__": {"ttl": 1}}')), "__proto__", undefined);
    typo(() => cache(loose({ constructor: 1 })), "constructor", undefined);
    typo(() => cache(loose({ somethingElseEntirely: 1 })), "somethingElseEntirely", undefined);
    expect(() => cache(loose({ somethingElseEntirely: 1 }))).toThrow(/It takes store, ttl/);
  });
});
