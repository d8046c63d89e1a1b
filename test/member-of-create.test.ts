// A create under memberOf lands in a group its caller is a member of (issue 45 §2: "On create, it
// checks the body's path value the same way, in the write's transaction"), whatever the group's
// own read rule: organizations here are a public directory, so a reference check alone would let
// anyone signed in create into any of them. Through HTTP, a batch, an upsert, `app.api`, a hook's
// `ctx.api` acting as its caller, and `app.can`; a refused create stores nothing. A create rule that
// is a memberOf with roles lets those roles create and no one else.

import { createResource, crudkit, type DatabaseOptions, memberOf, references, withId } from "crudkit-api";
import { audit } from "crudkit-api/plugins";
import { beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { appPerDialect, forEachDialect } from "./dialects.ts";
import { as, call, userFromHeader } from "./helpers.ts";

const M = { user: "userId", scope: "orgId" } as const;

const organization = createResource({
  name: "organization",
  schema: withId({ name: z.string().max(100) }),
  access: { create: true, read: true, list: true },
});
const membership = createResource({
  name: "membership",
  schema: withId({
    orgId: references(organization, { onDelete: "cascade" }),
    userId: z.string().max(100),
    role: z.enum(["owner", "admin", "member"]),
  }),
  unique: [["orgId", "userId"]],
  access: { read: memberOf("membership", M), list: memberOf("membership", M) },
});
const project = createResource({
  name: "project",
  schema: withId({ title: z.string().max(100), orgId: references(organization, { onDelete: "cascade" }) }),
  access: { ...memberOf(membership, M) },
});
/** Its group as a copied text, no reference: only the rule stands between a caller and a group. */
const note = createResource({
  name: "note",
  schema: withId({ text: z.string().max(100), orgId: z.string().max(100) }),
  access: { ...memberOf(membership, M) },
});
/** Reaches its group through its project. */
const task = createResource({
  name: "task",
  schema: withId({ title: z.string().max(100), projectId: references(project, { onDelete: "cascade" }) }),
  access: { ...memberOf(membership, { ...M, path: "project.orgId" }) },
});
/** Owners and admins create; every member reads. */
const board = createResource({
  name: "board",
  schema: withId({ title: z.string().max(100), orgId: references(organization, { onDelete: "cascade" }) }),
  access: { ...memberOf(membership, M), create: memberOf(membership, { ...M, roles: ["owner", "admin"] }) },
});
/** A hook that writes a project as its caller (`asCaller`) or as the server. */
const request = createResource({
  name: "request",
  schema: withId({ orgId: z.string().max(100), asCaller: z.boolean() }),
  access: { create: true },
  hooks: {
    async afterCreate(ctx) {
      const body = { title: "from a hook", orgId: ctx.record.orgId };
      await ctx.api.createProject!({ body, asCaller: ctx.record.asCaller });
    },
  },
});

const makeApp = (database: DatabaseOptions) =>
  crudkit({
    database,
    autoMigrate: true,
    resources: [organization, membership, project, note, task, board, request],
    identify: userFromHeader,
    batch: { maxRequests: 5 },
    admin: true,
    // A log everyone signed in may read: what each entry shows is her own rules' business.
    plugins: [audit({ access: { read: ({ user }) => user !== null } })],
    log: () => {},
  });

forEachDialect((dialect) => {
  const app = appPerDialect(dialect, makeApp);
  const server = { overrideAccess: true } as const;
  const ids: Record<string, string> = {};
  const count = async (table: string, where: Record<string, unknown>) =>
    (
      await app.db
        .selectFrom(table)
        .selectAll()
        .where((eb) => eb.and(where))
        .execute()
    ).length;

  beforeAll(async () => {
    for (const name of ["A", "B"])
      ids[name] = (await app.api.createOrganization({ body: { name }, ...server })).id;
    for (const [org, userId, role] of [
      ["A", "alice", "owner"],
      ["A", "bob", "member"],
      ["B", "carol", "owner"],
    ] as const)
      await app.api.createMembership({ body: { orgId: ids[org]!, userId, role }, ...server });
    ids.projectA = (await app.api.createProject({ body: { title: "A's", orgId: ids.A! }, ...server })).id;
  });

  describe("memberOf on create", () => {
    it("a member creates in her group; an outsider gets 403 and nothing is stored, even where the group is public", async () => {
      const bob = await call(app, "POST", "/api/project", {
        ...as("bob"),
        body: { title: "bob's", orgId: ids.A },
      });
      expect(bob.status).toBe(201);
      const carol = await call(app, "POST", "/api/project", {
        ...as("carol"),
        body: { title: "carol's", orgId: ids.A },
      });
      expect(carol.status).toBe(403);
      expect(carol.body).toEqual({
        code: "FORBIDDEN",
        message: 'Access denied: the create rule of "project" refused this request.',
      });
      expect(await count("project", { title: "carol's" })).toBe(0);
      // Her own group, and a group that does not exist (a 400 naming the reference, as before).
      expect(
        (await call(app, "POST", "/api/project", { ...as("carol"), body: { title: "c", orgId: ids.B } }))
          .status,
      ).toBe(201);
      expect(
        (await call(app, "POST", "/api/project", { ...as("carol"), body: { title: "c", orgId: "nope" } }))
          .status,
      ).toBe(400);
    });

    it("a group named by a plain text field, and one reached through a relation", async () => {
      expect(
        (await call(app, "POST", "/api/note", { ...as("carol"), body: { text: "x", orgId: ids.A } })).status,
      ).toBe(403);
      expect(
        (await call(app, "POST", "/api/note", { ...as("bob"), body: { text: "y", orgId: ids.A } })).status,
      ).toBe(201);
      expect(await count("note", { text: "x" })).toBe(0);
      const body = { title: "into A", projectId: ids.projectA };
      // A's project is not hers to read: her reference to it answers as a missing one would.
      expect((await call(app, "POST", "/api/task", { ...as("carol"), body })).status).toBe(400);
      expect(await count("task", { title: "into A" })).toBe(0);
      expect((await call(app, "POST", "/api/task", { ...as("bob"), body })).status).toBe(201);
    });

    it("through an upsert, a batch and app.api: the same refusal, nothing stored", async () => {
      const put = await call(app, "PUT", "/api/project/carol-put", {
        ...as("carol"),
        body: { title: "put", orgId: ids.A },
      });
      expect(put.status).toBe(403);
      // A batch is refused whole, whether its step into A is a POST or a PUT that creates (a
      // nested write, with its savepoint); its step into B is undone with it.
      for (const [step, into] of [
        [{ method: "POST", path: "/project" }, "batched A"],
        [{ method: "PUT", path: "/project/carol-batch-put" }, "put A"],
      ] as const) {
        const requests = [
          { method: "POST", path: "/project", body: { title: `before ${into}`, orgId: ids.B } },
          { ...step, body: { title: into, orgId: ids.A } },
        ];
        const batch = await call(app, "POST", "/api/batch", { ...as("carol"), body: { requests } });
        expect(batch.status, into).toBe(403);
        expect(
          (await count("project", { title: `before ${into}` })) + (await count("project", { title: into })),
        ).toBe(0);
      }
      await expect(
        app.api.createProject({ body: { title: "api", orgId: ids.A! }, ...as("carol") }),
      ).rejects.toMatchObject({ code: "FORBIDDEN" });
      expect((await count("project", { id: "carol-put" })) + (await count("project", { title: "api" }))).toBe(
        0,
      );
    });

    it("a hook acting as its caller is held to her rule; acting as the server it is not", async () => {
      const asCaller = await call(app, "POST", "/api/request", {
        ...as("carol"),
        body: { orgId: ids.A, asCaller: true },
      });
      expect(asCaller.status).toBe(403);
      expect(await count("request", { orgId: ids.A })).toBe(0);
      expect(await count("project", { title: "from a hook" })).toBe(0);
      const asServer = await call(app, "POST", "/api/request", {
        ...as("carol"),
        body: { orgId: ids.A, asCaller: false },
      });
      expect(asServer.status).toBe(201);
      expect(await count("project", { title: "from a hook" })).toBe(1);
    });

    it("create: memberOf with roles lets an owner create, not a plain member nor an outsider", async () => {
      const body = { title: "board", orgId: ids.A };
      expect((await call(app, "POST", "/api/board", { ...as("alice"), body })).status).toBe(201);
      expect((await call(app, "POST", "/api/board", { ...as("bob"), body })).status).toBe(403);
      expect((await call(app, "POST", "/api/board", { ...as("carol"), body })).status).toBe(403);
      expect(await count("board", {})).toBe(1);
    });

    it("an audit entry shows a record's contents only to whom its rule lets read it, through a relation too", async () => {
      const contents = async (user: string, resource: string) => {
        const res = await call(app, "GET", `/api/audit/logs?resource=${resource}&limit=100`, as(user));
        expect(res.status, res.text).toBe(200);
        return res.body.items
          .filter((e: { operation: string }) => e.operation === "create")
          .map((e: { after: { title?: string } | null }) => e.after?.title ?? null);
      };
      // A's records: bob (a member of A) reads them; carol (of B only) sees the entries, emptied.
      expect(await contents("bob", "task")).toContain("into A");
      expect(await contents("carol", "task")).toEqual((await contents("bob", "task")).map(() => null));
      expect(await contents("bob", "project")).toEqual(expect.arrayContaining(["A's", "bob's"]));
      expect(await contents("carol", "project")).not.toContain("A's");
      expect(await contents("carol", "project")).toContain("c");
    });

    it("the admin's new-record form leaves every field writable to a member (it asks one field at a time)", async () => {
      const res = await call(
        app,
        "GET",
        "/api/admin/permissions?resource=project&fields=title,orgId",
        as("bob"),
      );
      expect(res.status, res.text).toBe(200);
      expect(res.body).toMatchObject({ readOnly: {} });
    });

    it("app.can judges the body's group without writing: allowed where the create would be", async () => {
      const body = { title: "t", orgId: ids.A };
      expect((await app.can("create", "board", { user: { id: "alice" }, body })).allowed).toBe(true);
      const bob = await app.can("create", "board", { user: { id: "bob" }, body });
      expect(bob).toMatchObject({
        allowed: false,
        reason: 'Access denied: the create rule of "board" refused this request.',
      });
      expect(
        (await app.can("create", "note", { user: { id: "carol" }, body: { text: "t", orgId: ids.A } }))
          .allowed,
      ).toBe(false);
      expect(
        (await app.can("create", "note", { user: { id: "bob" }, body: { text: "t", orgId: ids.A } })).allowed,
      ).toBe(true);
      // A body that does not name the group (a form asking about one field at a time, as the admin
      // does with { field: null }), or no body: allowed, within `where`, judged on the create.
      for (const body of [undefined, { text: "t" }, { orgId: null }, { text: null }])
        expect(
          await app.can("create", "note", { user: { id: "carol" }, body }),
          JSON.stringify(body),
        ).toMatchObject({
          allowed: true,
          where: expect.any(Object),
        });
      // Through a relation: the project named, as it is now.
      const task = { title: "t", projectId: ids.projectA };
      expect((await app.can("create", "task", { user: { id: "bob" }, body: task })).allowed).toBe(true);
      expect((await app.can("create", "task", { user: { id: "carol" }, body: task })).allowed).toBe(false);
      // Asking stores nothing.
      expect(await count("board", {})).toBe(1);
      expect(await count("note", { text: "t" })).toBe(0);
    });
  });
});

// The database gone under these paths: the create's check, the audit routes' judging of
// snapshots are 503s like any statement, never 500s; app.can in server code rejects with the
// startup's error, which names the database it could not reach.
describe("memberOf paths with the database gone", () => {
  for (const url of ["postgres://postgres@127.0.0.1:1/none", "mysql://u:p@127.0.0.1:1/none"])
    it(`answer 503, never 500 (${url.split(":")[0]})`, async () => {
      const gone = makeApp({ provider: url.startsWith("postgres") ? "postgres" : "mysql", url });
      try {
        for (const [method, path, body] of [
          ["POST", "/api/project", { title: "x", orgId: "A" }],
          ["GET", "/api/tasks", undefined],
          ["GET", "/api/audit/logs", undefined],
          ["GET", "/api/project/p-1/history", undefined],
        ] as const) {
          const res = await call(gone, method, path, { ...as("bob"), ...(body && { body }) });
          expect(res.status, `${method} ${path}`).toBe(503);
          expect(res.text).not.toMatch(/ECONNREFUSED|127\.0\.0\.1/);
        }
        await expect(
          gone.can("create", "note", { user: { id: "bob" }, body: { text: "t", orgId: "A" } }),
        ).rejects.toMatchObject({ code: "DATABASE_UNREACHABLE" }); // server code: the startup's own error, naming it
      } finally {
        await gone.close();
      }
    });
});
