// Many-to-many (issue 41 §1) on SQLite, PostgreSQL and MariaDB: `referencesMany(tag)` keeps a
// post's tag ids in a junction table the migrations make; writes set the whole list in their
// transaction, in the order given; reads and lists carry it; deleting a tag takes it out of every
// list; an id of a tag the caller may not read is refused byte for byte as an unknown one; repeats
// and more than maxItems are 400s naming the field. `expand=tags` and the reverse `expand=posts`
// read a whole page in a fixed number of statements; `filter[tags.name]` matches posts with any
// readable tag of that name. Through HTTP, app.api and the client.

import {
  apiKey,
  createResource,
  crudkit,
  type DatabaseOptions,
  ownedBy,
  references,
  referencesMany,
  withId,
} from "crudkit-api";
import { createClient } from "crudkit-api/client";
import { audit, webhooks } from "crudkit-api/plugins";
import type { Kysely } from "kysely";
import { beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { appPerDialect, countingKysely, forEachDialect } from "./dialects.ts";
import { call, expectNoLeak } from "./helpers.ts";

const isAdmin = ({ user }: { user: { roles?: readonly string[] } | null }) =>
  user?.roles?.includes("admin") ?? false;
const tag = createResource({
  name: "tag",
  schema: withId({
    ownerId: z.string().max(255).optional(),
    name: z.string().max(50),
    secret: z.string().max(50).optional(),
  }),
  access: { ...ownedBy("ownerId"), fields: { secret: { read: isAdmin, write: isAdmin } } },
});
const post = createResource({
  name: "post",
  schema: withId({
    ownerId: z.string().max(255).optional(),
    title: z.string().max(100),
    tagIds: referencesMany(tag, { maxItems: 3 }),
  }),
  access: ownedBy("ownerId"),
});

const keys = apiKey({ keys: { "alice-key": { id: "alice" }, "bob-key": { id: "bob" } } });
const ALICE = { "x-api-key": "alice-key" };
const BOB = { "x-api-key": "bob-key" };

const makeApp = (database: DatabaseOptions | Kysely<any>) =>
  crudkit({ database, autoMigrate: true, resources: [tag, post], plugins: [keys, audit()] });

describe("referencesMany at startup", () => {
  it("refuses a junction table named like a resource, a long one, and an unknown target", () => {
    const clash = createResource({ name: "post_tagIds", schema: withId({ x: z.string() }), access: {} });
    expect(() =>
      crudkit({ database: { provider: "sqlite", url: ":memory:" }, resources: [tag, post, clash] }),
    ).toThrow(/post_tagIds.*resource's name/);
    const long = createResource({
      name: "a_rather_long_resource_name_for_lists",
      schema: withId({ someQuiteLongFieldNameIds: referencesMany(tag) }),
      access: {},
    });
    expect(() =>
      crudkit({ database: { provider: "sqlite", url: ":memory:" }, resources: [tag, long] }),
    ).toThrow(/longer than 45/);
    expect(() => crudkit({ database: { provider: "sqlite", url: ":memory:" }, resources: [post] })).toThrow(
      /not a resource of this app/,
    );
    expect(() => referencesMany(tag, { maxItems: 0 })).toThrow(/maxItems/);
  });

  it("a field named ck_… is refused (crudkit's statements name their own columns so)", () => {
    expect(() => createResource({ name: "x", schema: withId({ ck_rank: z.string() }), access: {} })).toThrow(
      /"ck_rank".*crudkit's own/,
    );
  });

  it("a list's reverse takes its default name only while it is free; a name given must be free", () => {
    const user = createResource({ name: "user", schema: withId({ name: z.string() }), access: {} });
    const article = (reverse?: string) =>
      createResource({
        name: "article",
        schema: withId({
          authorId: references(user),
          editorIds: referencesMany(user, reverse ? { reverse } : {}),
          reviewerIds: referencesMany(user, { reverse: "reviewed" }),
        }),
        access: {},
      });
    const open = (resource: ReturnType<typeof article>) =>
      crudkit({ database: { provider: "sqlite", url: ":memory:" }, resources: [user, resource] });
    // `articles` is the reference's: the first list has no reverse, the second its own name.
    expect(() => open(article())).not.toThrow();
    expect(() => open(article("articles"))).toThrow(/expands as "articles" on "user"/);
    expect(() => open(article("edited"))).not.toThrow();
  });
});

describe("lists on big pages and under record-aware rules (SQLite)", () => {
  const note = createResource({
    name: "note",
    schema: withId({ ownerId: z.string().max(255).optional(), tagIds: referencesMany("label") }),
    access: {
      read: true,
      list: true,
      create: true,
      // The list is the owner's to read: on other rows it is not there at all.
      fields: { tagIds: { read: ({ user }) => (user ? { ownerId: user.id } : false) } },
    },
  });
  const label = createResource({
    name: "label",
    schema: withId({ name: z.string() }),
    access: { read: true, list: true },
  });
  const comment = createResource({
    name: "comment",
    schema: withId({ noteId: references(note) }),
    access: { read: true, list: true },
  });
  const app = crudkit({
    database: { provider: "sqlite", url: ":memory:" },
    autoMigrate: true,
    resources: [label, note, comment],
    plugins: [keys],
    maxLimit: 1000,
  });

  it("a list read on some rows only is left out of rows and expansions it is not hers on", async () => {
    await app.ready;
    const red = await app.api.createLabel({ body: { name: "red" }, overrideAccess: true });
    const bobs = await app.api.createNote({
      body: { ownerId: "bob", tagIds: [red.id] },
      overrideAccess: true,
    });
    const about = await app.api.createComment({ body: { noteId: bobs.id }, overrideAccess: true });
    const read = await call(app, "GET", `/api/note/${bobs.id}`, { headers: ALICE });
    expect(read.body).not.toHaveProperty("tagIds");
    const expanded = await call(app, "GET", `/api/comment/${about.id}?expand=note`, { headers: ALICE });
    expect(expanded.status).toBe(200);
    expect(expanded.body.note).not.toHaveProperty("tagIds");
    expect(expanded.text).not.toContain(red.id);
  });

  it("expand=notes on 600 labels reads them 500 at a time", async () => {
    const at = new Date().toISOString();
    const ids = Array.from({ length: 600 }, (_, i) => `big${i}`);
    for (let i = 0; i < ids.length; i += 100)
      await app.db
        .insertInto("label")
        .values(ids.slice(i, i + 100).map((id) => ({ id, name: id, createdAt: at, updatedAt: at })))
        .execute();
    const note = await app.api.createNote({
      body: { ownerId: "alice", tagIds: ["big599", "big0"] },
      overrideAccess: true,
    });
    const page = await app.api.listLabels({
      query: { limit: 1000, expand: ["notes"] },
      overrideAccess: true,
    });
    expect(page.items.length).toBeGreaterThan(600);
    const named = page.items.filter((l) => l.notes.some((n) => n.id === note.id)).map((l) => l.id);
    expect(named.sort()).toEqual(["big0", "big599"]);
  });
});

forEachDialect((dialect) => {
  const app = appPerDialect(dialect, makeApp);
  const tags = {} as Record<"red" | "green" | "blue" | "black" | "bobs", string>;
  beforeAll(async () => {
    for (const name of ["red", "green", "blue", "black"] as const)
      tags[name] = (await call(app, "POST", "/api/tag", { headers: ALICE, body: { name } })).body.id;
    tags.bobs = (await call(app, "POST", "/api/tag", { headers: BOB, body: { name: "bob's" } })).body.id;
  });
  const junction = async (owner: string) =>
    (
      await app.db
        .selectFrom("post_tagIds")
        .select(["target", "position"])
        .where("owner", "=", owner)
        .orderBy("position")
        .execute()
    ).map((row) => String(row.target));

  describe("referencesMany", () => {
    it("a create stores the list in order; reads and lists carry it", async () => {
      const made = await call(app, "POST", "/api/post", {
        headers: ALICE,
        body: { title: "one", tagIds: [tags.green, tags.red] },
      });
      expect(made.status).toBe(201);
      expect(made.body.tagIds).toEqual([tags.green, tags.red]);
      expect(await junction(made.body.id)).toEqual([tags.green, tags.red]);
      const read = await call(app, "GET", `/api/post/${made.body.id}`, { headers: ALICE });
      expect(read.body.tagIds).toEqual([tags.green, tags.red]);
      const listed = await call(app, "GET", "/api/posts", { headers: ALICE });
      expect(listed.body.items.find((p: { id: string }) => p.id === made.body.id).tagIds).toEqual([
        tags.green,
        tags.red,
      ]);
      const bare = await call(app, "POST", "/api/post", {
        headers: ALICE,
        body: { title: "none", tagIds: [] },
      });
      expect(bare.body.tagIds).toEqual([]);
    });

    it("PATCH with the field replaces the list; without it leaves it alone; PUT replaces it", async () => {
      const made = await call(app, "POST", "/api/post", {
        headers: ALICE,
        body: { title: "two", tagIds: [tags.red] },
      });
      const id = made.body.id;
      const replaced = await call(app, "PATCH", `/api/post/${id}`, {
        headers: ALICE,
        body: { tagIds: [tags.blue, tags.green, tags.red] },
      });
      expect(replaced.status).toBe(200);
      expect(replaced.body.tagIds).toEqual([tags.blue, tags.green, tags.red]);
      const renamed = await call(app, "PATCH", `/api/post/${id}`, { headers: ALICE, body: { title: "2" } });
      expect(renamed.body.tagIds).toEqual([tags.blue, tags.green, tags.red]);
      const put = await call(app, "PUT", `/api/post/${id}`, {
        headers: ALICE,
        body: { title: "2", tagIds: [tags.black] },
      });
      expect(put.body.tagIds).toEqual([tags.black]);
      expect(await junction(id)).toEqual([tags.black]);
      // The audit entry carries the list like any other field.
      await app.audit.seal();
      const entry = await app.db
        .selectFrom("audit_logs")
        .select(["before", "after"])
        .where("record_id", "=", id)
        .where("operation", "=", "update")
        .orderBy("created_at")
        .orderBy("id")
        .executeTakeFirst();
      const after = typeof entry?.after === "string" ? JSON.parse(entry.after) : entry?.after;
      expect(after.tagIds).toEqual([tags.blue, tags.green, tags.red]);
    });

    it("deleting a tag takes it out of every list; deleting a post removes its rows", async () => {
      const doomed = (await call(app, "POST", "/api/tag", { headers: ALICE, body: { name: "doomed" } })).body
        .id;
      const made = await call(app, "POST", "/api/post", {
        headers: ALICE,
        body: { title: "three", tagIds: [tags.red, doomed] },
      });
      expect((await call(app, "DELETE", `/api/tag/${doomed}`, { headers: ALICE })).status).toBe(200);
      expect((await call(app, "GET", `/api/post/${made.body.id}`, { headers: ALICE })).body.tagIds).toEqual([
        tags.red,
      ]);
      // The post's list changed: an update of the tag's delete, audited as caused by it.
      await app.audit.seal();
      const entry = await app.db
        .selectFrom("audit_logs")
        .select(["operation", "caused_by"])
        .where("record_id", "=", made.body.id)
        .where("operation", "=", "update")
        .executeTakeFirst();
      expect(entry?.caused_by).toBeTruthy();
      expect((await call(app, "DELETE", `/api/post/${made.body.id}`, { headers: ALICE })).status).toBe(200);
      expect(await junction(made.body.id)).toEqual([]);
    });

    it("bob's tag in alice's list gets the byte-identical 400 of an unknown id, and nothing is stored", async () => {
      const before = Number(
        (
          await app.db
            .selectFrom("post")
            .select((eb) => eb.fn.countAll().as("n"))
            .executeTakeFirst()
        )?.n,
      );
      const unknown = await call(app, "POST", "/api/post", {
        headers: ALICE,
        body: { title: "x", tagIds: [tags.red, "no-such-tag"] },
      });
      const bobs = await call(app, "POST", "/api/post", {
        headers: ALICE,
        body: { title: "x", tagIds: [tags.red, tags.bobs] },
      });
      expect(unknown.status).toBe(400);
      expect(bobs.text).toBe(unknown.text);
      expect(unknown.body.details).toEqual([{ path: "tagIds", message: "No tag with this id exists." }]);
      expectNoLeak(unknown.text);
      const made = await call(app, "POST", "/api/post", { headers: ALICE, body: { title: "y", tagIds: [] } });
      const patched = await call(app, "PATCH", `/api/post/${made.body.id}`, {
        headers: ALICE,
        body: { tagIds: [tags.bobs] },
      });
      expect(patched.text).toBe(unknown.text);
      expect(await junction(made.body.id)).toEqual([]);
      const after = Number(
        (
          await app.db
            .selectFrom("post")
            .select((eb) => eb.fn.countAll().as("n"))
            .executeTakeFirst()
        )?.n,
      );
      expect(after).toBe(before + 1);
    });

    it("repeats, more than maxItems and wrong types are 400s naming the field", async () => {
      const cases: unknown[] = [
        [tags.red, tags.red],
        [tags.red, tags.green, tags.blue, tags.black],
        "not-a-list",
        [1, 2],
        [{ $ne: null }],
        [""],
        ["x".repeat(300)],
        [`a\u0000b`],
        null,
      ];
      for (const tagIds of cases) {
        const res = await call(app, "POST", "/api/post", { headers: ALICE, body: { title: "bad", tagIds } });
        expect(res.status, JSON.stringify(tagIds)).toBe(400);
        expectNoLeak(res.text);
      }
      const repeated = await call(app, "POST", "/api/post", {
        headers: ALICE,
        body: { title: "bad", tagIds: [tags.red, tags.red] },
      });
      expect(repeated.body.details[0].path).toBe("tagIds");
      // A list smuggled through __proto__ or constructor is refused and never stored.
      const listing = () =>
        app.db.selectFrom("post_tagIds").select("owner").where("target", "=", tags.bobs).execute();
      const before = (await listing()).length;
      for (const raw of [
        `{"title":"proto","tagIds":[],"__proto__":{"tagIds":["${tags.bobs}"]}}`,
        `{"title":"proto","constructor":{"prototype":{"tagIds":["${tags.bobs}"]}}}`,
        `{"title":"proto","tagIds":{"__proto__":["${tags.bobs}"]}}`,
      ]) {
        const res = await call(app, "POST", "/api/post", { headers: ALICE, body: JSON.parse(raw) });
        expect(res.status, raw).toBe(400);
      }
      expect((await listing()).length).toBe(before);
    });

    it("expand=tags gives the records in the list's order, those the caller may read only", async () => {
      const made = await call(app, "POST", "/api/post", {
        headers: ALICE,
        body: { title: "expanded", tagIds: [tags.blue, tags.red] },
      });
      const read = await call(app, "GET", `/api/post/${made.body.id}?expand=tags`, { headers: ALICE });
      expect(read.body.tags.map((t: { name: string }) => t.name)).toEqual(["blue", "red"]);
      const page = await call(app, "GET", `/api/posts?expand=tags&limit=100`, { headers: ALICE });
      const found = page.body.items.find((p: { id: string }) => p.id === made.body.id);
      expect(found.tags.map((t: { id: string }) => t.id)).toEqual([tags.blue, tags.red]);
      // A list written by the server may name a tag the reader cannot read: it is left out.
      const mixed = await app.api.createPost({
        body: { ownerId: "alice", title: "mixed", tagIds: [tags.bobs, tags.green] },
        overrideAccess: true,
      });
      const shown = await call(app, "GET", `/api/post/${mixed.id}?expand=tags`, { headers: ALICE });
      expect(shown.body.tagIds).toEqual([tags.bobs, tags.green]);
      expect(shown.body.tags.map((t: { name: string }) => t.name)).toEqual(["green"]);
      expect(shown.text).not.toContain("bob's");
      const client = createClient<typeof app>({
        baseURL: "http://localhost/api",
        headers: ALICE,
        fetch: (input, init) => app.handler(new Request(input, init)),
      });
      const typed = await client.post.read(made.body.id, { expand: ["tags"] });
      const names: string[] | undefined = typed.data?.tags.map((t) => t.name);
      expect(names).toEqual(["blue", "red"]);
    });

    it("filter[tagIds][has]=<id> lists the posts whose list holds it, under the caller's rules", async () => {
      const made = await call(app, "POST", "/api/post", {
        headers: ALICE,
        body: { title: "has-black", tagIds: [tags.black, tags.green] },
      });
      const page = await call(app, "GET", `/api/posts?filter[tagIds][has]=${tags.black}&limit=100`, {
        headers: ALICE,
      });
      expect(page.status).toBe(200);
      expect(page.body.items.map((p: { id: string }) => p.id)).toContain(made.body.id);
      expect(page.body.items.every((p: { tagIds: string[] }) => p.tagIds.includes(tags.black))).toBe(true);
      // Bob's rows stay his: the same filter finds none of alice's posts for him.
      const his = await call(app, "GET", `/api/posts?filter[tagIds][has]=${tags.black}`, { headers: BOB });
      expect(his.body.items).toEqual([]);
      const viaApi = await app.api.listPosts({
        query: { where: { tagIds: { has: tags.black } } },
        headers: ALICE,
      });
      expect(viaApi.items.map((p) => p.id)).toContain(made.body.id);
      for (const bad of [
        "filter[tagIds]=x",
        "filter[tagIds][eq]=x",
        "filter[tagIds][has]=",
        `filter[tagIds][has]=${"x".repeat(300)}`,
        "filter[tagIds][has][0]=a",
        "filter[tagIds][contains]=x",
      ]) {
        const res = await call(app, "GET", `/api/posts?${bad}`, { headers: ALICE });
        expect(res.status, bad).toBe(400);
        expectNoLeak(res.text);
      }
      const injected = await call(
        app,
        "GET",
        `/api/posts?filter[tagIds][has]=${encodeURIComponent("x' or 1=1 --")}`,
        {
          headers: ALICE,
        },
      );
      expect(injected.body.items).toEqual([]);
    });

    it("app.api and the client type the list as string[]", async () => {
      const made = await app.api.createPost({ body: { title: "api", tagIds: [tags.blue] }, headers: ALICE });
      const ids: string[] = made.tagIds;
      expect(ids).toEqual([tags.blue]);
      const client = createClient<typeof app>({
        baseURL: "http://localhost/api",
        headers: ALICE,
        fetch: (input, init) => app.handler(new Request(input, init)),
      });
      const { data } = await client.post.update(made.id, { tagIds: [tags.red, tags.blue] });
      const listed: string[] | undefined = data?.tagIds;
      expect(listed).toEqual([tags.red, tags.blue]);
    });
  });

  describe("through the list", () => {
    it("expand=posts on a tag: the posts listing it that the caller may read, newest first, 10 at most", async () => {
      const made: string[] = [];
      for (let i = 0; i < 12; i++)
        made.push(
          (
            await call(app, "POST", "/api/post", {
              headers: ALICE,
              body: { title: `r${i}`, tagIds: [tags.green, tags.red] },
            })
          ).body.id,
        );
      // Bob's post naming alice's tag (written by the server): never in alice's expansion.
      const bobs = await app.api.createPost({
        body: { ownerId: "bob", title: "bob's post", tagIds: [tags.red] },
        overrideAccess: true,
      });
      const read = await call(app, "GET", `/api/tag/${tags.red}?expand=posts`, { headers: ALICE });
      expect(read.status, read.text).toBe(200);
      expect(read.body.posts).toHaveLength(10);
      expect(read.body.posts.map((p: { id: string }) => p.id)).toEqual(made.slice(2).reverse());
      // Each carries its own list, and a nested expand goes on from it.
      expect(read.body.posts[0].tagIds).toEqual([tags.green, tags.red]);
      expect(read.text).not.toContain(bobs.id);
      const nested = await call(app, "GET", `/api/tag/${tags.red}?expand=posts.tags`, { headers: ALICE });
      expect(nested.body.posts[0].tags.map((t: { name: string }) => t.name)).toEqual(["green", "red"]);
      // A page of tags: each with its own posts.
      const page = await call(app, "GET", "/api/tags?expand=posts&limit=100", { headers: ALICE });
      const green = page.body.items.find((t: { id: string }) => t.id === tags.green);
      expect(green.posts).toHaveLength(10);
      expect(page.text).not.toContain(bobs.id);
      // Hostile expansions: 400, naming nothing they should not.
      for (const bad of [
        "posts.%00",
        "__proto__",
        "posts.constructor",
        "posts.tags.posts.tags",
        "x".repeat(10_000),
        "posts,posts,posts,posts,posts,posts,posts,posts,posts,posts,posts,posts,posts,posts,posts,posts,posts",
      ]) {
        const res = await call(app, "GET", `/api/tag/${tags.red}?expand=${bad}`, { headers: ALICE });
        expect(res.status, bad.slice(0, 40)).toBe(400);
        expectNoLeak(res.text);
      }
      // Bob may not read alice's tag at all.
      const his = await call(app, "GET", `/api/tag/${tags.red}?expand=posts`, { headers: BOB });
      expect(his.status).toBe(404);
      // app.api and the client type it as the posts.
      const viaApi = await app.api.readTag({
        params: { id: tags.red },
        query: { expand: ["posts"] },
        headers: ALICE,
      });
      const titles: string[] = viaApi.posts.map((p) => p.title);
      expect(titles).toHaveLength(10);
      const client = createClient<typeof app>({
        baseURL: "http://localhost/api",
        headers: ALICE,
        fetch: (input, init) => app.handler(new Request(input, init)),
      });
      const typed = await client.tag.read(tags.red, { expand: ["posts.tags"] });
      const names: string[] | undefined = typed.data?.posts[0]?.tags.map((t) => t.name);
      expect(names).toEqual(["green", "red"]);
      for (const id of [...made, bobs.id]) await app.api.deletePost({ params: { id }, overrideAccess: true });
    });

    it("filter[tags.name] matches posts with any tag of that name the caller may read", async () => {
      const urgent = (await call(app, "POST", "/api/tag", { headers: ALICE, body: { name: "urgent" } })).body
        .id;
      const hit = await call(app, "POST", "/api/post", {
        headers: ALICE,
        body: { title: "hit", tagIds: [tags.blue, urgent] },
      });
      const miss = await call(app, "POST", "/api/post", {
        headers: ALICE,
        body: { title: "miss", tagIds: [tags.blue] },
      });
      const page = await call(app, "GET", "/api/posts?filter[tags.name]=urgent&limit=100", {
        headers: ALICE,
      });
      expect(page.status, page.text).toBe(200);
      expect(page.body.items.map((p: { id: string }) => p.id)).toEqual([hit.body.id]);
      const either = await call(app, "GET", "/api/posts?filter[tags.name][in]=urgent,blue&limit=100", {
        headers: ALICE,
      });
      expect(either.body.items.map((p: { id: string }) => p.id)).toEqual(
        expect.arrayContaining([hit.body.id, miss.body.id]),
      );
      const negated = await call(app, "GET", "/api/posts?filter[not][tags.name]=urgent&limit=100", {
        headers: ALICE,
      });
      expect(negated.status, negated.text).toBe(200);
      expect(negated.body.items.map((p: { id: string }) => p.id)).not.toContain(hit.body.id);
      expect(negated.body.items.map((p: { id: string }) => p.id)).toContain(miss.body.id);
      // A post listing bob's tag (written by the server): alice cannot match through it.
      const mixed = await app.api.createPost({
        body: { ownerId: "alice", title: "lists bob's", tagIds: [tags.bobs] },
        overrideAccess: true,
      });
      const bobsName = encodeURIComponent("bob's");
      const through = await call(app, "GET", `/api/posts?filter[tags.name]=${bobsName}`, { headers: ALICE });
      expect(through.body.items).toEqual([]);
      const unscoped = await app.api.listPosts({
        query: { where: { "tags.name": "bob's" } },
        overrideAccess: true,
      });
      expect(unscoped.items.map((p) => p.id)).toContain(mixed.id);
      expect(unscoped.items.every((p) => p.tagIds.includes(tags.bobs))).toBe(true);
      // Bob's rows stay his.
      const his = await call(app, "GET", "/api/posts?filter[tags.name]=urgent", { headers: BOB });
      expect(his.body.items).toEqual([]);
      // A field hidden on tags is refused as an unknown one, byte for byte (but its name).
      const hidden = await call(app, "GET", "/api/posts?filter[tags.secret]=x", { headers: ALICE });
      const unknown = await call(app, "GET", "/api/posts?filter[tags.secrex]=x", { headers: ALICE });
      expect(hidden.status).toBe(400);
      expect(hidden.text.replaceAll("secret", "secrex")).toBe(unknown.text);
      for (const bad of [
        `filter[tags.name]=${encodeURIComponent("x' or 1=1 --")}`,
        "filter[tags.name]=%00",
        `filter[tags.name]=${"x".repeat(10_000)}`,
        "filter[tags.name][has]=x",
        "filter[tags.name][0][1][2]=x",
        "filter[tags.tags.name]=x",
        "filter[tags.__proto__]=x",
        "filter[__proto__.name]=x",
        "filter[tags.constructor]=x",
        "filter[tags.name][__proto__]=x",
      ]) {
        const res = await call(app, "GET", `/api/posts?${bad}`, { headers: ALICE });
        expect([200, 400], bad).toContain(res.status);
        if (res.status === 200) expect(res.body.items, bad).toEqual([]);
        expectNoLeak(res.text);
      }
      const viaApi = await app.api.listPosts({ query: { where: { "tags.name": "urgent" } }, headers: ALICE });
      expect(viaApi.items.map((p) => p.id)).toEqual([hit.body.id]);
      const client = createClient<typeof app>({
        baseURL: "http://localhost/api",
        headers: ALICE,
        fetch: (input, init) => app.handler(new Request(input, init)),
      });
      const typed = await client.post.list({ where: { "tags.name": { startsWith: "urg" } } });
      expect(typed.data?.items.map((p) => p.id)).toEqual([hit.body.id]);
    });

    it("a page expands its lists, and tags their posts, in a fixed number of statements", async () => {
      const queries: string[] = [];
      const counted = makeApp(await countingKysely(dialect.name, await dialect.fresh(), queries));
      try {
        await counted.ready;
        const ids: string[] = [];
        for (let i = 0; i < 6; i++)
          ids.push((await counted.api.createTag({ body: { name: `t${i}` }, headers: ALICE })).id);
        for (let i = 0; i < 30; i++)
          await counted.api.createPost({
            body: { title: `p${i}`, tagIds: [ids[i % 6]!, ids[(i + 1) % 6]!, ids[(i + 2) % 6]!] },
            headers: ALICE,
          });
        const selects = () => queries.filter((q) => /^\s*select/i.test(q) && !q.includes("crudkit_audit"));
        const statements = async (run: () => Promise<unknown>) => {
          queries.length = 0;
          await run();
          return selects().length;
        };
        const posts = (limit: number) =>
          statements(async () => {
            const page = await counted.api.listPosts({ query: { limit, expand: ["tags"] }, headers: ALICE });
            expect(page.items.every((p) => p.tags.length === 3)).toBe(true);
          });
        const tagsOf = (limit: number) =>
          statements(async () => {
            const page = await counted.api.listTags({
              query: { limit, expand: ["posts.tags"] },
              headers: ALICE,
            });
            expect(page.items.every((t) => t.posts.length === 10)).toBe(true);
          });
        expect(await posts(5)).toBe(await posts(30));
        expect(await tagsOf(2)).toBe(await tagsOf(6));
      } finally {
        await counted.close();
      }
    });
  });

  it("realtime events and webhook events carry the list like any other field", async () => {
    const secret = `whsec_${Buffer.from("a webhook secret of 32 bytes!!!!").toString("base64")}`;
    const events = crudkit({
      database: await dialect.fresh(),
      autoMigrate: true,
      resources: [tag, post],
      realtime: true,
      log: () => {},
      plugins: [
        keys,
        webhooks({
          endpoints: [{ id: "sink", url: "http://127.0.0.1:9/hook", secret, events: ["post.*"] }],
          allowPrivateNetworks: true,
          deliver: false,
        }),
      ],
    });
    try {
      await events.ready;
      const seen: { type: string; tagIds: unknown }[] = [];
      const stop = events.realtime!.subscribe("post", { headers: ALICE }, (event) =>
        seen.push({ type: event.type, tagIds: event.record.tagIds }),
      );
      await new Promise((resolve) => setTimeout(resolve, 100));
      const red = await events.api.createTag({ body: { name: "red" }, headers: ALICE });
      const blue = await events.api.createTag({ body: { name: "blue" }, headers: ALICE });
      const made = await events.api.createPost({ body: { title: "t", tagIds: [red.id] }, headers: ALICE });
      await events.api.updatePost({
        params: { id: made.id },
        body: { tagIds: [blue.id, red.id] },
        headers: ALICE,
      });
      for (let i = 0; i < 50 && seen.length < 2; i++) await new Promise((resolve) => setTimeout(resolve, 50));
      stop();
      expect(seen).toEqual([
        { type: "create", tagIds: [red.id] },
        { type: "update", tagIds: [blue.id, red.id] },
      ]);
      const bodies = await events.db.selectFrom("webhook_events").select("body").orderBy("id").execute();
      const records = bodies.map((row) => JSON.parse(String(row.body)).data.record);
      expect(records.map((r: { tagIds: string[] }) => r.tagIds)).toEqual([[red.id], [blue.id, red.id]]);
    } finally {
      await events.close();
    }
  });
});
