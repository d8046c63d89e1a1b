// References between resources on SQLite, PostgreSQL and MariaDB: foreign keys, 400 for a missing
// target, 409 under `restrict`, `cascade` and `setNull` with their audit entries and the cache
// forgetting what they changed, and `expand` (one level, nested, reverse) in one query per
// relation, obeying the read rules, row rules and field rules of every record it brings, checked
// with two users over HTTP, app.api and the client.

import {
  apiKey,
  createResource,
  crudkit,
  type DatabaseOptions,
  fileRef,
  ownedBy,
  references,
  withId,
} from "crudkit-api";
import { createClient } from "crudkit-api/client";
import { serve } from "crudkit-api/node";
import { audit, cache } from "crudkit-api/plugins";
import type { Kysely } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { countingKysely, forEachDialect } from "./dialects.ts";
import { call, expectNoLeak, type TestResponse } from "./helpers.ts";

const isAdmin = ({ user }: { user: { roles?: readonly string[] } | null }) =>
  user?.roles?.includes("admin") === true;
const signedIn = ({ user }: { user: unknown }) => user !== null;
const open = { create: signedIn, read: signedIn, list: signedIn, update: signedIn, delete: signedIn };

/** Values only the admin may read: no answer to Alice or Bob may contain them. */
const SECRET_REVENUE = 4242424.5;
const SECRET_EMAIL = "hidden-mailbox@example.org";

const company = createResource({
  name: "company",
  schema: withId({ name: z.string().max(100), revenue: z.number().optional() }),
  access: { ...open, fields: { revenue: { read: isAdmin, write: isAdmin } } },
});

const author = createResource({
  name: "author",
  schema: withId({
    name: z.string().max(100),
    email: z.string().max(100).optional(),
    companyId: references(company, { onDelete: "setNull" }).nullable().optional(),
  }),
  access: { ...open, fields: { email: { read: isAdmin, write: isAdmin } } },
});

const post = createResource({
  name: "post",
  schema: withId({
    title: z.string().max(100),
    ownerId: z.string().max(255).optional(),
    authorId: references(author, { onDelete: "restrict" }),
  }),
  access: ownedBy("ownerId", { bypass: (u) => u.roles?.includes("admin") ?? false }),
});

const comment = createResource({
  name: "comment",
  schema: withId({
    body: z.string().max(200),
    ownerId: z.string().max(255).optional(),
    postId: references(post, {
      onDelete: "cascade",
      reverse: { limit: 2, sortBy: "body", sortOrder: "asc" },
    }),
  }),
  access: ownedBy("ownerId", { bypass: (u) => u.roles?.includes("admin") ?? false }),
});

const keys = apiKey({
  keys: {
    "alice-key": { id: "alice" },
    "bob-key": { id: "bob" },
    "admin-key": { id: "admin", roles: ["admin"] },
  },
});
const alice = { "x-api-key": "alice-key" };
const bob = { "x-api-key": "bob-key" };
const admin = { "x-api-key": "admin-key" };

const makeApp = (database: DatabaseOptions | Kysely<any>) =>
  crudkit({
    database,
    autoMigrate: true,
    resources: [company, author, post, comment],
    plugins: [keys, audit({ access: { read: isAdmin } }), cache()],
  });

