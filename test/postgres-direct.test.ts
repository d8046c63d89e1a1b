// PostgreSQL statements outside a transaction run straight on pg's pool (src/db/postgres.ts),
// skipping Kysely's connection handling. These pin what that path must keep from Kysely's: a
// transaction's statements stay on its connection, a failed statement gives its connection back
// usable, and writes report the rows they changed.

import { type Kysely, sql } from "kysely";
import { afterAll, beforeAll, expect, it } from "vitest";
import { directPath } from "../src/db/direct-path.ts";
import { openPostgres } from "../src/db/engines/postgres/driver.ts";
import { compileTemplate, firstRow, runTemplate, slot } from "../src/db/query-template.ts";
import { forEachDialect } from "./dialects.ts";

forEachDialect(
  (postgres) => {
    let db: Kysely<any>;
    let url: string;
    beforeAll(async () => {
      url = (await postgres.fresh()).url;
      db = openPostgres(url, () => {});
      await sql`create table "item" ("id" integer primary key, "n" integer not null)`.execute(db);
    });
    afterAll(() => db?.destroy());

    const backend = compileTemplate(db0().selectNoFrom(sql<number>`pg_backend_pid()`.as("pid")));
    const divide = compileTemplate(db0().selectNoFrom(sql<number>`1 / ${slot("by")}::integer`.as("q")));
    const insert = compileTemplate(
      db0()
        .insertInto("item")
        .values({ id: slot("id"), n: 0 }),
    );
    const bump = compileTemplate(db0().updateTable("item").set({ n: sql`"n" + 1` }));
    const count = compileTemplate(db0().selectFrom("item").select(sql<number>`count(*)::integer`.as("c")));
    const pid = async (on: Kysely<any>) => (await firstRow<{ pid: number }>(on, backend, {}))!.pid;

    it("statements run straight on the pool, but never from a transaction or a pinned connection", async () => {
      await pid(db);
      expect(directPath(db)).toBeDefined();
      await db.transaction().execute(async (trx) => expect(directPath(trx)).toBeUndefined());
      await db.connection().execute(async (connection) => expect(directPath(connection)).toBeUndefined());
    });

    it("a transaction's statements run on its connection: they see its rows, others do not", async () => {
      await db
        .transaction()
        .execute(async (trx) => {
          await runTemplate(trx, insert, { id: 1 });
          expect((await firstRow<{ c: number }>(trx, count, {}))!.c).toBe(1);
          expect((await firstRow<{ c: number }>(db, count, {}))!.c).toBe(0);
          throw new Error("rolled back on purpose");
        })
        .catch(() => {});
      expect((await firstRow<{ c: number }>(db, count, {}))!.c).toBe(0);
    });

    it("a failed statement rejects with the driver's error and gives its connection back usable", async () => {
      const before = await pid(db);
      await expect(firstRow(db, divide, { by: 0 })).rejects.toMatchObject({ code: "22012" });
      // The pool hands out its most recently returned connection: the same one, not a new one.
      expect(await pid(db)).toBe(before);
      expect((await firstRow<{ q: number }>(db, divide, { by: 1 }))!.q).toBe(1);
    });

    it("writes report the rows they changed, as through Kysely", async () => {
      await runTemplate(db, insert, { id: 2 });
      await runTemplate(db, insert, { id: 3 });
      expect((await runTemplate(db, bump, {})).numAffectedRows).toBe(2n);
      expect((await runTemplate(db, count, {})).numAffectedRows).toBeUndefined();
      const inTransaction = await db.transaction().execute((trx) => runTemplate(trx, bump, {}));
      expect(inTransaction.numAffectedRows).toBe(2n);
    });

    it("reads are prepared once per connection, by name, and run on the plan PostgreSQL keeps", async () => {
      const byId = compileTemplate(db0().selectFrom("item").selectAll().where("id", "=", slot("id")));
      await runTemplate(db, insert, { id: 10 });
      for (let i = 0; i < 8; i++) expect(await firstRow(db, byId, { id: 10 })).toEqual({ id: 10, n: 0 });
      const prepared = compileTemplate(
        db0()
          .selectFrom("pg_prepared_statements")
          .select(["name", "generic_plans"])
          .where("statement", "=", slot("text")),
      );
      // The pool hands out its most recently returned connection: the one that ran the reads.
      const row = await firstRow<{ name: string; generic_plans: string }>(db, prepared, {
        text: byId.compiled.sql,
      });
      expect(row?.name).toMatch(/^crudkit_[\w-]{24}$/);
      expect(Number(row?.generic_plans)).toBeGreaterThan(0);
      // Writes go unnamed: a failed one must not be sent twice.
      const writes = await sql<{ n: number }>`select count(*)::integer as n from pg_prepared_statements
        where statement ilike 'insert%' or statement ilike 'update%'`.execute(db);
      expect(writes.rows[0]!.n).toBe(0);
    });

    it("a prepared read whose table another client altered runs again on a fresh connection", async () => {
      const all = compileTemplate(db0().selectFrom("item").selectAll().where("id", "=", slot("id")));
      await runTemplate(db, insert, { id: 11 });
      for (let i = 0; i < 8; i++) await firstRow(db, all, { id: 11 });
      const before = await pid(db);
      // Another instance's migration: `select *` now answers another row type than the one planned.
      const migrator = openPostgres(url, () => {});
      await sql`alter table "item" add column "note" text`
        .execute(migrator)
        .finally(() => migrator.destroy());
      expect(await firstRow(db, all, { id: 11 })).toEqual({ id: 11, n: 0, note: null });
      // The connection holding the stale statement was dropped, not handed to the next read
      // (through PgBouncer the next client connection may be given the same server session).
      if (!postgres.label?.includes("PgBouncer")) expect(await pid(db)).not.toBe(before);
      expect(await firstRow(db, all, { id: 11 })).toEqual({ id: 11, n: 0, note: null });
    });

    it("a closed pool's statements go through Kysely", async () => {
      const other = openPostgres(process.env.CRUDKIT_TEST_POSTGRES_URL!, () => {});
      await pid(other);
      await other.destroy();
      expect(directPath(other)).toBeUndefined();
    });
  },
  ["postgres"],
);

/** A Kysely instance that only builds queries (templates are compiled once, before any test runs). */
function db0(): Kysely<any> {
  builder ??= openPostgres("postgres://127.0.0.1/unused", () => {});
  return builder;
}
let builder: Kysely<any> | undefined;
