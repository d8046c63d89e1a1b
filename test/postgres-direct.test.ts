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
    beforeAll(async () => {
      db = openPostgres((await postgres.fresh()).url, () => {});
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