forEachDialect((dialect) => {
  let app: ReturnType<typeof makeApp>;
  /** Every answer Alice and Bob got, scanned for the admin-only values at the end. */
  const seen: TestResponse[] = [];
  const as = async (headers: Record<string, string>, method: string, path: string, body?: unknown) => {
    const res = await call(app, method, path, { headers, ...(body === undefined ? {} : { body }) });
    if (headers !== admin) seen.push(res);
    return res;
  };
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    app = makeApp(await dialect.fresh());
    const make = async (headers: Record<string, string>, path: string, body: object) => {
      const res = await call(app, "POST", path, { headers, body });
      expect(res.status, res.text).toBe(201);
      return res.body.id as string;
    };
    ids.acme = await make(admin, "/api/company", { name: "Acme", revenue: SECRET_REVENUE });
    ids.ann = await make(admin, "/api/author", { name: "Ann", email: SECRET_EMAIL, companyId: ids.acme });
    ids.ben = await make(admin, "/api/author", { name: "Ben" });
    ids.alicePost = await make(alice, "/api/post", { title: "Alice on apples", authorId: ids.ann });
    ids.bobPost = await make(bob, "/api/post", { title: "Bob on bread", authorId: ids.ben });
    for (const body of ["a1", "a2", "a3"]) await make(alice, "/api/comment", { body, postId: ids.alicePost });
    // Bob may not read Alice's post, so he cannot point at it himself (a reference is a read):
    // his comment under it is made by the admin in his name.
    await make(admin, "/api/comment", { body: "b1", postId: ids.alicePost, ownerId: "bob" });
  });
  afterAll(() => app?.close());

  describe("integrity", () => {
    it("a create or update naming a missing record answers 400 naming the field", async () => {
      const created = await as(alice, "POST", "/api/post", { title: "x", authorId: "no-such-author" });
      expect(created.status).toBe(400);
      expect(created.body).toEqual({
        code: "VALIDATION_ERROR",
        message: '"authorId" must be the id of an existing author.',
        details: [{ path: "authorId", message: "No author with this id exists." }],
      });
      const updated = await as(alice, "PATCH", `/api/post/${ids.alicePost}`, {
        authorId: "gone'; drop table post;--",
      });
      expect(updated.status).toBe(400);
      expect(updated.body.details).toEqual([{ path: "authorId", message: "No author with this id exists." }]);
      // Nothing was stored.
      expect((await as(alice, "GET", `/api/post/${ids.alicePost}`)).body.authorId).toBe(ids.ann);
      const viaApi = app.api.createPost({ headers: alice, body: { title: "x", authorId: "\u0000nul" } });
      await expect(viaApi).rejects.toMatchObject({ status: 400 });
    });

    it("deleting a record still referenced under restrict answers 409 naming the referencing resource", async () => {
      const res = await as(admin, "DELETE", `/api/author/${ids.ben}`);
      expect(res.status).toBe(409);
      expect(res.body).toMatchObject({
        code: "CONFLICT",
        message:
          'This author is still referenced by records of "post" (field "authorId"); delete or change them first.',
        details: [{ path: "post.authorId", message: "Still references this author." }],
      });
      expect((await as(admin, "GET", `/api/author/${ids.ben}`)).status).toBe(200);
    });
  });

  describe("expand", () => {
    it("expands a reference on read and list, and nests up to three levels", async () => {
      const read = await as(alice, "GET", `/api/post/${ids.alicePost}?expand=author.company`);
      expect(read.status, read.text).toBe(200);
      expect(read.body.author).toMatchObject({
        id: ids.ann,
        name: "Ann",
        company: { id: ids.acme, name: "Acme" },
      });
      // Field rules of the expanded resources hold: Alice sees neither the email nor the revenue.
      expect(read.body.author).not.toHaveProperty("email");
      expect(read.body.author.company).not.toHaveProperty("revenue");
      const list = await as(bob, "GET", "/api/posts?expand=author");
      expect(list.body.items).toHaveLength(1);
      expect(list.body.items[0].author).toMatchObject({ id: ids.ben, name: "Ben" });
      const deep = await as(admin, "GET", `/api/comments?expand=post.author.company&limit=1&filter[body]=a1`);
      expect(deep.body.items[0].post.author.company.revenue).toBe(SECRET_REVENUE);
    });

    it("expands a reverse relation with its limit and order, only the rows the caller may read", async () => {
      const mine = await as(alice, "GET", `/api/post/${ids.alicePost}?expand=comments`);
      // Bob's comment on Alice's post is outside her comment rule; the limit is 2, by body ascending.
      expect(mine.body.comments.map((c: { body: string }) => c.body)).toEqual(["a1", "a2"]);
      const all = await as(admin, "GET", `/api/post/${ids.alicePost}?expand=comments`);
      expect(all.body.comments.map((c: { body: string }) => c.body)).toEqual(["a1", "a2"]);
      const reverseOfReverse = await as(admin, "GET", `/api/author/${ids.ann}?expand=posts.comments`);
      expect(reverseOfReverse.body.posts[0].comments).toHaveLength(2);
    });

    it("a related record outside the caller's rows expands to null, never to its content", async () => {
      // Bob commented on Alice's post; he may not read that post.
      const res = await as(bob, "GET", "/api/comments?expand=post");
      expect(res.body.items.map((c: { body: string; post: unknown }) => [c.body, c.post])).toEqual([
        ["b1", null],
      ]);
      expect(res.text).not.toContain("Alice on apples");
    });

    it("refuses unknown relations, hidden fields, too deep paths and hostile input with 400", async () => {
      for (const expand of [
        "nope",
        "author.nope",
        "author.company.x.y",
        "comments.post.author.company",
        "author..company",
        "author,".repeat(20),
        "a".repeat(2000),
        "author%00",
        "__proto__",
        "constructor",
      ]) {
        const res = await as(alice, "GET", `/api/posts?expand=${encodeURIComponent(expand)}`);
        expect(res.status, expand).toBe(400);
        expect(res.body.code).toBe("BAD_REQUEST");
      }
    });

    it("runs one query per relation, whatever the number of records", async () => {
      const queries: string[] = [];
      const counted = makeApp(await countingKysely(dialect.name, await dialect.fresh(), queries));
      try {
        await countQueries(counted, queries);
      } finally {
        await counted.close();
      }
    });

    /** The reads of a request, not the audit sealer's calls, which run on their own time. */
    const selectsOf = (queries: string[]) =>
      queries.filter((q) => /^\s*select/i.test(q) && !q.includes("crudkit_audit_seal"));

    async function countQueries(counted: ReturnType<typeof makeApp>, queries: string[]) {
      await counted.ready;
      const authorIds: string[] = [];
      const companies: string[] = [];
      for (let i = 0; i < 3; i++)
        companies.push(
          (await counted.api.createCompany({ overrideAccess: true, body: { name: `C${i}` } })).id,
        );
      for (let i = 0; i < 5; i++) {
        const a = await counted.api.createAuthor({
          overrideAccess: true,
          body: { name: `A${i}`, companyId: companies[i % 3] },
        });
        authorIds.push(a.id);
        for (let j = 0; j < 3; j++) {
          const p = await counted.api.createPost({
            overrideAccess: true,
            body: { title: `P${i}${j}`, authorId: a.id },
          });
          await counted.api.createComment({ overrideAccess: true, body: { body: `c${j}`, postId: p.id } });
        }
      }
      queries.length = 0;
      const page = await counted.api.listPosts({
        overrideAccess: true,
        query: { limit: 15, expand: ["author", "comments"] },
      });
      expect(page.items).toHaveLength(15);
      expect(page.items.every((p) => p.author?.name.startsWith("A") && p.comments.length === 1)).toBe(true);
      const selects = selectsOf(queries);
      // The count, the page, one for the authors and one for the comments.
      expect(selects).toHaveLength(4);
      // Nested and reverse of reverse: one more query per relation, never one per record.
      queries.length = 0;
      const nested = await counted.api.listComments({
        overrideAccess: true,
        query: { limit: 15, expand: ["post.author.company", "post.comments"] },
      });
      expect(nested.items.every((c) => c.post?.author?.company?.name.startsWith("C"))).toBe(true);
      expect(nested.items.every((c) => c.post?.comments.length === 1)).toBe(true);
      // The count, the page, posts, authors, companies, and the posts' comments.
      expect(selectsOf(queries)).toHaveLength(6);
      queries.length = 0;
      const one = await counted.api.readAuthor({
        overrideAccess: true,
        params: { id: authorIds[0]! },
        query: { expand: ["company", "posts.comments"] },
      });
      expect(one.posts).toHaveLength(3);
      expect(one.posts.every((p) => p.comments.length === 1)).toBe(true);
      // The author, her company, her posts, their comments.
      expect(selectsOf(queries)).toHaveLength(4);
    }
  });

  describe("relation filters", () => {
    it("filter[author.name] matches through the reference, with the target's read rule applied", async () => {
      const byAnn = await as(admin, "GET", "/api/posts?filter[author.name][contains]=an&sortBy=title");
      expect(byAnn.status, byAnn.text).toBe(200);
      expect(byAnn.body.items.map((p: { title: string }) => p.title)).toEqual(["Alice on apples"]);
      expect(byAnn.body.pagination.total).toBe(1);
      const viaApi = await app.api.listPosts({
        overrideAccess: true,
        query: { where: { "author.name": "Ben" } },
      });
      expect(viaApi.items.map((p) => p.title)).toEqual(["Bob on bread"]);
      // Combined with the caller's own row rule and an `or`.
      const mine = await as(
        alice,
        "GET",
        "/api/posts?filter[or][0][author.name]=Ben&filter[or][1][author.name]=Ann",
      );
      expect(mine.body.items.map((p: { title: string }) => p.title)).toEqual(["Alice on apples"]);
    });

    it("a related record outside the caller's rows never matches: the filter is no oracle", async () => {
      // Bob's comment is on Alice's post, which Bob may not read.
      const bobs = await as(bob, "GET", "/api/comments?filter[post.title][contains]=apples");
      expect(bobs.status).toBe(200);
      expect(bobs.body.items).toEqual([]);
      const admins = await as(admin, "GET", "/api/comments?filter[post.title][contains]=apples&count=exact");
      expect(admins.body.pagination.total).toBeGreaterThanOrEqual(4);
      const notFilter = await as(bob, "GET", "/api/comments?filter[not][post.title][contains]=apples");
      expect(notFilter.body.items.map((c: { body: string }) => c.body)).toEqual(["b1"]);
    });

    it("refuses hidden, unknown and hostile relation filters with 400", async () => {
      const hidden = await as(
        alice,
        "GET",
        `/api/posts?filter[author.email]=${encodeURIComponent(SECRET_EMAIL)}`,
      );
      expect(hidden.status).toBe(400);
      expect(hidden.body.message).toBe("filter.author.email is not a field you can filter on.");
      const asAdmin = await as(
        admin,
        "GET",
        `/api/posts?filter[author.email]=${encodeURIComponent(SECRET_EMAIL)}`,
      );
      expect(asAdmin.body.items).toHaveLength(1);
      for (const query of [
        "filter[author.nope]=x",
        "filter[nope.name]=x",
        "filter[author.name.x]=x",
        "filter[author.companyId.name]=x",
        "filter[author.name][contains]=%00",
        "filter[author.name][regex]=x",
        "filter[comments.body]=x",
      ]) {
        const res = await as(alice, "GET", `/api/posts?${query}`);
        expect(res.status, query).toBe(400);
      }
      const injected = await as(
        admin,
        "GET",
        `/api/posts?filter[author.name]=${encodeURIComponent("x' or '1'='1")}`,
      );
      expect(injected.status).toBe(200);
      expect(injected.body.items).toEqual([]);
    });
  });

  describe("onDelete", () => {
    it("cascade deletes the referencing records in the same transaction, each audited, and the cache forgets them", async () => {
      const postId = await call(app, "POST", "/api/post", {
        headers: alice,
        body: { title: "doomed", authorId: ids.ann },
      });
      const c1 = await call(app, "POST", "/api/comment", {
        headers: alice,
        body: { body: "x1", postId: postId.body.id },
      });
      const cached = await as(alice, "GET", `/api/comment/${c1.body.id}`);
      expect((await as(alice, "GET", `/api/comment/${c1.body.id}`)).headers.get("x-cache")).toBe("HIT");
      expect(cached.status).toBe(200);
      const removed = await as(alice, "DELETE", `/api/post/${postId.body.id}`);
      expect(removed.status, removed.text).toBe(200);
      expect((await as(alice, "GET", `/api/comment/${c1.body.id}`)).status).toBe(404);
      const logs = await call(app, "GET", `/api/audit/logs?resource=comment&recordId=${c1.body.id}`, {
        headers: admin,
      });
      expect(logs.body.items.map((e: { operation: string }) => e.operation)).toEqual(["delete", "create"]);
      expect(logs.body.items[0].userId).toBe("alice");
    });

    it("setNull clears the field in the same transaction, audited as an update", async () => {
      const temp = await call(app, "POST", "/api/company", { headers: admin, body: { name: "Temp" } });
      const hired = await call(app, "POST", "/api/author", {
        headers: admin,
        body: { name: "Hal", companyId: temp.body.id },
      });
      expect((await call(app, "DELETE", `/api/company/${temp.body.id}`, { headers: admin })).status).toBe(
        200,
      );
      const after = await call(app, "GET", `/api/author/${hired.body.id}`, { headers: admin });
      expect(after.body.companyId).toBeNull();
      const logs = await call(app, "GET", `/api/audit/logs?resource=author&recordId=${hired.body.id}`, {
        headers: admin,
      });
      expect(logs.body.items[0]).toMatchObject({ operation: "update" });
      expect(logs.body.items[0].before.companyId).toBe(temp.body.id);
      expect(logs.body.items[0].after.companyId).toBeNull();
    });

    it("a refused cascade changes nothing", async () => {
      // Deleting Ann would cascade nothing but is refused by restrict: her posts stay.
      expect((await call(app, "DELETE", `/api/author/${ids.ann}`, { headers: admin })).status).toBe(409);
      expect((await call(app, "GET", `/api/post/${ids.alicePost}`, { headers: admin })).status).toBe(200);
    });
  });

  describe("the client", () => {
    it("expands through the client over a real socket", async () => {
      const server = await serve(makeApp(await dialect.fresh()), { port: 0 });
      try {
        const client = createClient<typeof app>({ baseURL: `${server.url}/api`, headers: admin });
        const a = await client.author.create({ name: "Cli" });
        const p = await client.post.create({ title: "via client", authorId: a.data!.id });
        const list = await client.post.list({ expand: ["author"] });
        expect(list.data?.items[0]?.author?.name).toBe("Cli");
        const read = await client.post.read(p.data!.id, { expand: ["author", "comments"] });
        expect(read.data?.author?.id).toBe(a.data!.id);
        expect(read.data?.comments).toEqual([]);
        const bad = await client.post.create({ title: "x", authorId: "missing" });
        expect(bad.error).toMatchObject({ status: 400, code: "VALIDATION_ERROR" });
      } finally {
        await server.close();
      }
    });
  });

  it("no answer to Alice or Bob carried an admin-only value, a stack or driver text", () => {
    expect(seen.length).toBeGreaterThan(20);
    for (const res of seen) {
      expect(res.text).not.toContain(String(SECRET_REVENUE));
      expect(res.text).not.toContain(SECRET_EMAIL);
      expectNoLeak(res.text);
    }
  });
});

