// Types of expanded results: `expand` names only relations (forward, reverse, file), 3 deep at
// most, and the record says what arrived: `author: Author | null`, `comments: Comment[]`, files
// as their file record; the same for the client and app.api. Only compiled, never run against a
// server.

import { createResource, crudkit, fileRef, references, withId } from "crudkit-api";
import { createClient } from "crudkit-api/client";
import { upload } from "crudkit-api/plugins";
import { describe, expectTypeOf, it } from "vitest";
import { z } from "zod";

const company = createResource({ name: "company", schema: withId({ name: z.string() }) });
const user = createResource({
  name: "user",
  schema: withId({ name: z.string(), companyId: references("company", { onDelete: "setNull" }).nullable() }),
});
const post = createResource({
  name: "post",
  schema: withId({
    title: z.string(),
    authorId: references(user),
    editor: references("user", { onDelete: "setNull", as: "editedBy", reverse: "edited" }).nullable(),
    cover: fileRef({ mimeTypes: ["image/*"] }).optional(),
  }),
});
const comment = createResource({
  name: "comment",
  schema: withId({ body: z.string(), postId: references(post, { onDelete: "cascade" }) }),
});
const app = crudkit({
  database: { provider: "sqlite", url: ":memory:" },
  resources: [company, user, post, comment],
  plugins: [upload()],
});

type User = { id: string; name: string; companyId: string | null; createdAt: string; updatedAt: string };
type Company = { id: string; name: string; createdAt: string; updatedAt: string };
type Comment = { id: string; body: string; postId: string; createdAt: string; updatedAt: string };

describe("expanded types", () => {
  it("the client types expanded lists and reads", () => {
    const client = createClient<typeof app>({ baseURL: "http://127.0.0.1:1/api" });
    const typed = async () => {
      const list = await client.post.list({ expand: ["author", "comments"] });
      const item = list.data!.items[0]!;
      expectTypeOf(item.author).toEqualTypeOf<User | null>();
      expectTypeOf(item.comments).toEqualTypeOf<Comment[]>();
      // The id stays beside the expanded record; unexpanded relations are not there.
      expectTypeOf(item.authorId).toEqualTypeOf<string>();
      expectTypeOf(item).not.toHaveProperty("editedBy");
      const nested = await client.comment.read("x", { expand: ["post.author.company"] });
      expectTypeOf(nested.data!.post!.author!.company).toEqualTypeOf<Company | null>();
      // A file field expands in place to its file record.
      const withCover = await client.post.read("x", { expand: ["cover", "editedBy"] });
      expectTypeOf(withCover.data!.cover!.mimeType).toEqualTypeOf<string>();
      expectTypeOf(withCover.data!.editedBy).toEqualTypeOf<User | null>();
      // Reverse relations under their declared name.
      const edited = await client.user.read("x", { expand: ["edited", "posts"] });
      expectTypeOf(edited.data!.edited[0]!.title).toEqualTypeOf<string>();
      const plain = await client.post.read("x");
      expectTypeOf(plain.data!).not.toHaveProperty("author");
      // Relation filters name the referenced record's fields, typed as they are there.
      await client.post.list({
        where: { "author.name": { contains: "an" }, "editedBy.companyId": { isNull: true } },
      });
      // @ts-expect-error not a field of the author
      await client.post.list({ where: { "author.nope": "x" } });
      // @ts-expect-error a number is not a name
      await client.post.list({ where: { "author.name": 5 } });
      // @ts-expect-error not a relation of post
      await client.post.list({ expand: ["title"] });
      // @ts-expect-error deeper than 3 relations
      await client.comment.list({ expand: ["post.author.company.users"] });
      // @ts-expect-error unknown relation of the expanded resource
      await client.post.read("x", { expand: ["author.nope"] });
    };
    expectTypeOf(typed).toBeFunction();
  });

  it("app.api types expanded results the same way", () => {
    const typed = async () => {
      const page = await app.api.listPosts({ query: { expand: ["author.company", "comments"] } });
      expectTypeOf(page.items[0]!.author!.company).toEqualTypeOf<Company | null>();
      expectTypeOf(page.items[0]!.comments).toEqualTypeOf<Comment[]>();
      const one = await app.api.readUser({
        params: { id: "x" },
        query: { expand: ["company", "posts.comments"] },
      });
      expectTypeOf(one.company).toEqualTypeOf<Company | null>();
      expectTypeOf(one.posts[0]!.comments).toEqualTypeOf<Comment[]>();
      for await (const p of app.api.listCommentsPages({ query: { expand: ["post"] } }))
        expectTypeOf(p.items[0]!.post!.title).toEqualTypeOf<string>();
      // @ts-expect-error not a relation
      await app.api.listPosts({ query: { expand: ["nope"] } });
    };
    expectTypeOf(typed).toBeFunction();
  });

  it("a reverse relation declared by options goes by their name, or the referencing resource's plural", () => {
    const note = createResource({
      name: "note",
      schema: withId({
        text: z.string(),
        userId: references(user, { reverse: { limit: 5 } }),
        reviewerId: references(user, { reverse: { name: "reviewed", limit: 3 } }).nullable(),
      }),
    });
    const notes = crudkit({
      database: { provider: "sqlite", url: ":memory:" },
      resources: [company, user, note],
    });
    const client = createClient<typeof notes>({ baseURL: "http://127.0.0.1:1/api" });
    const typed = async () => {
      const read = await client.user.read("x", { expand: ["notes", "company"] });
      expectTypeOf(read.data!.notes[0]!.text).toEqualTypeOf<string>();
      expectTypeOf(read.data!.company).toEqualTypeOf<Company | null>();
      // A name given in the options object is the relation's name.
      const reviewed = await client.user.read("x", { expand: ["reviewed"] });
      expectTypeOf(reviewed.data!.reviewed[0]!.text).toEqualTypeOf<string>();
      // Before, such a relation typed as an index signature, and every name was accepted.
      // @ts-expect-error not a relation of user
      await client.user.read("x", { expand: ["nope"] });
    };
    expectTypeOf(typed).toBeFunction();
  });
});
