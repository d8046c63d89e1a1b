import type { DatabaseOptions } from "crudkit-api";
import { type AccessContext, apiKey, createResource, crudkit, withId } from "crudkit-api";
import { beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { appPerDialect, forEachDialect } from "./dialects.ts";
import { call, tempDatabaseUrl } from "./helpers.ts";

const seen: AccessContext[] = [];
const hookCalls: string[] = [];
const note = createResource({
  name: "note",
  schema: withId({ text: z.string(), owner: z.string().optional() }),
  access: {
    create: (ctx) => {
      seen.push(ctx);
      return ctx.user !== null;
    },
    read: ({ user }) => user !== null,
    update: ({ user }) => user?.roles?.includes("admin") ?? false,
    delete: async ({ user }) => user?.roles?.includes("admin") ?? false,
    list: true,
  },
  hooks: {
    beforeRead: () => void hookCalls.push("beforeRead"),
    beforeUpdate: () => void hookCalls.push("beforeUpdate"),
    beforeDelete: () => void hookCalls.push("beforeDelete"),
  },
});
const closed = createResource({ name: "closed", schema: withId({ text: z.string() }) });

const makeApp = (database: DatabaseOptions) =>
  crudkit({
    database,
    autoMigrate: true,
    resources: [note, closed],
    plugins: [
      apiKey({
        keys: {
          "admin-key": { id: "admin", roles: ["admin"] },
          "user-key": { id: "user", roles: [] },
        },
      }),
    ],
  });

forEachDialect((dialect) => {
  const app = appPerDialect(dialect, makeApp);

  const admin = { "x-api-key": "admin-key" };
  const user = { "x-api-key": "user-key" };
  let existingId = "";
  beforeAll(async () => {
    await app.ready;
    existingId = (await call(app, "POST", "/api/note", { body: { text: "hello" }, headers: admin })).body.id;
  });

  describe("access rules", () => {
    it("give a function rule the user, headers, operation, resource and body", async () => {
      seen.length = 0;
      await call(app, "POST", "/api/note", { body: { text: "x" }, headers: { ...user, "x-trace": "t1" } });
      expect(seen).toHaveLength(1);
      const ctx = seen[0]!;
      expect(ctx.user).toEqual({ id: "user", roles: [] });
      expect(ctx.operation).toBe("create");
      expect(ctx.resource).toBe("note");
      expect(ctx.body).toEqual({ text: "x" });
      expect(ctx.headers.get("x-trace")).toBe("t1");
    });

    it("allow and deny per operation and role", async () => {
      expect((await call(app, "GET", `/api/note/${existingId}`, { headers: user })).status).toBe(200);
      expect(
        (await call(app, "PATCH", `/api/note/${existingId}`, { body: { text: "y" }, headers: user })).status,
      ).toBe(403);
      expect(
        (await call(app, "PATCH", `/api/note/${existingId}`, { body: { text: "y" }, headers: admin })).status,
      ).toBe(200);
      expect((await call(app, "GET", "/api/notes")).status).toBe(200);
    });

    it("deny every operation that has no rule, naming the rule to set", async () => {
      const cases: [string, string, string][] = [
        ["POST", "/api/closed", "create"],
        ["GET", "/api/closed/x", "read"],
        ["PATCH", "/api/closed/x", "update"],
        ["DELETE", "/api/closed/x", "delete"],
        ["GET", "/api/closeds", "list"],
      ];
      for (const [method, path, operation] of cases) {
        const res = await call(app, method, path, {
          headers: admin,
          ...(method === "POST" || method === "PATCH" ? { body: { text: "x" } } : {}),
        });
        expect(res.status).toBe(403);
        expect(res.body.message).toBe(
          `Access denied: no access rule is set for ${operation} on "closed". Set access.${operation} on the resource to allow it.`,
        );
      }
    });

    it("decide before any lookup: a denied caller gets the same answer for existing and missing ids", async () => {
      hookCalls.length = 0;
      const pairs: [string, string, Record<string, string>][] = [
        ["GET", "read", {}],
        ["PATCH", "update", user],
        ["DELETE", "delete", user],
      ];
      for (const [method, , headers] of pairs) {
        const body = method === "PATCH" ? { body: { text: "z" } } : {};
        const existing = await call(app, method, `/api/note/${existingId}`, { headers, ...body });
        const missing = await call(app, method, "/api/note/does-not-exist", { headers, ...body });
        expect(existing.status).toBe(403);
        expect(missing.status).toBe(403);
        expect(existing.text).toBe(missing.text);
      }
      expect(hookCalls).toEqual([]);
      expect((await call(app, "GET", `/api/note/${existingId}`, { headers: admin })).body.text).not.toBe("z");
    });

    it("refuse a denied create before reading its body", async () => {
      const res = await call(app, "POST", "/api/closed", {
        rawBody: "{not json",
        headers: { "content-type": "application/json" },
      });
      expect(res.status).toBe(403);
    });
  });

  describe("apiKey()", () => {
    it("a known key → its user; no key → anonymous; an unknown key → 401", async () => {
      expect((await call(app, "POST", "/api/note", { body: { text: "a" }, headers: user })).status).toBe(201);
      expect((await call(app, "POST", "/api/note", { body: { text: "a" } })).status).toBe(403);
      const forged = await call(app, "POST", "/api/note", {
        body: { text: "a" },
        headers: { "x-api-key": "admin-keY" },
      });
      expect(forged.status).toBe(401);
      expect(forged.body).toEqual({
        code: "UNAUTHORIZED",
        message: "The API key in the x-api-key header is not valid.",
      });
      expect((await call(app, "GET", "/api/notes", { headers: { "x-api-key": "" } })).status).toBe(401);
    });

    it("matches whole keys only: prefixes, extensions and padding are refused", async () => {
      const keyed = crudkit({
        database: { provider: "sqlite", url: tempDatabaseUrl() },
        autoMigrate: true,
        resources: [note],
        plugins: [apiKey({ keys: { short: { id: "s" }, "a-much-longer-key": { id: "l" } } })],
      });
      const status = async (key: string) =>
        (await call(keyed, "GET", "/api/notes", { headers: { "x-api-key": key } })).status;
      expect(await status("short")).toBe(200);
      expect(await status("a-much-longer-key")).toBe(200);
      // The sent key is written over the longer one just compared: nothing of that one may remain.
      expect(await status("short")).toBe(200);
      expect(await status("a-much-longer-key")).toBe(200);
      for (const wrong of [
        "shor",
        "short-",
        "shortx",
        "a-much-longer-ke",
        "a-much-longer-key!",
        "x".repeat(5000),
        "SHORT",
      ])
        expect(await status(wrong), wrong).toBe(401);
      await keyed.close();
    });

    it("reads a custom header and refuses an empty key in its configuration", async () => {
      const custom = crudkit({
        database: { provider: "sqlite", url: tempDatabaseUrl() },
        autoMigrate: true,
        resources: [note],
        plugins: [apiKey({ keys: { k: { id: "u" } }, header: "Authorization-Key" })],
      });
      expect(
        (
          await call(custom, "POST", "/api/note", {
            body: { text: "a" },
            headers: { "authorization-key": "k" },
          })
        ).status,
      ).toBe(201);
      expect(() => apiKey({ keys: { "": { id: "u" } } })).toThrow(/empty/);
    });
  });

  describe("identify option", () => {
    it("fills the user from the request, before identity plugins", async () => {
      const custom = crudkit({
        database: { provider: "sqlite", url: tempDatabaseUrl() },
        autoMigrate: true,
        resources: [note],
        identify: (request) =>
          request.headers.get("x-user") ? { id: request.headers.get("x-user")!, roles: ["admin"] } : null,
        plugins: [apiKey({ keys: { k: { id: "from-key" } } })],
      });
      const created = await call(custom, "POST", "/api/note", {
        body: { text: "a" },
        headers: { "x-user": "alice" },
      });
      expect(created.status).toBe(201);
      const patched = await call(custom, "PATCH", `/api/note/${created.body.id}`, {
        body: { text: "b" },
        headers: { "x-user": "alice" },
      });
      expect(patched.status).toBe(200);
      expect(
        (await call(custom, "POST", "/api/note", { body: { text: "a" }, headers: { "x-api-key": "k" } }))
          .status,
      ).toBe(201);
    });
  });
});
