// Issue 39: JSON just inside the depth limit answered 500 on MariaDB, because crudkit stores a
// caller's JSON inside wrappers of its own (an audit entry's `changes` holds a field's value two
// levels down) and MariaDB's json_valid refuses 32 levels. The boundary, not a sample: every depth
// from 1 to the limit + 1, on SQLite, PostgreSQL and MariaDB, with audit, idempotency and realtime
// on. Each answer is 201/200 or the documented 400, what was acknowledged reads back equal, and
// every acknowledged write has its audit entry.

import { createResource, crudkit, type DatabaseOptions, MemoryStorage, withId } from "crudkit-api";
import { audit, idempotency, upload } from "crudkit-api/plugins";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { appPerDialect, forEachDialect } from "./dialects.ts";
import { call } from "./helpers.ts";

const doc = createResource({
  name: "doc",
  schema: withId({
    data: z.record(z.string(), z.unknown()).optional(),
    list: z.array(z.unknown()).optional(),
  }),
  access: { create: true, read: true, update: true, list: true },
});

const makeApp = (database: DatabaseOptions) =>
  crudkit({
    database,
    autoMigrate: true,
    resources: [doc],
    realtime: true,
    plugins: [
      audit({ access: { read: true } }),
      idempotency(),
      upload({ storage: new MemoryStorage(), access: { upload: true, read: true } }),
    ],
  });

/** An object nested `levels` deep: `{"a":{"a":…{"a":1}}}`. */
const object = (levels: number): Record<string, unknown> =>
  levels <= 1 ? { a: 1 } : { a: object(levels - 1) };
/** An array nested `levels` deep: `[[…[1]]]`. */
const array = (levels: number): unknown[] => (levels <= 1 ? [1] : [array(levels - 1)]);

/** The request depth each engine takes: 32, and 30 on MariaDB (its JSON columns stop at 31). */
const LIMITS = { sqlite: 32, postgres: 32, mysql: 30 } as const;

forEachDialect((dialect) => {
  const app = appPerDialect(dialect, makeApp);
  const limit = LIMITS[dialect.name];

  describe(`every depth from 1 to ${limit + 1}`, () => {
    it("JSON fields (object and array) on create and update, upload metadata, and an idempotent create", async () => {
      const answers = new Map<number, number>();
      const count = (status: number) => answers.set(status, (answers.get(status) ?? 0) + 1);
      const refused = (res: { status: number; body: any }) => {
        expect(res.status).toBe(400);
        expect(res.body.code).toBe("BAD_REQUEST");
        expect(res.body.message).toContain(`nested deeper than the limit of ${limit} levels`);
      };
      const acknowledged: string[] = [];
      // The body is one level: a field's value at body depth d nests d - 1 levels.
      for (let depth = 2; depth <= limit + 1; depth++) {
        const inner = depth - 1;
        for (const body of [{ data: object(inner) }, { list: array(inner) }]) {
          const created = await call(app, "POST", "/api/doc", { body });
          count(created.status);
          if (depth > limit) {
            refused(created);
            continue;
          }
          expect(created.status, `create at depth ${depth}: ${created.text}`).toBe(201);
          acknowledged.push(created.body.id);
          const read = await call(app, "GET", `/api/doc/${created.body.id}`);
          expect(read.body.data ?? read.body.list).toEqual(body.data ?? body.list);
          // An update: its audit entry's `changes` wraps the value two levels down.
          const changed = "data" in body ? { data: { b: object(inner - 1) } } : { list: [array(inner - 1)] };
          const updated = await call(app, "PATCH", `/api/doc/${created.body.id}`, { body: changed });
          count(updated.status);
          expect(updated.status, `update at depth ${depth}: ${updated.text}`).toBe(200);
          expect((await call(app, "GET", `/api/doc/${created.body.id}`)).body).toMatchObject(changed);
        }
        // Upload metadata is one level into the body, as a field's value is.
        const uploaded = await call(app, "POST", "/api/upload/file", {
          body: { file: "aGk=", filename: "a.txt", mimeType: "text/plain", metadata: object(inner) },
        });
        count(uploaded.status);
        if (depth > limit) refused(uploaded);
        else expect(uploaded.status, `upload at depth ${depth}: ${uploaded.text}`).toBe(201);
        // An idempotent create, twice: one record, the first answer again.
        const headers = { "idempotency-key": `${dialect.name}-depth-${depth}` };
        const first = await call(app, "POST", "/api/doc", { headers, body: { data: object(inner) } });
        const again = await call(app, "POST", "/api/doc", { headers, body: { data: object(inner) } });
        count(first.status);
        count(again.status);
        if (depth > limit) {
          refused(first);
          refused(again);
        } else {
          expect(first.status, `idempotent create at depth ${depth}: ${first.text}`).toBe(201);
          expect(again.body.id).toBe(first.body.id);
          acknowledged.push(first.body.id);
        }
      }
      expect([...answers.keys()].every((status) => status < 500)).toBe(true);
      // Every acknowledged create has its audit entry.
      for (const id of acknowledged) {
        const entries = await call(app, "GET", `/api/audit/logs?recordId=${id}&operation=create`);
        expect(entries.body.items, id).toHaveLength(1);
      }
    }, 120_000);
  });

  it("a maxJsonDepth the engine cannot store once wrapped is a startup error", async () => {
    if (dialect.name !== "mysql") return;
    expect(() =>
      crudkit({
        database: { provider: "mysql", url: "mysql://u:p@127.0.0.1:1/x" },
        resources: [],
        maxJsonDepth: 32,
      }),
    ).toThrow(/30 at most/);
  });
});

/** A hook that writes past what the database takes: the database's own refusal must be a 400. */
const wrapped = createResource({
  name: "wrapped",
  schema: withId({
    data: z.record(z.string(), z.unknown()).optional(),
    kind: z.enum(["a", "b"]).default("a"),
  }),
  access: { create: true, read: true },
  hooks: {
    // Server code may write anything; the database is the net under it.
    beforeCreate: ({ data }) => ({
      ...data,
      ...(data.data ? { data: { w: { w: { w: { w: data.data } } } } } : {}),
      ...(data.kind === "b" ? { kind: "zzz" as "a" } : {}),
    }),
  },
});

forEachDialect((dialect) => {
  const app = appPerDialect(dialect, (database) =>
    crudkit({ database, autoMigrate: true, resources: [wrapped], plugins: [audit()] }),
  );

  it("a value the database itself refuses (JSON depth, a CHECK) is a 400, never a 500, and nothing is stored", async () => {
    const deepBody = { data: object(28) };
    const res = await call(app, "POST", "/api/wrapped", { body: deepBody });
    if (dialect.name === "mysql") {
      expect(res.status, res.text).toBe(400);
      expect(res.body.code).toBe("VALIDATION_ERROR");
      expect(res.body.details?.[0]?.path).toBe("data");
    } else expect(res.status, res.text).toBe(201);
    const check = await call(app, "POST", "/api/wrapped", { body: { kind: "b" } });
    expect(check.status, check.text).toBe(400);
    expect(check.body.code).toBe("VALIDATION_ERROR");
    // Named where the driver names it (PostgreSQL names the constraint, not the column).
    if (dialect.name !== "postgres") expect(check.body.details?.[0]?.path).toBe("kind");
    const stored = await app.db.selectFrom("wrapped").select("id").execute();
    expect(stored).toHaveLength(dialect.name === "mysql" ? 0 : 1);
  });
});
