// Many-to-many (issue 41 §1) on SQLite, PostgreSQL and MariaDB: `referencesMany(tag)` keeps a
// post's tag ids in a junction table the migrations make; writes set the whole list in their
// transaction, in the order given; reads and lists carry it; deleting a tag takes it out of every
// list; an id of a tag the caller may not read is refused byte for byte as an unknown one; repeats
// and more than maxItems are 400s naming the field. Through HTTP, app.api and the client.

import {
  apiKey,
  createResource,
  crudkit,
  type DatabaseOptions,
  ownedBy,
  referencesMany,
  withId,
} from "crudkit-api";
import { createClient } from "crudkit-api/client";
import { audit } from "crudkit-api/plugins";
import { beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { appPerDialect, forEachDialect } from "./dialects.ts";
import { call, expectNoLeak } from "./helpers.ts";

const tag = createResource({
  name: "tag",
  schema: withId({ ownerId: z.string().max(255).optional(), name: z.string().max(50) }),
  access: ownedBy("ownerId"),
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

const makeApp = (database: DatabaseOptions) =>
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
});
