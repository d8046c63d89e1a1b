// The statement timeout on PostgreSQL and MariaDB: a statement that runs past it is stopped by the
// server and the request answers 503 STATEMENT_TIMEOUT at once, never a hang; the next request on
// the same pool works.

import { createResource, crudkit, type DatabaseOptions, withId } from "crudkit-api";
import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { appPerDialect, forEachDialect } from "./dialects.ts";
import { call, expectNoLeak } from "./helpers.ts";

forEachDialect(
  (dialect) => {
    const sleep = dialect.name === "postgres" ? sql`select pg_sleep(2)` : sql`select sleep(2)`;
    const slow = createResource({
      name: "slow",
      schema: withId({ text: z.string() }),
      access: { list: true },
      hooks: {
        // A statement the server must stop: it would take 2 s.
        beforeList: async ({ db, headers }) => {
          if (headers.get("x-slow") === "1") await sleep.execute(db);
          // The same in a transaction: through PgBouncer the timeout goes with each transaction.
          if (headers.get("x-slow") === "in a transaction")
            await db.transaction().execute((trx) => sleep.execute(trx));
        },
      },
    });
    const makeApp = (database: DatabaseOptions) =>
      crudkit({ database, autoMigrate: true, resources: [slow], statementTimeout: 300, log: () => {} });
    const app = appPerDialect(dialect, makeApp);

    describe("statement timeout", () => {
      it("answers 503 STATEMENT_TIMEOUT when a statement runs past it, then serves the next request", async () => {
        await app.ready;
        const started = Date.now();
        const res = await call(app, "GET", "/api/slows", { headers: { "x-slow": "1" } });
        expect(Date.now() - started).toBeLessThan(1800);
        expect(res.status).toBe(503);
        expect(res.body).toEqual({
          code: "STATEMENT_TIMEOUT",
          message:
            "The database did not answer within the statement timeout; try again, or narrow the request.",
          requestId: expect.any(String),
        });
        expectNoLeak(res.text);
        for (let i = 0; i < 12; i++) expect((await call(app, "GET", "/api/slows")).status).toBe(200);
      });

      it("a statement in a transaction is stopped the same", async () => {
        await app.ready;
        const started = Date.now();
        const res = await call(app, "GET", "/api/slows", { headers: { "x-slow": "in a transaction" } });
        expect(Date.now() - started).toBeLessThan(1800);
        expect(res.status).toBe(503);
        expect(res.body.code).toBe("STATEMENT_TIMEOUT");
        for (let i = 0; i < 12; i++) expect((await call(app, "GET", "/api/slows")).status).toBe(200);
      });

      it("refuses a statementTimeout that is not a number of milliseconds", () => {
        expect(() =>
          crudkit({ database: { provider: "sqlite", url: ":memory:" }, resources: [], statementTimeout: -1 }),
        ).toThrow(/statementTimeout must be a number of milliseconds/);
      });
    });
  },
  ["postgres", "mysql"],
);