describe("relation definitions", () => {
  const database = { provider: "sqlite", url: ":memory:" } as const;
  const target = createResource({ name: "target", schema: withId({ name: z.string() }) });
  it("refuse what cannot work, at startup", () => {
    const unknown = createResource({ name: "a", schema: withId({ bId: references("nothing") }) });
    expect(() => crudkit({ database, resources: [unknown] })).toThrow(
      '"a.bId" references "nothing", which is not a resource of this app.',
    );
    const required = createResource({
      name: "a",
      schema: withId({ targetId: references(target, { onDelete: "setNull" }) }),
    });
    expect(() => crudkit({ database, resources: [target, required] })).toThrow(
      '"a.targetId" is set to null when its target is deleted, so its schema must accept null (.nullable()).',
    );
    const clash = createResource({
      name: "a",
      schema: withId({ target: z.string(), targetId: references(target) }),
    });
    expect(() => crudkit({ database, resources: [target, clash] })).toThrow(
      '"a.targetId" expands as "target" on "a", the name of the field "a.target"',
    );
    const twice = createResource({
      name: "a",
      schema: withId({ oneId: references(target), twoId: references(target) }),
    });
    expect(() => crudkit({ database, resources: [target, twice] })).toThrow(/expands as "as" on "target"/);
    const files = createResource({ name: "a", schema: withId({ file: fileRef() }) });
    expect(() => crudkit({ database, resources: [files] })).toThrow(
      "fileRef fields hold uploaded files: add the upload() plugin to the app.",
    );
  });
});
