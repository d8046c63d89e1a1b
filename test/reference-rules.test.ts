// A reference is a read: a create or update may only point at a record the caller may read. On
// SQLite, PostgreSQL and MariaDB, Alice and Bob each own projects; Alice cannot attach a task to
// Bob's project, and the answer is byte for byte the one for an id that does not exist, over HTTP,
// through the client and through app.api. Server code (`overrideAccess`) and `requireRead: false`
// skip the check; a `restrict` refusal caused by records the deleter cannot read names no id.

import {
  apiKey,
  createResource,
  crudkit,
  type DatabaseOptions,
  fileRef,
  MemoryStorage,
  ownedBy,
  references,
  withId,
} from "crudkit-api";
import { createClient } from "crudkit-api/client";
import { upload } from "crudkit-api/plugins";
import { beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { appPerDialect, forEachDialect } from "./dialects.ts";
import { call, type TestResponse } from "./helpers.ts";

const owner = z.string().max(255).optional();

const project = createResource({
  name: "project",
  schema: withId({ ownerId: owner, name: z.string().max(100) }),
  access: ownedBy("ownerId"),
});

const task = createResource({
  name: "task",
  schema: withId({
    ownerId: owner,
    title: z.string().max(100),
    projectId: references("project", { onDelete: "cascade" }).nullable().optional(),
  }),
  access: ownedBy("ownerId"),
});

/** `restrict` (the default): a project with notes cannot be deleted. */
const note = createResource({
  name: "note",
  schema: withId({ ownerId: owner, text: z.string().max(100), projectId: references("project") }),
  access: ownedBy("ownerId"),
});

/** The opt-out: anyone may be assigned to any project, readable or not. */
const assignment = createResource({
  name: "assignment",
  schema: withId({
    ownerId: owner,
    projectId: references("project", { onDelete: "cascade", requireRead: false }),
  }),
  access: ownedBy("ownerId"),
});

/** A record that claims an uploaded file: the same rule, through the upload plugin's files. */
const doc = createResource({
  name: "doc",
  schema: withId({ ownerId: owner, file: fileRef().nullable().optional() }),
  access: ownedBy("ownerId"),
});

const makeApp = (database: DatabaseOptions) =>
  crudkit({
    database,
    autoMigrate: true,
    resources: [project, task, note, assignment, doc],
    plugins: [
      apiKey({ keys: { "alice-key": { id: "alice" }, "bob-key": { id: "bob" } } }),
      upload({
        storage: new MemoryStorage(),
        access: {
          upload: true,
          read: ({ user }) => (user ? { uploadedBy: user.id } : false),
          download: false,
        },
      }),
    ],
  });

const alice = { "x-api-key": "alice-key" };
const bob = { "x-api-key": "bob-key" };
const MISSING = "0192f5a0-0000-7000-8000-000000000000";

/** What a caller can compare between two answers: status, type and the exact bytes. */
const wire = (res: TestResponse) => ({
  status: res.status,
  type: res.headers.get("content-type"),
  text: res.text,
});

forEachDialect((dialect) => {
  const app = appPerDialect(dialect, makeApp);
  const client = (headers: Record<string, string>) =>
    createClient<ReturnType<typeof makeApp>>({
      baseURL: "http://localhost/api",
      headers,
      fetch: (input, init) => app.handler(new Request(input as string, init)),
    });
  let aliceProject: string;
  let bobProject: string;

  beforeAll(async () => {
    aliceProject = (await call(app, "POST", "/api/project", { headers: alice, body: { name: "A" } })).body.id;
    bobProject = (await call(app, "POST", "/api/project", { headers: bob, body: { name: "B" } })).body.id;
  });

  describe("create and update over HTTP", () => {
    it("Bob's project and a made-up id get the same 400, byte for byte", async () => {
      const theirs = await call(app, "POST", "/api/task", {
        headers: alice,
        body: { title: "t", projectId: bobProject },
      });
      const none = await call(app, "POST", "/api/task", {
        headers: alice,
        body: { title: "t", projectId: MISSING },
      });
      expect(theirs.status, theirs.text).toBe(400);
      expect(theirs.body.code).toBe("VALIDATION_ERROR");
      expect(theirs.body.details).toEqual([{ path: "projectId", message: expect.any(String) }]);
      expect(wire(theirs)).toEqual(wire(none));
      expect(theirs.text).not.toContain(bobProject);
      // Nothing was stored.
      const listed = await call(app, "GET", "/api/tasks", { headers: alice });
      expect(listed.body.items).toEqual([]);
    });

    it("her own project is fine, and an update to Bob's is the same 400 as to a made-up id", async () => {
      const mine = await call(app, "POST", "/api/task", {
        headers: alice,
        body: { title: "mine", projectId: aliceProject },
      });
      expect(mine.status, mine.text).toBe(201);
      const theirs = await call(app, "PATCH", `/api/task/${mine.body.id}`, {
        headers: alice,
        body: { projectId: bobProject },
      });
      const none = await call(app, "PATCH", `/api/task/${mine.body.id}`, {
        headers: alice,
        body: { projectId: MISSING },
      });
      expect(theirs.status, theirs.text).toBe(400);
      expect(wire(theirs)).toEqual(wire(none));
      const read = await call(app, "GET", `/api/task/${mine.body.id}`, { headers: alice });
      expect(read.body.projectId).toBe(aliceProject);
      // Setting it to null names no record, and needs no read.
      const cleared = await call(app, "PATCH", `/api/task/${mine.body.id}`, {
        headers: alice,
        body: { projectId: null },
      });
      expect(cleared.status, cleared.text).toBe(200);
    });

    it("Bob's delete of his project cascades to nothing of Alice's", async () => {
      const spare = (await call(app, "POST", "/api/project", { headers: bob, body: { name: "spare" } })).body
        .id;
      await call(app, "POST", "/api/task", { headers: alice, body: { title: "x", projectId: spare } });
      const before = (await call(app, "GET", "/api/tasks", { headers: alice })).body.items.length;
      expect((await call(app, "DELETE", `/api/project/${spare}`, { headers: bob })).status).toBe(200);
      expect((await call(app, "GET", "/api/tasks", { headers: alice })).body.items.length).toBe(before);
    });
  });

  describe("through the client and app.api", () => {
    it("the client gets the same error for Bob's project as for a made-up id", async () => {
      const tasks = client(alice).task;
      const theirs = await tasks.create({ title: "c", projectId: bobProject });
      const none = await tasks.create({ title: "c", projectId: MISSING });
      expect(theirs.data).toBeNull();
      expect(theirs.error).toMatchObject({ status: 400, code: "VALIDATION_ERROR" });
      expect(JSON.stringify(theirs.error)).toBe(JSON.stringify(none.error));
      const mine = await tasks.create({ title: "c", projectId: aliceProject });
      expect(mine.error).toBeNull();
      const moved = await tasks.update(mine.data!.id, { projectId: bobProject });
      expect(moved.error).toMatchObject({ status: 400, code: "VALIDATION_ERROR" });
    });

    it("app.api applies the rule with the caller's headers, and skips it with overrideAccess", async () => {
      const asAlice = (projectId: string) =>
        app.api
          .createTask({ body: { title: "api", projectId }, headers: alice, asResponse: true })
          .then(async (r) => ({ status: r.status, text: await r.text() }));
      const theirs = await asAlice(bobProject);
      expect(theirs.status).toBe(400);
      expect(theirs).toEqual(await asAlice(MISSING));
      const server = await app.api.createTask({
        body: { title: "server", projectId: bobProject, ownerId: "alice" },
        overrideAccess: true,
      });
      expect(server.projectId).toBe(bobProject);
      // A made-up id is still refused by the database's foreign key.
      await expect(
        app.api.createTask({ body: { title: "server", projectId: MISSING }, overrideAccess: true }),
      ).rejects.toMatchObject({ status: 400, code: "VALIDATION_ERROR" });
    });
  });

  describe("the opt-out and restrict", () => {
    it("requireRead: false lets Alice point at Bob's project; a made-up id is still a 400", async () => {
      const assigned = await call(app, "POST", "/api/assignment", {
        headers: alice,
        body: { projectId: bobProject },
      });
      expect(assigned.status, assigned.text).toBe(201);
      const none = await call(app, "POST", "/api/assignment", {
        headers: alice,
        body: { projectId: MISSING },
      });
      expect(none.status).toBe(400);
    });

    it("a restrict refused by records Bob cannot read is a 409 naming no id, count or content", async () => {
      const kept = (await call(app, "POST", "/api/project", { headers: bob, body: { name: "kept" } })).body
        .id;
      const hers = await app.api.createNote({
        body: { text: "alice-private-text", projectId: kept, ownerId: "alice" },
        overrideAccess: true,
      });
      const refused = await call(app, "DELETE", `/api/project/${kept}`, { headers: bob });
      expect(refused.status).toBe(409);
      expect(refused.body.code).toBe("CONFLICT");
      expect(refused.body.message).toMatch(/still referenced/);
      expect(refused.text).not.toContain(hers.id);
      expect(refused.text).not.toContain("alice-private-text");
      expect(refused.text).not.toMatch(/\b[0-9]+ (records?|notes?)\b/);
      expect((await call(app, "GET", `/api/project/${kept}`, { headers: bob })).status).toBe(200);
    });
  });

  describe("a record that claims an uploaded file", () => {
    it("Bob's file and a made-up file id get the same 400", async () => {
      const sent = await call(app, "POST", "/api/upload/file", {
        headers: bob,
        body: { file: Buffer.from("hello").toString("base64"), filename: "b.txt", mimeType: "text/plain" },
      });
      expect(sent.status, sent.text).toBe(201);
      const theirs = await call(app, "POST", "/api/doc", { headers: alice, body: { file: sent.body.id } });
      const none = await call(app, "POST", "/api/doc", { headers: alice, body: { file: MISSING } });
      expect(theirs.status, theirs.text).toBe(400);
      expect(wire(theirs)).toEqual(wire(none));
      const mine = await call(app, "POST", "/api/doc", { headers: bob, body: { file: sent.body.id } });
      expect(mine.status, mine.text).toBe(201);
    });
  });
});
