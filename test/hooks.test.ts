import type { DatabaseOptions } from "crudkit-api";
import { APIError, type CrudkitPlugin, createResource, crudkit, withId } from "crudkit-api";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { appPerDialect, forEachDialect } from "./dialects.ts";
import { call } from "./helpers.ts";

const order: string[] = [];
const logged: string[] = [];
let failAfterCreate = false;
let failAfterDelete = false;

const task = createResource({
  name: "task",
  schema: withId({ title: z.string(), done: z.boolean().default(false) }),
  access: {
    create: () => {
      order.push("access");
      return true;
    },
    read: true,
    update: true,
    delete: true,
    list: true,
  },
  hooks: {
    beforeCreate: ({ data }) => {
      order.push("resource.beforeCreate");
      return { ...data, title: data.title.trim() };
    },
    afterCreate: async ({ record, db }) => {
      order.push("resource.afterCreate");
      // Written on the create's transaction: it must commit or roll back with the record.
      await db
        .insertInto("task_event")
        .values({ id: `created:${record.id}`, kind: "created" })
        .execute();
      if (failAfterCreate) throw new APIError("CONFLICT", "refused by a hook");
    },
    afterCreateCommit: () => {
      order.push("resource.afterCreateCommit");
      throw new Error("side effect failed");
    },
    beforeUpdate: ({ data }) => (data.title ? { ...data, title: data.title.toUpperCase() } : undefined),
    afterUpdate: async ({ previous, record, db }) => {
      await db
        .insertInto("task_event")
        .values({ id: `updated:${record.id}:${Date.now()}`, kind: `${previous.title}->${record.title}` })
        .execute();
    },
    afterDelete: ({ previous }) => {
      if (failAfterDelete) throw new Error(`cannot delete ${previous.title}`);
    },
    afterRead: ({ record }) => ({ ...record, title: `[${record.title}]` }),
    afterList: ({ result }) => ({ ...result, items: result.items.filter((t) => !t.done) }),
  },
});

const events: CrudkitPlugin = {
  id: "events",
  tables: [
    {
      name: "task_event",
      columns: { id: { type: "text", primaryKey: true }, kind: { type: "text", notNull: true } },
    },
  ],
  hooks: {
    beforeCreate: ({ data }) => {
      order.push("plugin.beforeCreate");
      return { ...data, title: `${data.title}!` };
    },
    afterCreate: () => void order.push("plugin.afterCreate"),
    afterCreateCommit: () => void order.push("plugin.afterCreateCommit"),
  },
  endpoints: (app) => [
    {
      method: "GET",
      path: "/events",
      operationName: "listEvents",
      handler: async () => app.db.selectFrom("task_event").selectAll().orderBy("id").execute(),
    },
  ],
};

const makeApp = (database: DatabaseOptions) =>
  crudkit({
    database,
    autoMigrate: true,
    resources: [task],
    plugins: [events],
    log: (message) => logged.push(message),
  });

forEachDialect((dialect) => {
  const app = appPerDialect(dialect, makeApp);

  const eventCount = async () => (await call(app, "GET", "/api/events")).body.length as number;

  describe("hooks", () => {
    it("run in order: access → validate → before (resource, then plugins) → write + after → after-commit", async () => {
      order.length = 0;
      const res = await call(app, "POST", "/api/task", { body: { title: "  write tests " } });
      expect(res.status).toBe(201);
      expect(res.body.title).toBe("write tests!");
      expect(order).toEqual([
        "access",
        "resource.beforeCreate",
        "plugin.beforeCreate",
        "resource.afterCreate",
        "plugin.afterCreate",
        "resource.afterCreateCommit",
        "plugin.afterCreateCommit",
      ]);
      // The after-commit failure is logged, the caller still gets the record.
      expect(logged).toContain("crudkit: an after-commit hook failed");
    });

    it("do not run before hooks when validation fails", async () => {
      order.length = 0;
      expect((await call(app, "POST", "/api/task", { body: { title: 5 } })).status).toBe(400);
      expect(order).toEqual(["access"]);
    });

    it("roll the write back when an after hook throws, with what it wrote", async () => {
      const before = await eventCount();
      const listed = (await call(app, "GET", "/api/tasks")).body.pagination.total;
      failAfterCreate = true;
      const res = await call(app, "POST", "/api/task", { body: { id: "rolled-back", title: "x" } });
      failAfterCreate = false;
      expect(res.status).toBe(409);
      expect(res.body.message).toBe("refused by a hook");
      expect((await call(app, "GET", "/api/task/rolled-back")).status).toBe(404);
      expect(await eventCount()).toBe(before);
      expect((await call(app, "GET", "/api/tasks")).body.pagination.total).toBe(listed);
    });

    it("give update hooks the previous and the new record", async () => {
      const created = await call(app, "POST", "/api/task", { body: { title: "old" } });
      const res = await call(app, "PATCH", `/api/task/${created.body.id}`, { body: { title: "new" } });
      expect(res.body.title).toBe("NEW");
      const kinds = (await call(app, "GET", "/api/events")).body.map((e: { kind: string }) => e.kind);
      expect(kinds).toContain("old!->NEW");
    });

    it("keep the record when an afterDelete hook throws", async () => {
      const created = await call(app, "POST", "/api/task", { body: { title: "keep" } });
      failAfterDelete = true;
      const res = await call(app, "DELETE", `/api/task/${created.body.id}`);
      failAfterDelete = false;
      expect(res.status).toBe(500);
      expect((await call(app, "GET", `/api/task/${created.body.id}`)).status).toBe(200);
    });

    it("let afterRead and afterList transform results", async () => {
      const created = await call(app, "POST", "/api/task", { body: { title: "read me" } });
      expect((await call(app, "GET", `/api/task/${created.body.id}`)).body.title).toBe("[read me!]");
      await call(app, "PATCH", `/api/task/${created.body.id}`, { body: { done: true } });
      const ids = (await call(app, "GET", "/api/tasks?limit=100")).body.items.map(
        (t: { id: string }) => t.id,
      );
      expect(ids).not.toContain(created.body.id);
    });
  });
  it("plugins add tables through the same migration path and endpoints under the base path", async () => {
    const res = await call(app, "GET", "/api/events");
    expect(res.status).toBe(200);
    expect(Array.isArray(res.body)).toBe(true);
  });
});

