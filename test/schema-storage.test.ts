import Database from "better-sqlite3";
import { ConfigError, createResource, crudkit, ownedBy, withId } from "crudkit-api";
import { Kysely, SqliteDialect } from "kysely";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { gadget } from "./fixtures.ts";
import { call, tempDatabaseUrl } from "./helpers.ts";

const pathOf = (url: string) => url.slice("file:".length);

describe("autoMigrate", () => {
  it("creates the table before the first request, with columns from the schema", async () => {
    const url = tempDatabaseUrl();
    const app = crudkit({ database: { provider: "sqlite", url }, autoMigrate: true, resources: [gadget] });
    // No await of app.ready: the handler waits for migrations by itself.
    const res = await call(app, "GET", "/api/gadgets");
    expect(res.status).toBe(200);
    const db = new Database(pathOf(url), { readonly: true });
    const columns = db.prepare(`select name, type, "notnull", pk from pragma_table_info('gadget')`).all();
    expect(columns).toEqual([
      { name: "id", type: "TEXT", notnull: 1, pk: 1 },
      { name: "label", type: "TEXT", notnull: 1, pk: 0 },
      { name: "description", type: "TEXT", notnull: 0, pk: 0 },
      { name: "note", type: "TEXT", notnull: 0, pk: 0 },
      { name: "count", type: "INTEGER", notnull: 1, pk: 0 },
      { name: "weight", type: "REAL", notnull: 1, pk: 0 },
      { name: "inStock", type: "INTEGER", notnull: 1, pk: 0 },
      { name: "kind", type: "TEXT", notnull: 1, pk: 0 },
      { name: "releasedAt", type: "TEXT", notnull: 1, pk: 0 },
      { name: "tags", type: "TEXT", notnull: 1, pk: 0 },
      { name: "dimensions", type: "TEXT", notnull: 1, pk: 0 },
      { name: "createdAt", type: "TEXT", notnull: 1, pk: 0 },
      { name: "updatedAt", type: "TEXT", notnull: 1, pk: 0 },
    ]);
    const indexes = db.prepare(`select name from pragma_index_list('gadget') where origin = 'c'`).all();
    expect(indexes).toEqual([{ name: "gadget_createdAt_id_idx" }]);
    // The enum is enforced by the database too.
    db.close();
    const writable = new Database(pathOf(url));
    expect(() =>
      writable
        .prepare(`insert into gadget (id, label, count, weight, inStock, kind, releasedAt, tags, dimensions, createdAt, updatedAt)
        values ('x', 'l', 1, 1, 1, 'huge', 'd', '[]', '{}', 'c', 'u')`)
        .run(),
    ).toThrow(/CHECK constraint/);
    writable.close();
    await app.close();
  });

  it("runs WAL with a busy timeout", async () => {
    const url = tempDatabaseUrl();
    const app = crudkit({ database: { provider: "sqlite", url }, autoMigrate: true, resources: [gadget] });
    await app.ready;
    const db = new Database(pathOf(url), { readonly: true });
    expect(db.pragma("journal_mode", { simple: true })).toBe("wal");
    db.close();
    await app.close();
  });

  it("adds a missing column to an existing table and is idempotent", async () => {
    const url = tempDatabaseUrl();
    const v1 = createResource({
      name: "item",
      schema: withId({ name: z.string() }),
      access: { create: true, read: true },
    });
    const first = crudkit({ database: { provider: "sqlite", url }, autoMigrate: true, resources: [v1] });
    const old = await call(first, "POST", "/api/item", { body: { name: "old" } });
    await first.close();

    const v2 = createResource({
      name: "item",
      schema: withId({ name: z.string(), colour: z.string().optional() }),
      access: { create: true, read: true },
    });
    for (let run = 0; run < 2; run++) {
      const second = crudkit({ database: { provider: "sqlite", url }, autoMigrate: true, resources: [v2] });
      const created = await call(second, "POST", "/api/item", { body: { name: "new", colour: "red" } });
      expect(created.body.colour).toBe("red");
      const read = await call(second, "GET", `/api/item/${old.body.id}`);
      expect(read.body).toEqual(old.body);
      await second.close();
    }
  });
});

