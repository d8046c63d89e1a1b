// Search indexes on SQLite (FTS5 trigram), PostgreSQL (pg_trgm GIN) and MariaDB (none: a scan):
// search finds exactly the rows the plain LIKE finds, including `%`, `_`, quotes and non-ASCII;
// writes keep the index in step in their own transaction; migrations create, fill, rebuild and
// drop it; a PostgreSQL role that may not create pg_trgm gets a clear message.

import { createResource, crudkit, type DatabaseOptions, withId } from "crudkit-api";
import { createClient } from "crudkit-api/client";
import { type Kysely, type SqlBool, sql } from "kysely";
import { beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { dialectProfile } from "../src/db/dialect.ts";
import { applyPlan } from "../src/db/migrations/apply.ts";
import { withMigrationLock } from "../src/db/migrations/lock.ts";
import { planMigration } from "../src/db/migrations/plan.ts";
import { resourceTable } from "../src/resource/resource-table.ts";
import { appPerDialect, type DialectName, forEachDialect } from "./dialects.ts";
import { call } from "./helpers.ts";

const fields = { name: z.string().max(200), notes: z.string().max(200).nullable().default(null) };
const note = createResource({
  name: "note",
  schema: withId(fields),
  searchable: ["name", "notes"],
  access: { create: true, read: true, update: true, delete: true, list: true },
});

const NAMES: [string, string | null][] = [
  ["100% cotton", "soft"],
  ["50_50 blend", null],
  ["5050 plain", "no underscore"],
  ["Crème brûlée", "dessert"],
  ["CRÈME fraîche", null],
  ["Straße", "street"],
  ["STRASSE", null],
  ["日本語のテキスト", "japanese"],
  ["party 🎉 time", null],
  ['say "hi" twice', "quotes"],
  ["back\\slash", null],
  ["it's mine", "apostrophe"],
  ["Widget PRO", "the widget"],
  ["plain widget", null],
  ["ab", "short"],
  ["a\tb tab", null],
];

/** Terms of 3 characters or more go through the index; shorter ones scan, as before. */
const TERMS = [
  "100%",
  "%",
  "_",
  "50_",
  "0_5",
  "%%%",
  "___",
  "crème",
  "CRÈME",
  "rème",
  "ème b",
  "ß",
  "straß",
  "Strasse",
  "日本語",
  "本語の",
  "🎉 t",
  '"hi"',
  '"',
  "\\sla",
  "\\",
  "it's",
  "' or 1=1 --",
  "widget",
  "WIDGET",
  "wi",
  "xyz-none",
  "e b",
  "a\tb",
  "ab",
  "t",
  "{name} : x",
  "NEAR(a b)",
  "widget OR cotton",
];

const ids = (items: { id: string }[]) => items.map((i) => i.id).sort();

/** The rows search found before it had an index: the same LIKE, run on the table directly. */
async function scanned(db: Kysely<any>, dialect: DialectName, term: string): Promise<string[]> {
  const pattern = `%${term.replace(/[\\%_]/g, "\\$&")}%`;
  const rows = await db
    .selectFrom("note")
    .select("id")
    .where(
      sql<SqlBool>`(${dialectProfile(dialect).likeMatch(sql.ref("name"), pattern)} or ${dialectProfile(dialect).likeMatch(sql.ref("notes"), pattern)})`,
    )
    .execute();
  return rows.map((r) => String(r.id)).sort();
}

const makeApp = (database: DatabaseOptions) => crudkit({ database, autoMigrate: true, resources: [note] });

forEachDialect((dialect) => {
  const app = appPerDialect(dialect, makeApp);
  beforeAll(async () => {
    await app.ready;
    for (const [name, notes] of NAMES) await app.api.createNote({ body: { name, notes } });
  });

  describe("search with an index", () => {
    it("finds exactly the rows the plain LIKE finds, for every term, over HTTP, app.api and the client", async () => {
      const client = createClient<typeof app>({
        baseURL: "http://localhost/api",
        fetch: (input, init) => app.handler(new Request(input, init)),
      });
      let found = 0;
      for (const term of TERMS) {
        const expected = await scanned(app.db, dialect.name, term);
        const viaApi = await app.api.listNotes({ query: { search: term, limit: 100 } });
        expect(ids(viaApi.items), `search ${JSON.stringify(term)}`).toEqual(expected);
        expect(viaApi.pagination.total).toBe(expected.length);
        const viaHttp = await call(app, "GET", `/api/notes?search=${encodeURIComponent(term)}&limit=100`);
        expect(viaHttp.status, `${term}: ${viaHttp.text}`).toBe(200);
        expect(ids(viaHttp.body.items)).toEqual(expected);
        const viaClient = await client.note.list({ search: term, limit: 100 });
        expect(ids(viaClient.data?.items ?? []), `client ${viaClient.error?.message}`).toEqual(expected);
        found += expected.length;
      }
      expect(found).toBeGreaterThan(20);
      // A NUL byte is refused before any query, as every parameter's is.
      const nul = await call(app, "GET", "/api/notes?search=wid%00get");
      expect(nul.status).toBe(400);
      expect(nul.body.code).toBe("BAD_REQUEST");
      // What each database means by "ignoring case" is unchanged: ASCII everywhere.
      expect((await app.api.listNotes({ query: { search: "widget" } })).items).toHaveLength(2);
      expect((await app.api.listNotes({ query: { search: "100%" } })).items).toHaveLength(1);
      expect((await app.api.listNotes({ query: { search: "50_" } })).items).toHaveLength(1);
    });

    it("follows every write: create, update of a searched field, delete", async () => {
      const search = async (term: string) =>
        ids((await app.api.listNotes({ query: { search: term } })).items);
      const created = await app.api.createNote({ body: { name: "zephyr kite" } });
      expect(await search("zephyr")).toEqual([created.id]);
      await app.api.updateNote({ params: { id: created.id }, body: { name: "boreas kite" } });
      expect(await search("zephyr")).toEqual([]);
      expect(await search("boreas")).toEqual([created.id]);
      await app.api.updateNote({ params: { id: created.id }, body: { notes: "gusty zephyr" } });
      expect(await search("zephyr")).toEqual([created.id]);
      await app.api.deleteNote({ params: { id: created.id } });
      expect(await search("boreas")).toEqual([]);
      expect(await search("zephyr")).toEqual([]);
    });

    it("rolls back with the write's transaction", async () => {
      await expect(
        app.db.transaction().execute(async (trx) => {
          await trx
            .insertInto("note")
            .values({
              id: "rolled-back",
              name: "quasar lamp",
              notes: null,
              createdAt: dialect.name === "sqlite" ? new Date().toISOString() : new Date(),
              updatedAt: dialect.name === "sqlite" ? new Date().toISOString() : new Date(),
            })
            .execute();
          throw new Error("abort");
        }),
      ).rejects.toThrow("abort");
      expect((await app.api.listNotes({ query: { search: "quasar" } })).items).toEqual([]);
      if (dialect.name === "sqlite") {
        const { rows } = await sql<{ n: number }>`select count(*) as n from note__search`.execute(app.db);
        expect(Number(rows[0]!.n)).toBe((await app.api.listNotes()).pagination.total);
      }
    });

    it("is what answers: SQLite consults the FTS5 table, PostgreSQL can use the trigram index", async () => {
      if (dialect.name === "sqlite") {
        // Take one row out of the index: a 3-character search no longer sees it, a 2-character one scans.
        const { id } = (await app.api.listNotes({ query: { search: "Straße" } })).items[0]!;
        await sql`delete from note__search where rowid = (select rowid from note where id = ${id})`.execute(
          app.db,
        );
        expect((await app.api.listNotes({ query: { search: "Straße" } })).items).toEqual([]);
        expect(ids((await app.api.listNotes({ query: { search: "ße" } })).items)).toEqual([id]);
        await sql`insert into note__search (rowid, name, notes) select rowid, name, notes from note where id = ${id}`.execute(
          app.db,
        );
        expect(ids((await app.api.listNotes({ query: { search: "Straße" } })).items)).toEqual([id]);
      } else if (dialect.name === "postgres") {
        const plan = await app.db.connection().execute(async (db) => {
          await sql`set enable_seqscan = off`.execute(db);
          const { rows } = await sql<{ "QUERY PLAN": string }>`explain select * from note
            where name ilike ${"%widget%"} escape '\\' or notes ilike ${"%widget%"} escape '\\'`.execute(db);
          await sql`reset enable_seqscan`.execute(db);
          return rows.map((r) => r["QUERY PLAN"]).join("\n");
        });
        expect(plan).toMatch(/note_name_trgm_idx/);
        expect(plan).toMatch(/note_notes_trgm_idx/);
      } else {
        const { rows } = await sql<{ n: number }>`select count(*) as n from information_schema.statistics
          where table_schema = database() and table_name = 'note' and index_type = 'FULLTEXT'`.execute(
          app.db,
        );
        expect(Number(rows[0]!.n)).toBe(0);
      }
    });
  });

  describe("search index migrations", () => {
    const plain = createResource({ name: "memo", schema: withId({ title: z.string(), extra: z.string() }) });
    const searched = createResource({
      name: "memo",
      schema: withId({ title: z.string(), extra: z.string() }),
      searchable: ["title"],
      access: { list: true },
    });
    const bare = createResource({ name: "memo", schema: withId({ title: z.string() }) });
    const rebuilt = createResource({
      name: "memo",
      schema: withId({ title: z.string() }),
      searchable: ["title"],
      access: { list: true },
    });

    it("back-fills an existing table, rebuilds after a SQLite table rebuild, and drops the index with the last searchable field", async () => {
      const database = await dialect.fresh();
      const before = crudkit({ database, autoMigrate: true, resources: [plain] });
      await before.ready;
      for (let i = 0; i < 300; i++)
        await before.api.createMemo({
          body: { title: `memo ${i} ${i % 7 === 0 ? "lantern" : "plain"}`, extra: "x" },
          overrideAccess: true,
        });
      await before.close();

      // Searchable now: the migration builds the index over the rows already there.
      const after = crudkit({ database, autoMigrate: true, resources: [searched] });
      await after.ready;
      const lanterns = await after.api.listMemos({ query: { search: "lantern", limit: 100 } });
      expect(lanterns.pagination.total).toBe(43);
      expect(await searchIndexes(after.db, dialect.name, "memo")).toEqual(
        { sqlite: ["memo__search"], postgres: ["memo_title_trgm_idx"], mysql: [] }[dialect.name],
      );
      if (dialect.name === "sqlite") {
        const { rows } = await sql<{ n: number }>`select count(*) as n from memo__search`.execute(after.db);
        expect(Number(rows[0]!.n)).toBe(300);
      }
      const profile = dialectProfile(dialect.name);
      const db = { kysely: after.db, dialect: dialect.name, profile, returning: profile.returning };
      expect((await planMigration(db, [resourceTable(searched)])).steps).toEqual([]);

      // Dropping a column rebuilds a SQLite table (rowids renumbered): the index is rebuilt with it.
      await withMigrationLock(db, async (locked) => {
        const plan = await planMigration(locked, [resourceTable(rebuilt)]);
        await applyPlan(locked, plan, plan.steps);
      });
      await after.close();
      const third = crudkit({ database, autoMigrate: true, resources: [rebuilt] });
      await third.ready;
      expect((await third.api.listMemos({ query: { search: "lantern", limit: 100 } })).pagination.total).toBe(
        43,
      );
      await third.api.createMemo({ body: { title: "a new lantern" }, overrideAccess: true });
      expect((await third.api.listMemos({ query: { search: "lantern", limit: 100 } })).pagination.total).toBe(
        44,
      );
      await third.close();

      // Nothing searchable any more: the index goes, and the rows stay.
      const last = crudkit({
        database,
        autoMigrate: true,
        resources: [bare],
      });
      await last.ready;
      expect(await searchIndexes(last.db, dialect.name, "memo")).toEqual([]);
      expect((await last.api.listMemos({ overrideAccess: true })).pagination.total).toBe(301);
      await last.close();
    });

    if (dialect.name === "postgres")
      it("a role that may not create pg_trgm is told what to ask for", async () => {
        const database = await dialect.fresh();
        const admin = crudkit({ database, resources: [] });
        const role = `ck_limited_${Date.now()}`;
        await sql`create role ${sql.id(role)} login password 'limited'`.execute(admin.db);
        // The role's permissions are PostgreSQL's: straight to the server (PgBouncer's entry
        // connects every client as postgres).
        const url = new URL((database as { directUrl?: string }).directUrl ?? database.url);
        url.username = role;
        url.password = "limited";
        const limited = crudkit({
          database: { provider: "postgres", url: url.href },
          autoMigrate: true,
          resources: [note],
        });
        await expect(limited.ready).rejects.toThrow(
          /need the "pg_trgm" extension, and this role may not create it .*Ask the database owner to run "create extension pg_trgm;"/,
        );
        await limited.close();
        await sql`drop role ${sql.id(role)}`.execute(admin.db).catch(() => {});
        await admin.close();
      });
  });
});

async function searchIndexes(db: Kysely<any>, dialect: DialectName, table: string): Promise<string[]> {
  const query =
    dialect === "sqlite"
      ? sql<{ name: string }>`select name from sqlite_master where name = ${`${table}__search`}`
      : dialect === "postgres"
        ? sql<{
            name: string;
          }>`select indexname as name from pg_indexes where tablename = ${table} and indexdef like '%gin_trgm_ops%'`
        : sql<{ name: string }>`select index_name as name from information_schema.statistics
            where table_schema = database() and table_name = ${table} and index_type = 'FULLTEXT'`;
  return (await query.execute(db)).rows.map((r) => r.name);
}