describe("plugins", () => {
  it("hear of every committed write through afterWriteCommit, and of no failed one", async () => {
    const heard: string[] = [];
    const listener: CrudkitPlugin = {
      id: "listener",
      hooks: {
        afterWriteCommit: ({ resource, operation, user }) =>
          void heard.push(`${resource}:${operation}:${user?.id ?? "-"}`),
      },
    };
    const plain = createResource({
      name: "plain",
      schema: withId({ title: z.string() }),
      access: { create: true, update: true, delete: true },
    });
    const app = crudkit({
      database: { provider: "sqlite", url: ":memory:" },
      autoMigrate: true,
      resources: [plain],
      plugins: [listener],
    });
    try {
      const { id } = (await call(app, "POST", "/api/plain", { body: { title: "a" } })).body;
      await call(app, "PATCH", `/api/plain/${id}`, { body: { title: "b" } });
      expect((await call(app, "PATCH", "/api/plain/missing", { body: { title: "c" } })).status).toBe(404);
      expect((await call(app, "POST", "/api/plain", { body: { title: 5 } })).status).toBe(400);
      await app.api.deletePlain({ params: { id } });
      expect(heard).toEqual(["plain:create:-", "plain:update:-", "plain:delete:-"]);
    } finally {
      await app.close();
    }
  });

  it("answer 503 when startup failed, logging the cause once, and reject app.ready with it", async () => {
    const causes: unknown[] = [];
    const broken: CrudkitPlugin = {
      id: "broken",
      init: () => {
        throw new Error("cannot reach the identity provider");
      },
    };
    const failing = crudkit({
      database: { provider: "sqlite", url: ":memory:" },
      autoMigrate: true,
      resources: [task],
      plugins: [broken],
      log: (_message, error) => causes.push(error),
    });
    await expect(failing.ready).rejects.toThrow("cannot reach the identity provider");
    for (let i = 0; i < 2; i++) {
      const res = await call(failing, "GET", "/api/tasks");
      expect(res.status).toBe(503);
      expect(res.body).toEqual({
        code: "SERVICE_UNAVAILABLE",
        message: "The service could not start; try again later.",
        requestId: expect.any(String),
      });
    }
    await expect(failing.api.listTasks()).rejects.toMatchObject({ status: 503 });
    expect(causes).toHaveLength(1);
  });

  it("prefer a static path over a parameter at the same place", async () => {
    const stats: CrudkitPlugin = {
      id: "task-stats",
      endpoints: [{ method: "GET", path: "/task/stats", handler: async () => ({ stats: true }) }],
    };
    const both = crudkit({
      database: { provider: "sqlite", url: ":memory:" },
      autoMigrate: true,
      resources: [task],
      plugins: [stats],
    });
    expect((await call(both, "GET", "/api/task/stats")).body).toEqual({ stats: true });
    expect((await call(both, "GET", "/api/task/other")).status).toBe(404);
    expect((await call(both, "PATCH", "/api/task/stats", { body: { title: "x" } })).status).toBe(404);
  });

  it("fail at startup on a route conflict or a duplicate name", () => {
    const dup: CrudkitPlugin = {
      id: "dup",
      endpoints: [{ method: "GET", path: "/task/:id", handler: async () => null }],
    };
    expect(() =>
      crudkit({ database: { provider: "sqlite", url: ":memory:" }, resources: [task], plugins: [dup] }),
    ).toThrow("Two endpoints answer GET /api/task/:id.");
    expect(() =>
      crudkit({ database: { provider: "sqlite", url: ":memory:" }, resources: [task, task] }),
    ).toThrow(/Two resources/);
  });
});
