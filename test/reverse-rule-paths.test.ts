// Reverse paths in row rules (issue 45 §1: "reverse paths with 'any' meaning"): a rule on a
// project may name a field of the tasks that reference it (`"tasks.assignee"`), and holds when any
// of them matches; two hops too, through either direction (`"projects.tasks.assignee"` on an
// organization, `"tasks.project.orgId"`…). Asked of the database on every operation, counts
// included; `not` of it means none matches. On the three databases, through HTTP and app.api.

import { createResource, crudkit, type DatabaseOptions, references, withId } from "crudkit-api";
import { beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { appPerDialect, forEachDialect } from "./dialects.ts";
import { as, call, userFromHeader } from "./helpers.ts";

// Reverse paths are not in the list filter's types: a rule names them through a cast.
type AnyWhere = never;
const mine = (user: { id: string } | null, path: string) =>
  user ? ({ [path]: user.id } as AnyWhere) : false;

const organization = createResource({
  name: "organization",
  schema: withId({ name: z.string().max(100) }),
  access: {
    list: ({ user }) => mine(user, "projects.tasks.assignee"),
    read: ({ user }) => mine(user, "projects.tasks.assignee"),
  },
});
const project = createResource({
  name: "project",
  schema: withId({ title: z.string().max(100), orgId: references(organization, { onDelete: "cascade" }) }),
  access: {
    list: ({ user }) => mine(user, "tasks.assignee"),
    read: ({ user }) => mine(user, "tasks.assignee"),
    update: ({ user }) => mine(user, "tasks.assignee"),
    delete: ({ user }) => (user ? ({ not: { "tasks.assignee": { ne: user.id } } } as AnyWhere) : false),
  },
});
const task = createResource({
  name: "task",
  schema: withId({
    title: z.string().max(100),
    // Optional: a task of no project is in no project's set, also under `not`.
    projectId: references(project, { onDelete: "cascade" }).optional(),
    assignee: z.string().max(100),
  }),
  access: { list: true, read: true },
});

/** Boards bob may see: those with no card of anyone else's (`not` of any). */
const board = createResource({
  name: "board",
  schema: withId({ name: z.string().max(100) }),
  access: {
    list: ({ user }) => (user ? ({ not: { "cards.owner": { ne: user.id } } } as AnyWhere) : false),
    read: ({ user }) => (user ? ({ not: { "cards.owner": { ne: user.id } } } as AnyWhere) : false),
  },
});
const card = createResource({
  name: "card",
  // A card on no board holds a null reference: it must not blank out every board's `not in`.
  schema: withId({
    boardId: references(board, { onDelete: "cascade" }).optional(),
    owner: z.string().max(100),
  }),
  access: { list: true },
});

const makeApp = (database: DatabaseOptions) =>
  crudkit({
    database,
    autoMigrate: true,
    resources: [organization, project, task, board, card],
    identify: userFromHeader,
    log: () => {},
  });

forEachDialect((dialect) => {
  const app = appPerDialect(dialect, makeApp);
  const server = { overrideAccess: true } as const;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    for (const org of ["A", "B"]) {
      ids[org] = (await app.api.createOrganization({ body: { name: org }, ...server })).id;
      for (const n of [1, 2]) {
        const p = await app.api.createProject({ body: { title: `${org}${n}`, orgId: ids[org]! }, ...server });
        ids[`${org}${n}`] = p.id;
      }
    }
    // bob works on A1 (twice) and B1; carol on A1 and A2; A2 has no task of bob's.
    for (const [projectKey, assignee] of [
      ["A1", "bob"],
      ["A1", "bob"],
      ["A1", "carol"],
      ["A2", "carol"],
      ["B1", "bob"],
    ] as const)
      await app.api.createTask({ body: { title: "t", projectId: ids[projectKey]!, assignee }, ...server });
    await app.api.createTask({ body: { title: "of no project", assignee: "carol" }, ...server });
  });

  describe("reverse paths in row rules", () => {
    it("lists and counts the records any of whose referencing records match, each once", async () => {
      const titles = async (user: string) => {
        const res = await call(app, "GET", "/api/projects?count=exact&sortBy=title&sortOrder=asc", as(user));
        expect(res.status, res.text).toBe(200);
        expect(res.body.pagination.total).toBe(res.body.items.length);
        return res.body.items.map((p: { title: string }) => p.title);
      };
      expect(await titles("bob")).toEqual(["A1", "B1"]);
      expect(await titles("carol")).toEqual(["A1", "A2"]);
      expect(await titles("dave")).toEqual([]);
      const listed = await app.api.listProjects({ ...as("carol"), query: { where: { title: "A2" } } });
      expect(listed.items.map((p) => p.title)).toEqual(["A2"]);
    });

    it("reads, updates and deletes within it; any other record answers as a missing one", async () => {
      expect((await call(app, "GET", `/api/project/${ids.A1}`, as("bob"))).status).toBe(200);
      const other = await call(app, "GET", `/api/project/${ids.A2}`, as("bob"));
      const missing = await call(app, "GET", "/api/project/nope", as("bob"));
      expect([other.status, missing.status]).toEqual([404, 404]);
      expect(other.body.message.replace(ids.A2!, "nope")).toBe(missing.body.message);
      expect(
        (await call(app, "PATCH", `/api/project/${ids.A2}`, { ...as("bob"), body: { title: "x" } })).status,
      ).toBe(404);
      expect(
        (await call(app, "PATCH", `/api/project/${ids.B1}`, { ...as("bob"), body: { title: "B1*" } })).status,
      ).toBe(200);
      // Delete: where no task is anyone else's (`not` of any): A1 has carol's, B1 only bob's.
      expect((await call(app, "DELETE", `/api/project/${ids.A1}`, as("bob"))).status).toBe(404);

      expect((await call(app, "DELETE", `/api/project/${ids.B1}`, as("bob"))).status).toBe(200);
      expect(await app.can("read", "project", { user: { id: "bob" }, id: ids.A1 })).toMatchObject({
        allowed: true,
      });
      expect(await app.can("read", "project", { user: { id: "bob" }, id: ids.A2 })).toMatchObject({
        allowed: false,
      });
    });

    it("under not, a referencing record with no reference changes nothing, in lists as in reads", async () => {
      const mine = (await app.api.createBoard({ body: { name: "bob's" }, ...server })).id;
      const shared = (await app.api.createBoard({ body: { name: "shared" }, ...server })).id;
      await app.api.createBoard({ body: { name: "empty" }, ...server });
      for (const [boardId, owner] of [
        [mine, "bob"],
        [shared, "bob"],
        [shared, "carol"],
        [undefined, "carol"],
      ] as const)
        await app.api.createCard({ body: { owner, ...(boardId && { boardId }) }, ...server });
      const res = await call(app, "GET", "/api/boards?count=exact&sortBy=name&sortOrder=asc", as("bob"));
      expect(res.body.items.map((b: { name: string }) => b.name)).toEqual(["bob's", "empty"]);
      expect(res.body.pagination.total).toBe(2);
      expect((await call(app, "GET", `/api/board/${mine}`, as("bob"))).status).toBe(200);
      expect((await call(app, "GET", `/api/board/${shared}`, as("bob"))).status).toBe(404);
    });

    it("two reverse hops: an organization with any project with any task of hers", async () => {
      const names = async (user: string) =>
        (await call(app, "GET", "/api/organizations?sortBy=name&sortOrder=asc", as(user))).body.items.map(
          (o: { name: string }) => o.name,
        );
      expect(await names("carol")).toEqual(["A"]);
      // bob's B1 was deleted above, with its task: A only.
      expect(await names("bob")).toEqual(["A"]);
      expect((await call(app, "GET", `/api/organization/${ids.B}`, as("bob"))).status).toBe(404);
    });

    it("a path that is neither a field nor a relation is still the server's mistake, named", async () => {
      const broken = createResource({
        name: "broken",
        schema: withId({ title: z.string() }),
        access: { list: () => ({ "tasks.assignee": "x" }) as AnyWhere },
      });
      const logged: string[] = [];
      const other = crudkit({
        database: { provider: "sqlite", url: ":memory:" },
        autoMigrate: true,
        resources: [broken],
        log: (message, error) => logged.push(`${message} ${(error as Error | undefined)?.message ?? ""}`),
      });
      const res = await call(other, "GET", "/api/brokens");
      expect(res.status).toBe(500);
      expect(logged.join("\n")).toContain('the list rule of "broken" returned an invalid filter');
      await other.close();
    });
  });
});