describe("resource definitions", () => {
  it("give every record an id and timestamps even when the schema declares neither", async () => {
    const bare = createResource({
      name: "bare",
      schema: z.object({ title: z.string() }),
      access: { create: true },
    });
    const app = crudkit({
      database: { provider: "sqlite", url: tempDatabaseUrl() },
      autoMigrate: true,
      resources: [bare],
    });
    const res = await call(app, "POST", "/api/bare", { body: { title: "t" } });
    expect(Object.keys(res.body)).toEqual(["id", "title", "createdAt", "updatedAt"]);
  });

  it("leave timestamps out with timestamps: false, ordering by id", async () => {
    const log = createResource({
      name: "entry",
      schema: withId({ text: z.string() }),
      timestamps: false,
      access: { create: true, list: true },
    });
    const app = crudkit({
      database: { provider: "sqlite", url: tempDatabaseUrl() },
      autoMigrate: true,
      resources: [log],
    });
    const a = await call(app, "POST", "/api/entry", { body: { text: "a" } });
    const b = await call(app, "POST", "/api/entry", { body: { text: "b" } });
    expect(Object.keys(a.body)).toEqual(["id", "text"]);
    const list = await call(app, "GET", "/api/entries");
    expect(list.body.items.map((e: { id: string }) => e.id)).toEqual([b.body.id, a.body.id]);
  });

  it("refuse bad names, bad searchable fields and unknown providers at startup", () => {
    const schema = withId({ name: z.string(), price: z.number() });
    expect(() => createResource({ name: "bad name", schema })).toThrow(ConfigError);
    expect(() => createResource({ name: "../x", schema })).toThrow(ConfigError);
    // @ts-expect-error price is not a string field
    expect(() => createResource({ name: "p", schema, searchable: ["price"] })).toThrow(
      /Searchable field "price"/,
    );
    expect(() => createResource({ name: "p", schema: z.object({ createdAt: z.string() }) })).toThrow(
      /must be a date field/,
    );
    // @ts-expect-error not a provider
    expect(() => crudkit({ database: { provider: "oracle", url: "x" }, resources: [] })).toThrow(
      /Unknown database provider/,
    );
    expect(() =>
      crudkit({ database: { provider: "sqlite", url: ":memory:" }, resources: [], basePath: "api" }),
    ).toThrow(/basePath/);
  });

  it("refuse bad unique sets, indexes, field rules and owner fields at startup, typed where they can be", () => {
    const schema = withId({
      name: z.string(),
      price: z.number(),
      tags: z.array(z.string()),
      owner: z.string(),
    });
    // @ts-expect-error not a field
    expect(() => createResource({ name: "p", schema, unique: ["colour"] })).toThrow(
      /unique of "p" names "colour"/,
    );
    expect(() => createResource({ name: "p", schema, indexes: ["tags"] })).toThrow(/not JSON/);
    // @ts-expect-error an empty set
    expect(() => createResource({ name: "p", schema, unique: [[]] })).toThrow(/1 to 8 different fields/);
    expect(() => createResource({ name: "p", schema, unique: [["name", "name"]] })).toThrow(
      /different fields/,
    );
    expect(() =>
      // @ts-expect-error not a field
      createResource({ name: "p", schema, access: { fields: { colour: { read: false } } } }),
    ).toThrow(/access.fields names "colour"/);
    expect(() =>
      // @ts-expect-error the owner must be a field of the record
      createResource({ name: "p", schema, access: { ...ownedBy("ownerId") } }),
    ).toThrow(/owner field "ownerId"/);
    expect(() =>
      // @ts-expect-error the owner field holds a user id: a string
      createResource({ name: "p", schema, access: { ...ownedBy("price") } }),
    ).toThrow(/must be a string field/);
    const typed = () =>
      createResource({
        name: "p",
        schema,
        access: {
          // The body is the create input, the Where is over the record.
          create: ({ body }) => body?.name !== "x",
          // @ts-expect-error price is a number
          list: () => ({ price: { contains: "1" } }),
          read: () => ({ owner: "me", price: { gte: 1 } }),
        },
      });
    expect(typeof typed).toBe("function");
  });

  it("accept a Kysely instance as the database", async () => {
    const kysely = new Kysely<any>({ dialect: new SqliteDialect({ database: new Database(":memory:") }) });
    const app = crudkit({ database: kysely, autoMigrate: true, resources: [gadget] });
    expect((await call(app, "GET", "/api/gadgets")).body.pagination.total).toBe(0);
    await app.close();
  });

  it("accept a Kysely dialect as the database", async () => {
    const app = crudkit({
      database: new SqliteDialect({ database: new Database(":memory:") }),
      autoMigrate: true,
      resources: [gadget],
    });
    expect((await call(app, "GET", "/api/gadgets")).body.pagination.total).toBe(0);
    await app.close();
  });

  it("refuse a schema that is not a Zod object", () => {
    expect(() => createResource({ name: "x", schema: { shape: {} } as never })).toThrow(
      /Zod 4 object schema/,
    );
    expect(() => createResource({ name: "x", schema: z.string() as never })).toThrow(ConfigError);
  });

  it("serve under another basePath", async () => {
    const item = createResource({
      name: "item",
      schema: withId({ name: z.string() }),
      access: { list: true },
    });
    const app = crudkit({
      database: { provider: "sqlite", url: tempDatabaseUrl() },
      autoMigrate: true,
      resources: [item],
      basePath: "/v1/",
    });
    expect((await call(app, "GET", "/v1/items")).status).toBe(200);
    expect((await call(app, "GET", "/api/items")).status).toBe(404);
  });
});
