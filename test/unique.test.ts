// Unique fields and indexes on SQLite, PostgreSQL and MariaDB: a repeated value answers 409 naming
// the field(s), from HTTP, app.api and the client, on create and update; indexed text still
// searches ignoring case and filters exactly.

import { createResource, crudkit, type DatabaseOptions, withId } from "crudkit-api";
import { createClient } from "crudkit-api/client";
import { beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { appPerDialect, forEachDialect } from "./dialects.ts";
import { call, expectNoLeak } from "./helpers.ts";

const member = createResource({
  name: "member",
  schema: withId({
    email: z.string(),
    team: z.string().max(50),
    handle: z.string().max(50),
    status: z.enum(["active", "away"]).default("active"),
  }),
  searchable: ["email"],
  unique: ["email", ["team", "handle"]],
  indexes: ["status", ["team", "status"]],
  access: { create: true, read: true, update: true, list: true },
});

const makeApp = (database: DatabaseOptions) => crudkit({ database, autoMigrate: true, resources: [member] });

forEachDialect((dialect) => {
  const app = appPerDialect(dialect, makeApp);
  let first = "";
  beforeAll(async () => {
    await app.ready;
    first = (await app.api.createMember({ body: { email: "Alice@example.com", team: "red", handle: "al" } }))
      .id;
    await app.api.createMember({ body: { email: "bob@example.com", team: "red", handle: "bo" } });
  });

  describe("unique fields", () => {
    it("answer 409 naming the field on a repeated value, and store nothing", async () => {
      const res = await call(app, "POST", "/api/member", {
        body: { email: "Alice@example.com", team: "blue", handle: "x" },
      });
      expect(res.status).toBe(409);
      expect(res.body).toEqual({
        code: "CONFLICT",
        message: 'Another member already has this "email": it must be unique.',
        details: [{ path: "email", message: "Must be unique." }],
      });
      expectNoLeak(res.text);
      // Unique is exact, as the filter language is: another case is another value.
      const otherCase = await call(app, "POST", "/api/member", {
        body: { email: "alice@example.com", team: "blue", handle: "x" },
      });
      expect(otherCase.status).toBe(201);
      expect((await app.api.listMembers()).pagination.total).toBe(3);
    });

    it("name every field of a compound set, on create and on update", async () => {
      const res = await call(app, "POST", "/api/member", {
        body: { email: "c@x.io", team: "red", handle: "al" },
      });
      expect(res.status).toBe(409);
      expect(res.body.message).toBe(
        'Another member already has this "team" and "handle": together they must be unique.',
      );
      expect(res.body.details.map((d: { path: string }) => d.path)).toEqual(["team", "handle"]);
      const moved = await call(app, "PATCH", `/api/member/${first}`, { body: { email: "bob@example.com" } });
      expect(moved.status).toBe(409);
      expect(moved.body.details).toEqual([{ path: "email", message: "Must be unique." }]);
      expect((await app.api.readMember({ params: { id: first } })).email).toBe("Alice@example.com");
    });

    it("answer 409 through app.api and the client, and for a repeated id", async () => {
      await expect(
        app.api.createMember({ body: { email: "bob@example.com", team: "z", handle: "z" } }),
      ).rejects.toMatchObject({ status: 409, code: "CONFLICT" });
      const client = createClient<typeof app>({
        baseURL: "http://localhost/api",
        fetch: (input, init) => app.handler(new Request(input, init)),
      });
      const { error } = await client.member.create({ id: first, email: "new@x.io", team: "q", handle: "q" });
      expect(error).toMatchObject({
        status: 409,
        code: "CONFLICT",
        message: "A member with this id already exists.",
      });
    });

    it("keep search case-insensitive and filters exact on indexed text", async () => {
      const found = await call(app, "GET", "/api/members?search=ALICE&sortBy=email");
      expect(found.body.items.map((m: { email: string }) => m.email).sort()).toEqual([
        "Alice@example.com",
        "alice@example.com",
      ]);
      const exact = await call(app, "GET", "/api/members?filter[email]=alice@example.com");
      expect(exact.body.items.map((m: { email: string }) => m.email)).toEqual(["alice@example.com"]);
      const padded = await call(app, "GET", "/api/members?filter[email][in]=bob@example.com%20,x");
      expect(padded.body.pagination.total).toBe(0);
      const listed = await call(app, "GET", "/api/members?filter[team]=red&filter[status]=active");
      expect(listed.body.pagination.total).toBe(2);
    });

    it("answer a value too long for an indexed column with 400 where the engine limits it, never 500", async () => {
      const res = await call(app, "POST", "/api/member", {
        body: { email: `${"e".repeat(300)}@x.io`, team: "t", handle: "h" },
      });
      expect([201, 400]).toContain(res.status);
      expectNoLeak(res.text);
    });
  });
});
