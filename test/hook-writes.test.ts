// Issue 45, items 4 and 6: hooks write through crudkit (`ctx.api`, in the write's transaction, with
// validation, rules, audit and commit hooks), and rules get the database and a per-request cache.
// On the three databases, over HTTP and through app.api.

import { createResource, crudkit, type DatabaseOptions, memberOf, references, withId } from "crudkit-api";
import { audit } from "crudkit-api/plugins";
import { beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { appPerDialect, forEachDialect } from "./dialects.ts";
import { as, call, userFromHeader } from "./helpers.ts";

/** What the hooks saw, in order: "<what> <name>". */
const seen: string[] = [];
let lookups = 0;

const organization = createResource({
  name: "organization",
  schema: withId({ name: z.string().max(100) }),
  access: {
    ...memberOf("membership", { user: "userId", scope: "orgId", path: "id" }),
    create: ({ user }) => user !== null,
  },
  hooks: {
    // The organization's first membership: one line, as the server, in this create's transaction.
    async afterCreate(ctx) {
      const role = ctx.record.name === "bad role" ? "emperor" : "owner";
      await ctx.api.createMembership!({ body: { orgId: ctx.record.id, userId: ctx.user!.id, role } });
      if (ctx.record.name === "as caller")
        await ctx.api.createMembership!({
          body: { orgId: ctx.record.id, userId: "someone", role: "member" },
          asCaller: true,
        });
      if (ctx.record.name === "fail after") throw new Error("the hook changed its mind");
    },
    afterCreateCommit(ctx) {
      seen.push(`committed organization ${ctx.record.name}`);
    },
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
  // Nobody creates memberships over HTTP: only the server, from the organization's hook.
  access: {
    create: false,
    read: memberOf("membership", { user: "userId", scope: "orgId" }),
    list: memberOf("membership", { user: "userId", scope: "orgId" }),
  },
  hooks: {
    async afterCreateCommit(ctx) {
      // Told only once the organization's transaction committed: its organization is there for
      // a reader outside that transaction.
      const org = await ctx.db
        .selectFrom("organization")
        .select("name")
        .where("id", "=", ctx.record.orgId)
        .executeTakeFirst();
      seen.push(`committed membership of ${org?.name ?? "(not committed)"}`);
    },
  },
});

// A rule that looks the caller's organizations up itself, through the request's cache: a request
// that asks it for several resources (a list and its expansion) looks up once.
const myOrgs = (ctx: { user: { id: string } | null; db: any; cache: any }) =>
  ctx.cache.get(`orgs:${ctx.user?.id}`, async () => {
    lookups++;
    const rows = await ctx.db
      .selectFrom("membership")
      .select("orgId")
      .where("userId", "=", ctx.user?.id ?? "")
      .execute();
    return rows.map((r: { orgId: string }) => r.orgId);
  });

const board = createResource({
  name: "board",
  schema: withId({ title: z.string().max(100), orgId: references(organization) }),
  access: {
    create: true,
    list: async (ctx) => ({ orgId: { in: await myOrgs(ctx) } }),
    read: async (ctx) => ({ orgId: { in: await myOrgs(ctx) } }),
  },
});
const card = createResource({
  name: "card",
  schema: withId({ text: z.string().max(100), boardId: references(board) }),
  access: { create: true, list: async (ctx) => (await myOrgs(ctx)).length > 0 },
});

const makeApp = (database: DatabaseOptions) =>
  crudkit({
    database,
    autoMigrate: true,
    resources: [organization, membership, board, card],
    plugins: [audit({ access: { read: true } })],
    identify: userFromHeader,
  });

forEachDialect((dialect) => {
  const app = appPerDialect(dialect, makeApp);
  beforeEach(() => {
    seen.length = 0;
  });

  const stored = async () => {
    const server = { overrideAccess: true } as const;
    const orgs = await app.api.listOrganizations({ query: { limit: 100 }, ...server });
    const members = await app.api.listMemberships({ query: { limit: 100 }, ...server });
    const entries = await call(app, "GET", "/api/audit/logs?limit=100", {});
    return {
      orgs: orgs.items,
      members: members.items,
      entries: entries.body.items as {
        recordId: string;
        resource: string;
        operation: string;
        source: string;
      }[],
    };
  };

  describe("hooks write through crudkit", () => {
    it("an organization's first membership is made in its afterCreate, audited, told after commit", async () => {
      const res = await call(app, "POST", "/api/organization", { ...as("alice"), body: { name: "A" } });
      expect(res.status, res.text).toBe(201);
      const { members, entries } = await stored();
      const mine = members.filter((m) => m.orgId === res.body.id);
      expect(mine).toMatchObject([{ userId: "alice", role: "owner" }]);
      // Validated and stored like any create: an id and timestamps of its own.
      expect(mine[0]!.id).toMatch(/^[0-9a-f-]{36}$/);
      expect(mine[0]!.createdAt).toEqual(expect.any(String));
      // Both writes have their audit entry; the membership's says the server made it.
      const audited = entries.filter((e) => e.recordId === res.body.id || e.recordId === mine[0]!.id);
      expect(audited.map((e) => `${e.resource} ${e.operation}`).sort()).toEqual([
        "membership create",
        "organization create",
      ]);
      expect(audited.find((e) => e.resource === "membership")!.source).toBe("override");
      // The membership's commit hook ran after the organization's transaction committed.
      expect(seen).toEqual(["committed membership of A", "committed organization A"]);
      // And alice, now a member, reads her organization.
      expect((await call(app, "GET", `/api/organization/${res.body.id}`, as("alice"))).status).toBe(200);
    });

    it("the same through app.api as a caller", async () => {
      const org = await app.api.createOrganization({ body: { name: "B" }, ...as("carol") });
      const members = await app.api.listMemberships({ ...as("carol") });
      expect(members.items.filter((m) => m.orgId === org.id)).toMatchObject([
        { userId: "carol", role: "owner" },
      ]);
    });

    for (const [name, status] of [
      ["fail after", 500],
      ["bad role", 400],
      ["as caller", 403],
    ] as const) {
      it(`a hook's write that fails (${name}) rolls the whole create back: no organization, membership or entry`, async () => {
        const before = await stored();
        const res = await call(app, "POST", "/api/organization", { ...as("dave"), body: { name } });
        expect(res.status, res.text).toBe(status);
        if (status === 400) expect(res.body.details[0].path).toBe("role");
        if (status === 403) expect(res.body.message).toContain('"membership"');
        const after = await stored();
        expect(after.orgs.length).toBe(before.orgs.length);
        expect(after.members.length).toBe(before.members.length);
        expect(after.entries.length).toBe(before.entries.length);
        expect(seen).toEqual([]);
      });
    }
  });

  describe("rules get the database and the request's cache", () => {
    it("a lookup made through ctx.cache runs once per request, however many rules ask", async () => {
      const org = await app.api.createOrganization({ body: { name: "C" }, ...as("erin") });
      const server = { overrideAccess: true } as const;
      const made = await app.api.createBoard({ body: { title: "plans", orgId: org.id }, ...server });
      await app.api.createCard({ body: { text: "one", boardId: made.id }, ...server });
      await app.api.createCard({ body: { text: "two", boardId: made.id }, ...server });

      lookups = 0;
      const res = await call(app, "GET", "/api/cards?expand=board", as("erin"));
      expect(res.status, res.text).toBe(200);
      expect(res.body.items.map((c: { board: { title: string } }) => c.board.title)).toEqual([
        "plans",
        "plans",
      ]);
      // The card's list rule and the board's read rule (for the expansion) share one lookup.
      expect(lookups).toBe(1);

      lookups = 0;
      const other = await call(app, "GET", "/api/cards?expand=board", as("frank"));
      expect(other.status).toBe(403);
      await call(app, "GET", "/api/boards", as("erin"));
      expect(lookups).toBe(2); // one per request: nothing is kept past it
      const can = await app.can("read", "board", { user: { id: "erin" }, id: made.id });
      expect(can.allowed).toBe(true);
    });
  });
});
