// Record-aware field rules (issue 45, item 3), the attacks a review found, each on the three
// databases: a negated filter where the rule is unknown (a null column), a record moved to rows
// where the field is readable, a write from a hook that fails but whose hook goes on, a caller's
// request headers carried into a hook's call, and app.can on a field writable on some rows only.

import { createResource, crudkit, type DatabaseOptions, withId } from "crudkit-api";
import { beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { appPerDialect, forEachDialect } from "./dialects.ts";
import { as, call, userFromHeader } from "./helpers.ts";

// `notes` is read and written by the task's assignee only; unassigned tasks (a null assignee)
// make the rule unknown in SQL, not false.
const mine = ({ user }: { user: { id: string } | null }) => (user ? { assignee: user.id } : false);
const task = createResource({
  name: "task",
  schema: withId({
    title: z.string().max(100),
    assignee: z.string().max(100).nullable().optional(),
    notes: z.string().max(100).optional(),
  }),
  access: {
    create: true,
    read: true,
    list: true,
    update: true,
    fields: { notes: { read: mine, write: mine } },
  },
});
const log = createResource({
  name: "log",
  schema: withId({ text: z.string().max(100) }),
  access: { create: true, list: true, read: true, update: true },
  hooks: {
    // A hook that writes as the caller and swallows a refusal: what was refused must not stay.
    async afterCreate(ctx) {
      if (ctx.record.text !== "sneak") return;
      try {
        await ctx.api.createTask!({
          body: { title: "sneaky", assignee: "alice", notes: "forged" },
          asCaller: true,
        });
      } catch {}
    },
    // A hook writing as the caller during a PATCH sent with If-Match: the outer version is not its own.
    async afterUpdate(ctx) {
      await ctx.api.updateTask!({
        params: { id: "fixed-task" },
        body: { title: `after ${ctx.record.text}` },
        asCaller: true,
      });
    },
  },
});

const makeApp = (database: DatabaseOptions) =>
  crudkit({
    database,
    autoMigrate: true,
    resources: [task, log],
    identify: userFromHeader,
  });

forEachDialect((dialect) => {
  const app = appPerDialect(dialect, makeApp);
  const ids: Record<string, string> = {};
  beforeAll(async () => {
    const server = { overrideAccess: true } as const;
    for (const [title, assignee, notes] of [
      ["open 1", null, "secret"],
      ["open 2", null, "other"],
      ["alice's", "alice", "alice only"],
      ["bob's", "bob", "bob only"],
    ] as const)
      ids[title] = (await app.api.createTask({ body: { title, assignee, notes }, ...server })).id;
    await app.api.createTask({ body: { id: "fixed-task", title: "fixed" }, ...server });
  });

  const titles = (res: { body: { items: { title: string }[] } }) => res.body.items.map((t) => t.title).sort();

  it("a negated filter tells nothing where the rule is unknown (a null assignee)", async () => {
    for (const filter of [
      "filter[notes][eq]=secret",
      "filter[not][notes][eq]=secret",
      "filter[not][notes][startsWith]=sec",
    ]) {
      const res = await call(app, "GET", `/api/tasks?${filter}&count=exact`, as("bob"));
      expect(res.status, filter).toBe(200);
      const listed = titles(res);
      // Whatever the unassigned tasks' notes say, both are in or both are out.
      expect(listed.includes("open 1"), filter).toBe(listed.includes("open 2"));
      expect(res.text, filter).not.toContain("secret");
    }
  });

  it("a record moved to where the field is readable does not show what it held before", async () => {
    const moved = await call(app, "PATCH", `/api/task/${ids["open 1"]}`, {
      ...as("bob"),
      body: { assignee: "bob" },
    });
    expect(moved.status, moved.text).toBe(200);
    expect("notes" in moved.body).toBe(false);
    // And a value for it may not be written on the way in either.
    const written = await call(app, "PATCH", `/api/task/${ids["open 2"]}`, {
      ...as("bob"),
      body: { assignee: "bob", notes: "mine now" },
    });
    expect(written.status).toBe(403);
    const stored = await app.api.readTask({ params: { id: ids["open 2"]! }, overrideAccess: true });
    expect(stored.notes).toBe("other");
    expect(stored.assignee ?? null).toBeNull();
  });

  it("a hook's write refused after its statement ran leaves nothing, though the hook went on", async () => {
    const res = await call(app, "POST", "/api/log", { ...as("bob"), body: { text: "sneak" } });
    expect(res.status, res.text).toBe(201);
    const all = await app.api.listTasks({ overrideAccess: true, query: { limit: 100 } });
    expect(all.items.map((t) => t.title)).not.toContain("sneaky");
  });

  it("a hook acting as the caller does not carry the request's If-Match", async () => {
    const made = await app.api.createLog({ body: { text: "v1" } });
    const first = await call(app, "GET", `/api/log/${made.id}`, as("bob"));
    const res = await call(app, "PATCH", `/api/log/${made.id}`, {
      headers: { "x-user": "bob", "if-match": first.headers.get("etag")! },
      body: { text: "v2" },
    });
    expect(res.status, res.text).toBe(200);
    const fixed = await app.api.readTask({ params: { id: "fixed-task" }, overrideAccess: true });
    expect(fixed.title).toBe("after v2");
  });

  describe("app.can", () => {
    it("answers a write of a field writable on some records only, per record", async () => {
      const body = { notes: "x" };
      const on = (id: string) => app.can("update", "task", { user: { id: "bob" }, id, body });
      expect((await on(ids["bob's"]!)).allowed).toBe(true);
      const refused = await on(ids["alice's"]!);
      expect(refused.allowed).toBe(false);
      expect(refused.reason).toContain('the field "notes"');
      const general = await app.can("update", "task", { user: { id: "bob" }, body });
      expect(general.fieldsByRecord).toEqual(["notes"]);
    });
  });
});
