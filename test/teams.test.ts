// Issue 45: "members see their organization's records", with no copied column, no tenant header
// and no lookup per request. Organizations, memberships with roles, projects (one hop from the
// organization), tasks (two hops: task → project → organization) and comments (three tables away,
// through a rule path of two hops on the task). Alice owns A, bob is a member of A, carol owns B,
// dave belongs to nothing. Checked over HTTP and through app.api and app.can on the three databases.

import { createResource, crudkit, type DatabaseOptions, memberOf, references, withId } from "crudkit-api";
import { createClient } from "crudkit-api/client";
import { audit } from "crudkit-api/plugins";
import { sql } from "kysely";
import { beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { readRelations } from "../src/resource/relations.ts";
import { resourceTable } from "../src/resource/resource-table.ts";
import { ruleIndexes } from "../src/resource/rule-indexes.ts";
import { appPerDialect, forEachDialect } from "./dialects.ts";
import { as, call, userFromHeader } from "./helpers.ts";

const organization = createResource({
  name: "organization",
  schema: withId({ name: z.string().max(100) }),
  access: {
    ...memberOf("membership", { user: "userId", scope: "orgId", path: "id" }),
    delete: memberOf("membership", { user: "userId", scope: "orgId", path: "id", roles: ["owner"] }),
  },
  hooks: {
    // Its creator is its first owner: one line, through crudkit, in the create's transaction.
    afterCreate: (ctx) =>
      ctx.api.createMembership!({ body: { orgId: ctx.record.id, userId: ctx.user!.id, role: "owner" } }),
  },
});
const membership = createResource({
  name: "membership",
  schema: withId({
    orgId: references(organization, { onDelete: "cascade" }),
    userId: z.string().max(100),
    role: z.enum(["owner", "admin", "member"]),
  }),
  unique: [["orgId", "userId"]],
  // Members see who else is in their organizations.
  access: { read: memberOf("membership", { user: "userId", scope: "orgId" }) },
});
const inOrg = memberOf(membership, { user: "userId", scope: "orgId" });
const project = createResource({
  name: "project",
  schema: withId({ title: z.string().max(100), orgId: references(organization, { onDelete: "cascade" }) }),
  access: {
    ...inOrg,
    delete: memberOf(membership, { user: "userId", scope: "orgId", roles: ["owner", "admin"] }),
  },
});
const inTaskOrg = memberOf(membership, { user: "userId", scope: "orgId", path: "project.orgId" });
// Owners and admins of the task's own organization, decided per record, in SQL.
const leadsTaskOrg = memberOf(membership, {
  user: "userId",
  scope: "orgId",
  path: "project.orgId",
  roles: ["owner", "admin"],
});
const task = createResource({
  name: "task",
  schema: withId({
    title: z.string().max(100),
    projectId: references(project, { onDelete: "cascade" }),
    assignee: z.string().max(100),
    internalNotes: z.string().max(500).optional(),
  }),
  searchable: ["title", "internalNotes"],
  access: {
    fields: {
      internalNotes: { read: leadsTaskOrg, write: leadsTaskOrg },
      // A task stays in its organization: moved, it would take its notes to other readers.
      projectId: { write: ({ operation }) => operation === "create" },
    },
    ...inTaskOrg,
    // A member changes only what is assigned to her.
    update: (ctx) => {
      const member = inTaskOrg(ctx);
      return member && { ...member, assignee: ctx.user!.id };
    },
  },
});
const comment = createResource({
  name: "comment",
  schema: withId({ text: z.string().max(500), taskId: references(task, { onDelete: "cascade" }) }),
  access: { ...memberOf(membership, { user: "userId", scope: "orgId", path: "task.project.orgId" }) },
});
// A rule of server code that has nobody to name: an empty set, no rows (not an error).
const note = createResource({
  name: "note",
  schema: withId({
    text: z.string().max(100),
    kind: z.enum(["plain", "rich"]).optional(),
    rank: z.number().optional(),
  }),
  access: { create: true, list: () => ({ id: { in: [] } }), read: () => ({ id: { nin: [] } }) },
});
// A rule that returns a filter its resource cannot answer: the server's mistake, a 500 naming it.
const broken = createResource({
  name: "broken",
  schema: withId({ text: z.string().max(100) }),
  access: { list: () => ({ "nowhere.text": "x" }) as never },
});

// A field rule that answers a filter its resource cannot answer: also the server's mistake.
const brokenField = createResource({
  name: "brokenField",
  schema: withId({ text: z.string().max(100) }),
  access: { list: true, fields: { text: { read: () => ({ "nowhere.text": "x" }) } } },
});

const logged: string[] = [];
const makeApp = (database: DatabaseOptions) =>
  crudkit({
    database,
    autoMigrate: true,
    resources: [organization, membership, project, task, comment, note, broken, brokenField],
    realtime: true,
    plugins: [
      // Each entry knows its organization; an owner reads her organization's trail, nobody else's.
      audit({
        scope: {
          organization: "id",
          membership: "orgId",
          project: "orgId",
          task: "project.orgId",
          comment: "task.project.orgId",
        },
        access: {
          read: memberOf(membership, { user: "userId", scope: "orgId", path: "scope", roles: ["owner"] }),
        },
      }),
    ],
    log: (message, error) => logged.push(`${message} ${String((error as Error | undefined)?.message ?? "")}`),
    identify: userFromHeader,
  });

forEachDialect((dialect) => {
  const app = appPerDialect(dialect, makeApp);
  const ids = {} as Record<string, string>;

  beforeAll(async () => {
    const server = { overrideAccess: true } as const;
    // Alice creates A and carol B over HTTP; each becomes its owner in the create's hook.
    for (const [name, owner] of [
      ["A", "alice"],
      ["B", "carol"],
    ] as const) {
      const org = await call(app, "POST", "/api/organization", { ...as(owner), body: { name } });
      expect(org.status, org.text).toBe(201);
      ids[name] = org.body.id;
    }
    await app.api.createMembership({ body: { orgId: ids.A!, userId: "bob", role: "member" }, ...server });
    for (const org of ["A", "B"]) {
      const p = await app.api.createProject({
        body: { title: `${org} roadmap`, orgId: ids[org]! },
        ...server,
      });
      ids[`${org}:project`] = p.id;
      for (const assignee of ["alice", "bob", "carol"]) {
        const t = await app.api.createTask({
          body: {
            title: `${org} ${assignee}`,
            projectId: p.id,
            assignee,
            internalNotes: `secret ${org} ${assignee}`,
          },
          ...server,
        });
        ids[`${org}:task:${assignee}`] = t.id;
        await app.api.createComment({ body: { text: `on ${org} ${assignee}`, taskId: t.id }, ...server });
      }
    }
  });

  describe("lists and reads see the caller's organizations, however far the record is from them", () => {
    it("carol sees nothing of A: lists, counts, reads by id, two hops away too", async () => {
      for (const [path, count] of [
        ["/api/organizations", 1],
        ["/api/projects", 1],
        ["/api/tasks", 3],
        ["/api/comments", 3],
      ] as const) {
        const res = await call(app, "GET", `${path}?count=exact`, as("carol"));
        expect(res.status, path).toBe(200);
        expect(res.body.pagination.total, path).toBe(count);
        expect(JSON.stringify(res.body.items), path).not.toContain('"A');
      }
      for (const path of [
        `/api/organization/${ids.A}`,
        `/api/project/${ids["A:project"]}`,
        `/api/task/${ids["A:task:bob"]}`,
      ]) {
        const res = await call(app, "GET", path, as("carol"));
        expect(res.status, path).toBe(404);
        expect(res.body.code).toBe("NOT_FOUND");
      }
      // The same through app.api and the rules asked without a call.
      const tasks = await app.api.listTasks({ headers: { "x-user": "carol" } });
      expect(tasks.items.map((t) => t.title).sort()).toEqual(["B alice", "B bob", "B carol"]);
      expect((await app.can("read", "task", { user: { id: "carol" }, id: ids["A:task:bob"] })).allowed).toBe(
        false,
      );
      expect((await app.can("read", "task", { user: { id: "bob" }, id: ids["A:task:bob"] })).allowed).toBe(
        true,
      );
    });

    it("bob sees A's tasks and comments, with expansions and relation filters", async () => {
      const tasks = await call(app, "GET", "/api/tasks?expand=project&sortBy=title&sortOrder=asc", as("bob"));
      expect(tasks.status).toBe(200);
      expect(tasks.body.items.map((t: { title: string }) => t.title)).toEqual([
        "A alice",
        "A bob",
        "A carol",
      ]);
      expect(tasks.body.items[0].project.title).toBe("A roadmap");
      const filtered = await call(app, "GET", "/api/comments?filter[task.assignee]=bob", as("bob"));
      expect(filtered.body.items.map((c: { text: string }) => c.text)).toEqual(["on A bob"]);
      const reverse = await call(app, "GET", `/api/project/${ids["A:project"]}?expand=tasks`, as("bob"));
      expect(reverse.status, reverse.text).toBe(200);
    });

    it("pages through a rule path by number and by cursor, both ways, each row once and in order", async () => {
      // PostgreSQL picks such a page's ids first, then reads their rows (lateRowLookup): the same
      // rows, order, cursors and per-record fields as anywhere else.
      const titles = ["A carol", "A bob", "A alice"];
      const byPage = [];
      for (const page of [1, 2, 3]) {
        const res = await call(
          app,
          "GET",
          `/api/tasks?sortBy=title&sortOrder=desc&limit=1&page=${page}`,
          as("alice"),
        );
        expect(res.status, res.text).toBe(200);
        expect(res.body.pagination.total).toBe(3);
        byPage.push(...res.body.items);
      }
      expect(byPage.map((t: { title: string }) => t.title)).toEqual(titles);
      expect(byPage.map((t: { internalNotes?: string }) => t.internalNotes)).toEqual(
        titles.map((t) => `secret ${t}`),
      );
      const forwards = [];
      let res = await call(
        app,
        "GET",
        "/api/tasks?sortBy=title&sortOrder=desc&limit=1&count=none",
        as("bob"),
      );
      for (;;) {
        expect(res.status, res.text).toBe(200);
        forwards.push(...res.body.items);
        const next = res.body.pagination.nextCursor;
        if (!next) break;
        res = await call(
          app,
          "GET",
          `/api/tasks?sortBy=title&sortOrder=desc&limit=1&cursor=${next}`,
          as("bob"),
        );
      }
      expect(forwards.map((t: { title: string }) => t.title)).toEqual(titles);
      expect(forwards.some((t) => "internalNotes" in t)).toBe(false);
      const back = await call(
        app,
        "GET",
        `/api/tasks?sortBy=title&sortOrder=desc&limit=2&cursor=${res.body.pagination.prevCursor}`,
        as("bob"),
      );
      expect(back.body.items.map((t: { title: string }) => t.title)).toEqual(titles.slice(0, 2));
    });

    it("a user with no memberships gets empty lists, not an error", async () => {
      for (const path of ["/api/organizations", "/api/projects", "/api/tasks", "/api/comments"]) {
        const res = await call(app, "GET", path, as("dave"));
        expect(res.status, path).toBe(200);
        expect(res.body.items, path).toEqual([]);
      }
      expect((await call(app, "GET", "/api/tasks", {})).status).toBe(403);
    });
  });

  describe("writes", () => {
    it("bob cannot delete A's projects (owners and admins can), and it is still there", async () => {
      const refused = await call(app, "DELETE", `/api/project/${ids["A:project"]}`, as("bob"));
      expect(refused.status).toBe(404);
      expect((await call(app, "GET", `/api/project/${ids["A:project"]}`, as("bob"))).status).toBe(200);
      const other = await call(app, "DELETE", `/api/project/${ids["A:project"]}`, as("carol"));
      expect(other.status).toBe(404);
    });

    it("bob updates a task assigned to him, not another one", async () => {
      const own = await call(app, "PATCH", `/api/task/${ids["A:task:bob"]}`, {
        ...as("bob"),
        body: { title: "A bob!" },
      });
      expect(own.status, own.text).toBe(200);
      const others = await call(app, "PATCH", `/api/task/${ids["A:task:alice"]}`, {
        ...as("bob"),
        body: { title: "mine now" },
      });
      expect(others.status).toBe(404);
      const carol = await call(app, "PATCH", `/api/task/${ids["A:task:carol"]}`, {
        ...as("carol"),
        body: { title: "x" },
      });
      expect(carol.status).toBe(404);
    });

    it("creating into an organization she is not a member of is refused by the reference's read rule", async () => {
      const intoA = await call(app, "POST", "/api/task", {
        ...as("carol"),
        body: { title: "sneaky", projectId: ids["A:project"], assignee: "carol" },
      });
      expect(intoA.status).toBe(400);
      expect(intoA.text).not.toContain("A roadmap");
      const intoB = await call(app, "POST", "/api/task", {
        ...as("carol"),
        body: { title: "fine", projectId: ids["B:project"], assignee: "carol" },
      });
      expect(intoB.status, intoB.text).toBe(201);
      const project = await call(app, "POST", "/api/project", {
        ...as("carol"),
        body: { title: "x", orgId: ids.A },
      });
      expect(project.status).toBe(400);
    });
  });

  describe("internalNotes: owners and admins of the task's organization, per record", () => {
    const notesOf = (items: Record<string, unknown>[]) =>
      items.map((t) => ("internalNotes" in t ? t.internalNotes : "-"));

    // Through PgBouncer nothing is prepared by name (pooler mode): only on a direct connection.
    if (dialect.name === "postgres" && !dialect.label)
      it("PostgreSQL keeps one plan for a member's first pages: the roles and the page size are in the statement", async () => {
        // Prepared statements are per connection, and the pool hands the reads (and this query)
        // whichever connection is free: read on until the connection asked has planned it once
        // for every member (a generic plan), at most 60 pages. As in service, the tables have
        // statistics.
        await sql`analyze`.execute(app.db);
        let page: { statement: string; generic_plans: string } | undefined;
        for (let i = 0; i < 60 && !(Number(page?.generic_plans) > 0); i++) {
          const res = await call(app, "GET", "/api/tasks?limit=2", as(i % 2 ? "alice" : "bob"));
          expect(res.status, res.text).toBe(200);
          const { rows } = await sql<{ statement: string; generic_plans: string }>`select statement,
              generic_plans from pg_prepared_statements where statement like '%internalNotes%limit 2%'
              order by generic_plans desc`.execute(app.db);
          page = rows[0] ?? page;
        }
        expect(page, "the page's statement, prepared by name").toBeDefined();
        expect(page!.statement).toContain("in ('owner', 'admin')");
        expect(page!.statement).not.toMatch(/offset/i);
        expect(Number(page!.generic_plans)).toBeGreaterThan(0);
      });

    it("alice reads A's notes; bob, a member, never finds the field: lists, reads, expansions, app.api", async () => {
      const alice = await call(app, "GET", "/api/tasks?sortBy=title&sortOrder=asc", as("alice"));
      expect(notesOf(alice.body.items)).toEqual(["secret A alice", "secret A bob", "secret A carol"]);
      const carol = await call(
        app,
        "GET",
        "/api/tasks?sortBy=title&sortOrder=asc&filter[title][startsWith]=B ",
        as("carol"),
      );
      expect(notesOf(carol.body.items)).toEqual(["secret B alice", "secret B bob", "secret B carol"]);
      for (const path of [
        "/api/tasks",
        `/api/task/${ids["A:task:bob"]}`,
        "/api/comments?expand=task",
        `/api/project/${ids["A:project"]}?expand=tasks`,
      ]) {
        const res = await call(app, "GET", path, as("bob"));
        expect(res.status, path).toBe(200);
        // Absent, not null: the key is not there.
        expect(res.text, path).not.toContain("internalNotes");
        expect(res.text, path).not.toContain("secret");
      }
      // The typed client (over the app's handler) gets the same records.
      const client = (user: string) =>
        createClient<typeof app>({
          baseURL: "http://local/api",
          headers: { "x-user": user },
          fetch: (url, init) => app.handler(new Request(url, init)),
        });
      const bobs = await client("bob").task.list({
        expand: ["project"],
        where: { "project.title": "A roadmap" },
      });
      expect(bobs.error).toBeNull();
      expect(bobs.data!.items.length).toBe(3);
      expect(bobs.data!.items.some((t) => "internalNotes" in t)).toBe(false);
      const alices = await client("alice").task.list({ where: { title: { startsWith: "A " } } });
      expect(alices.data!.items.every((t) => t.internalNotes?.startsWith("secret A"))).toBe(true);
      const listed = await app.api.listTasks({ headers: { "x-user": "bob" } });
      expect(listed.items.some((t) => "internalNotes" in t)).toBe(false);
      const read = await app.api.readTask({
        params: { id: ids["A:task:alice"]! },
        headers: { "x-user": "alice" },
      });
      expect(read.internalNotes).toBe("secret A alice");
    });

    it("no oracle: bob's filters on the notes match nothing, and neither he nor alice may sort or search on them", async () => {
      for (const filter of [
        "filter[internalNotes][startsWith]=secret",
        "filter[internalNotes]=secret%20A%20bob",
      ]) {
        const bob = await call(app, "GET", `/api/tasks?${filter}&count=exact`, as("bob"));
        expect(bob.status, filter).toBe(200);
        expect(bob.body.items, filter).toEqual([]);
        expect(bob.body.pagination.total, filter).toBe(0);
        // Negated, the filter holds on every row he cannot read the notes of, whatever they say.
        const alice = await call(app, "GET", `/api/tasks?${filter}&count=exact`, as("alice"));
        expect(alice.body.items.length, filter).toBeGreaterThan(0);
      }
      const all = await call(app, "GET", "/api/tasks?filter[internalNotes][isNull]=false", as("bob"));
      expect(all.body.items).toEqual([]);
      for (const user of ["bob", "alice"]) {
        const sorted = await call(app, "GET", "/api/tasks?sortBy=internalNotes", as(user));
        expect(sorted.status).toBe(400);
        expect(sorted.text).not.toContain("secret");
        const unknown = await call(app, "GET", "/api/tasks?sortBy=nothingHere", as(user));
        expect(sorted.body.message.replace("internalNotes", "X")).toBe(
          unknown.body.message.replace("nothingHere", "X"),
        );
      }
      const search = await call(app, "GET", "/api/tasks?search=secret", as("bob"));
      expect(search.body.items).toEqual([]);
    });

    it("writes: bob may not set the notes (403 naming them, nothing stored); alice may on A's tasks, not on B's", async () => {
      const patch = await call(app, "PATCH", `/api/task/${ids["A:task:bob"]}`, {
        ...as("bob"),
        body: { internalNotes: "bob was here" },
      });
      expect(patch.status).toBe(403);
      expect(patch.body.details[0].path).toBe("internalNotes");
      const created = await call(app, "POST", "/api/task", {
        ...as("bob"),
        body: { title: "with notes", projectId: ids["A:project"], assignee: "bob", internalNotes: "x" },
      });
      expect(created.status).toBe(403);
      const titles = (await app.api.listTasks({ overrideAccess: true, query: { limit: 100 } })).items.map(
        (t) => t.title,
      );
      expect(titles).not.toContain("with notes");
      const mine = await call(app, "PATCH", `/api/task/${ids["A:task:alice"]}`, {
        ...as("alice"),
        body: { internalNotes: "secret A alice!" },
      });
      expect(mine.status, mine.text).toBe(200);
      expect(mine.body.internalNotes).toBe("secret A alice!");
      // Bob's own task, updated by him without the notes: his answer has none.
      const own = await call(app, "PATCH", `/api/task/${ids["A:task:bob"]}`, {
        ...as("bob"),
        body: { title: "A bob" },
      });
      expect(own.status, own.text).toBe(200);
      expect("internalNotes" in own.body).toBe(false);
    });

    it("app.can reports the field hidden per record when given an id", async () => {
      const bob = await app.can("read", "task", { user: { id: "bob" }, id: ids["A:task:bob"] });
      expect(bob.hiddenFields).toContain("internalNotes");
      const alice = await app.can("read", "task", { user: { id: "alice" }, id: ids["A:task:bob"] });
      expect(alice.hiddenFields).not.toContain("internalNotes");
      const general = await app.can("list", "task", { user: { id: "alice" } });
      expect(general.fieldsByRecord).toEqual(["internalNotes"]);
    });

    it("realtime: an event tells alice's change to bob without the notes, and nothing of A to carol", async () => {
      const streamOf = async (user: string) => {
        const request = new Request("http://local/api/tasks/events", { headers: { "x-user": user } });
        const stream = await app.handler(request);
        expect(stream.status).toBe(200);
        const reader = stream.body!.getReader();
        const decoder = new TextDecoder();
        let text = "";
        return async (seen: string) => {
          while (!text.includes(seen)) {
            const { value, done } = await reader.read();
            if (done) break;
            text += decoder.decode(value);
          }
          await reader.cancel();
          return text;
        };
      };
      const bob = await streamOf("bob");
      const carol = await streamOf("carol");
      const changed = await call(app, "PATCH", `/api/task/${ids["A:task:alice"]}`, {
        ...as("alice"),
        body: { internalNotes: "secret again", title: "A alice (seen)" },
      });
      expect(changed.status).toBe(200);
      // Carol's own change comes after alice's: by the time it reaches her, alice's would have.
      const hers = await call(app, "PATCH", `/api/task/${ids["B:task:carol"]}`, {
        ...as("carol"),
        body: { title: "B carol (seen)" },
      });
      expect(hers.status).toBe(200);
      const bobs = await bob("A alice (seen)");
      expect(bobs).toContain("A alice (seen)");
      expect(bobs).not.toContain("internalNotes");
      expect(bobs).not.toContain("secret");
      const carols = await carol("B carol (seen)");
      expect(carols).toContain("B carol (seen)");
      expect(carols).not.toContain("A alice");
    });
  });

  describe("a per-organization audit trail", () => {
    it("the owner reads her organization's trail and nothing of another; a member reads none", async () => {
      const trail = async (user: string) => {
        const res = await call(app, "GET", "/api/audit/logs?limit=100", as(user));
        expect(res.status, res.text).toBe(200);
        return res.body.items as {
          resource: string;
          operation: string;
          scope: string;
          recordId: string;
          after: Record<string, unknown> | null;
        }[];
      };
      const alice = await trail("alice");
      expect(alice.length).toBeGreaterThan(8);
      // With their contents: each record's own read rule (a memberOf, on its own field, through one
      // relation, through two) judges the snapshots, with her sets read once.
      for (const resource of ["organization", "project", "task", "comment"]) {
        const created = alice.find((e) => e.resource === resource && e.operation === "create");
        expect(created?.after, resource).toMatchObject({ id: created?.recordId });
      }
      expect(new Set(alice.map((e) => e.scope))).toEqual(new Set([ids.A]));
      // Through two hops: A's comments and tasks are A's.
      expect(alice.filter((e) => e.resource === "comment")).toHaveLength(3);
      expect(alice.some((e) => e.recordId === ids["A:task:bob"])).toBe(true);
      const carol = await trail("carol");
      expect(new Set(carol.map((e) => e.scope))).toEqual(new Set([ids.B]));
      expect(await trail("bob")).toEqual([]);
      expect(await trail("dave")).toEqual([]);
      // Asking for another organization's entries by name finds nothing either.
      const asked = await call(app, "GET", `/api/audit/logs?scope=${ids.B}`, as("alice"));
      expect(asked.body.items).toEqual([]);
    });

    it("a task's history shows a member its versions, without the notes she may not read", async () => {
      const history = async (user: string) => {
        const res = await call(app, "GET", `/api/task/${ids["A:task:bob"]}/history`, as(user));
        return res;
      };
      const bob = await history("bob");
      expect(bob.status, bob.text).toBe(200);
      const created = bob.body.items.find((e: { operation: string }) => e.operation === "create");
      expect(created.after).toMatchObject({ id: ids["A:task:bob"], assignee: "bob" });
      expect(bob.text).not.toContain("internalNotes");
      expect((await history("alice")).body.items.length).toBe(bob.body.items.length);
      expect((await history("carol")).status).toBe(404);
    });

    it("hostile scope parameters are 400s that store and reveal nothing", async () => {
      for (const query of [
        "scope=%00",
        `scope=${"x".repeat(10_000)}`,
        "scope=' or 1=1 --",
        "scope[in]=x",
        "__proto__=x",
        "scope=a&scope=b",
      ]) {
        const res = await call(app, "GET", `/api/audit/logs?${query}`, as("alice"));
        expect(res.status === 400 || (res.status === 200 && res.body.items.length === 0), query).toBe(true);
        expect(res.text, query).not.toContain("secret");
        expect(res.status, query).toBeLessThan(500);
      }
    });

    it("a cascade's entries carry the organization too", async () => {
      const made = await call(app, "POST", "/api/task", {
        ...as("alice"),
        body: { title: "short-lived", projectId: ids["A:project"], assignee: "alice" },
      });
      const note = await call(app, "POST", "/api/comment", {
        ...as("alice"),
        body: { text: "goes with it", taskId: made.body.id },
      });
      expect((await call(app, "DELETE", `/api/task/${made.body.id}`, as("alice"))).status).toBe(200);
      const res = await call(app, "GET", `/api/audit/logs?recordId=${note.body.id}`, as("alice"));
      expect(res.body.items.map((e: { operation: string; scope: string }) => [e.operation, e.scope])).toEqual(
        [
          ["delete", ids.A],
          ["create", ids.A],
        ],
      );
      const carol = await call(app, "GET", `/api/audit/logs?recordId=${note.body.id}`, as("carol"));
      expect(carol.body.items).toEqual([]);
    });
  });

  describe("rules' sets", () => {
    it("an empty `in` in a rule matches nothing, an empty `nin` everything", async () => {
      const made = await app.api.createNote({ body: { text: "n" } });
      const list = await call(app, "GET", "/api/notes?count=exact", as("bob"));
      expect(list.status, list.text).toBe(200);
      expect(list.body.items).toEqual([]);
      expect(list.body.pagination.total).toBe(0);
      expect((await call(app, "GET", `/api/note/${made.id}`, as("bob"))).status).toBe(200);
      // Server code's `where` objects may hold empty sets too; a query string may not.
      expect(
        await app.api.listNotes({ query: { where: { id: { in: [] } } }, overrideAccess: true }),
      ).toMatchObject({
        items: [],
      });
      expect(
        (await app.api.listNotes({ query: { where: { id: { nin: [] } } }, overrideAccess: true })).items,
      ).toHaveLength(1);
      // Over HTTP, nothing is a mistake: a 400, not an empty set (nor the one value "").
      for (const query of [
        "notes?filter[id][in]=",
        "notes?filter[id][nin]=",
        "tasks?filter[project.orgId][in]=",
      ]) {
        const text = await call(app, "GET", `/api/${query}`, as("bob"));
        expect(text.status, query).toBe(400);
        expect(text.body.message, query).toMatch(/needs at least one value/);
      }
    });

    it("types refuse what the server refuses: no text matching on an enum or a number", async () => {
      const list = (where: object) =>
        app.api.listNotes({ query: { where: where as never }, overrideAccess: true });
      type NoteWhere = NonNullable<NonNullable<Parameters<typeof app.api.listNotes>[0]>["query"]>["where"];
      // @ts-expect-error: kind is an enum
      const onEnum: NoteWhere = { kind: { contains: "pl" } };
      // @ts-expect-error: rank is a number
      const onNumber: NoteWhere = { rank: { contains: "1" } };
      const fine: NoteWhere = { text: { contains: "n" }, kind: "plain" };
      expect([onEnum, onNumber, fine]).toHaveLength(3);
      await expect(list({ kind: { contains: "pl" } })).rejects.toMatchObject({
        status: 400,
        message: expect.stringContaining("cannot be used on an enum field"),
      });
      const res = await call(app, "GET", "/api/notes?filter[rank][contains]=1", as("bob"));
      expect(res.status).toBe(400);
      expect(res.text).toContain("cannot be used on a number field");
    });

    it("a rule that returns a filter its resource cannot answer is a 500 whose log names the rule", async () => {
      logged.length = 0;
      const res = await call(app, "GET", "/api/brokens", as("bob"));
      expect(res.status).toBe(500);
      expect(res.text).not.toContain("nowhere");
      expect(logged.join("\n")).toContain('the list rule of "broken"');
      logged.length = 0;
      const field = await call(app, "GET", "/api/brokenFields", as("bob"));
      expect(field.status).toBe(500);
      expect(field.text).not.toContain("nowhere");
      expect(logged.join("\n")).toContain('the read rule of the field "text" of "brokenField"');
    });
  });
});

describe("the indexes memberOf's paths read", () => {
  it("each table a path passes through gets (id, the field read there): task (id, projectId), project (id, orgId)", () => {
    const resources = [organization, membership, project, task, comment];
    expect(Object.fromEntries(ruleIndexes(resources, readRelations(resources)))).toEqual({
      project: [["id", "orgId"]],
      task: [["id", "projectId"]],
    });
    const columns = resourceTable(project, [["id", "orgId"]]).indexes?.map((index) => index.columns);
    expect(columns).toContainEqual(["id", "orgId"]);
  });
});
