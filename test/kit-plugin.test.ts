// The plugin kit is enough to write a plugin (issue 33, item 5): test/notes-plugin.ts imports
// only crudkit-api/plugin-kit, and owns a table, writes through the write pipeline (other plugins'
// hooks hear of it), lists with the list query every list reads under a row rule, and cleans up in
// a delete's transaction. On the three databases.

import { createResource, crudkit, type DatabaseOptions, withId } from "crudkit-api";
import type { CrudkitPlugin } from "crudkit-api/plugin-kit";
import { expect, it } from "vitest";
import { z } from "zod";
import { forEachDialect, servedPerDialect } from "./dialects.ts";
import { call } from "./helpers.ts";
import { notes } from "./notes-plugin.ts";

const doc = createResource({
  name: "doc",
  schema: withId({ title: z.string().max(100), ownerId: z.string().max(100) }),
  access: {
    create: true,
    delete: true,
    list: true,
    // Each caller reads her own documents only.
    read: ({ user }) => (user ? { ownerId: user.id } : false),
  },
});

const heard: string[] = [];
/** Another plugin, hearing every create: a note's too, since it goes through the write pipeline. */
const listener: CrudkitPlugin = {
  id: "listener",
  hooks: { afterCreate: (ctx) => void heard.push(ctx.resource) },
};
const makeApp = (database: DatabaseOptions) =>
  crudkit({
    database,
    autoMigrate: true,
    resources: [doc],
    plugins: [notes({ read: ({ user }) => (user ? { author: user.id } : false) }), listener],
    identify: (request) => {
      const id = request.headers.get("x-user");
      return id ? { id } : null;
    },
    log: () => {},
  });

const ANN = { "x-user": "ann" };
const BOB = { "x-user": "bob" };

forEachDialect((dialect) => {
  const served = servedPerDialect(dialect, makeApp);
  const as = (headers: Record<string, string>, method: string, path: string, body?: unknown) =>
    call(served.app, method, path, { headers, ...(body === undefined ? {} : { body }) });

  it("notes: written through the pipeline, listed under the row rule, gone with their record", async () => {
    const paper = await served.app.api.createDoc({
      body: { title: "Paper", ownerId: "ann" },
      overrideAccess: true,
    });
    heard.length = 0;
    const first = await as(ANN, "POST", "/api/notes", { resource: "doc", recordId: paper.id, text: "first" });
    expect(first.status, first.text).toBe(201);
    expect(heard).toEqual(["note"]);
    await as(ANN, "POST", "/api/notes", { resource: "doc", recordId: paper.id, text: "second" });
    // Bob cannot read Ann's document: to him it does not exist.
    expect(
      (await as(BOB, "POST", "/api/notes", { resource: "doc", recordId: paper.id, text: "x" })).status,
    ).toBe(404);

    const page = await as(ANN, "GET", `/api/notes?filter[recordId]=${paper.id}&limit=1`);
    expect(page.status, page.text).toBe(200);
    expect(page.body.items.map((n: { text: string }) => n.text)).toEqual(["second"]);
    expect(page.body.pagination.total).toBe(2);
    expect((await as(BOB, "GET", "/api/notes")).body.items).toEqual([]);
    expect((await as({}, "GET", "/api/notes")).status).toBe(403);

    // The list query's own errors, as on every list.
    expect((await as(ANN, "GET", "/api/notes?filter[text]=first")).status).toBe(400);
    expect((await as(ANN, "GET", "/api/notes?filter[createdAt][gt]=yesterday")).status).toBe(400);
    expect((await as(ANN, "GET", "/api/notes?limit=0")).status).toBe(400);
    expect(
      (await as(ANN, "POST", "/api/notes", { resource: "doc", recordId: paper.id, text: "x".repeat(2001) }))
        .status,
    ).toBe(400);

    // Deleting the record deletes its notes, in the same transaction.
    expect((await as(ANN, "DELETE", `/api/doc/${paper.id}`)).status).toBe(200);
    expect((await as(ANN, "GET", `/api/notes?filter[recordId]=${paper.id}`)).body.items).toEqual([]);
  });
});
