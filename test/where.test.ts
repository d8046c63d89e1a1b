// The filter language on SQLite, PostgreSQL and MariaDB: every operator on every field type,
// and/or/not, values read from text, and hostile filters refused with a 400 that names them.

import { APIError, createResource, crudkit, type DatabaseOptions, withId } from "crudkit-api";
import { createQueryId, PostgresQueryCompiler } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { dialectProfile } from "../src/db/dialect.ts";
import { compileTemplate, runTemplate } from "../src/db/query-template.ts";
import { type FilterField, mapFieldConditions, parseWhere, type Where } from "../src/query/where.ts";
import { compileWhere } from "../src/query/where-sql.ts";
import { forEachDialect } from "./dialects.ts";

const item = createResource({
  name: "item",
  schema: withId({
    label: z.string(),
    kind: z.enum(["small", "large"]),
    count: z.number().int(),
    weight: z.number(),
    inStock: z.boolean(),
    releasedAt: z.date(),
    note: z.string().optional(),
  }),
  access: { create: true },
});

type Item = {
  label: string;
  kind: "small" | "large";
  count: number;
  weight: number;
  inStock: boolean;
  releasedAt: Date;
  note?: string;
};

const FIELDS = new Map<string, FilterField>(
  [
    { name: "label", kind: "string" },
    { name: "kind", kind: "enum", enumValues: ["small", "large"] },
    { name: "count", kind: "integer" },
    { name: "weight", kind: "number" },
    { name: "inStock", kind: "boolean" },
    { name: "releasedAt", kind: "date" },
    { name: "note", kind: "string" },
  ].map((f) => [f.name, f as FilterField]),
);

const ROWS = [
  {
    label: "Alpha",
    kind: "small",
    count: 1,
    weight: 1.5,
    inStock: true,
    releasedAt: "2024-01-01",
    note: "x",
  },
  { label: "beta", kind: "large", count: 2, weight: 2.5, inStock: false, releasedAt: "2024-02-01" },
  {
    label: "Gamma%",
    kind: "small",
    count: 3,
    weight: 3.5,
    inStock: true,
    releasedAt: "2024-03-01",
    note: "y",
  },
  { label: "delta_1", kind: "large", count: 4, weight: 4.5, inStock: false, releasedAt: "2024-04-01" },
  {
    label: "Al\\pha",
    kind: "small",
    count: 5,
    weight: -1,
    inStock: true,
    releasedAt: "2023-12-31",
    note: "z",
  },
] as const;

/** Each filter with the labels it must find, in label order by bytes. */
const CASES: [Where<Item>, string[]][] = [
  [{ label: "beta" }, ["beta"]],
  [{ label: { eq: "Beta" } }, []],
  [{ label: { ne: "beta" } }, ["Al\\pha", "Alpha", "Gamma%", "delta_1"]],
  [{ label: { in: ["Alpha", "beta"] } }, ["Alpha", "beta"]],
  [{ label: { nin: ["Alpha", "beta"] } }, ["Al\\pha", "Gamma%", "delta_1"]],
  [{ label: { gt: "a" } }, ["beta", "delta_1"]],
  [{ label: { lte: "Alpha" } }, ["Al\\pha", "Alpha"]],
  [{ label: { contains: "AL" } }, ["Al\\pha", "Alpha"]],
  [{ label: { contains: "%" } }, ["Gamma%"]],
  [{ label: { contains: "_" } }, ["delta_1"]],
  [{ label: { contains: "\\" } }, ["Al\\pha"]],
  [{ label: { startsWith: "g" } }, ["Gamma%"]],
  [{ label: { endsWith: "_1" } }, ["delta_1"]],
  [{ label: { contains: "'; drop table item; --" } }, []],
  [{ kind: "small" }, ["Al\\pha", "Alpha", "Gamma%"]],
  [{ kind: { ne: "small" } }, ["beta", "delta_1"]],
  [{ kind: { in: ["large"] } }, ["beta", "delta_1"]],
  [{ kind: { gt: "large" } }, ["Al\\pha", "Alpha", "Gamma%"]],
  [{ count: { gt: 2 } }, ["Al\\pha", "Gamma%", "delta_1"]],
  [{ count: { gte: 2, lt: 4 } }, ["Gamma%", "beta"]],
  [{ count: { lte: 1 } }, ["Alpha"]],
  [{ count: { in: [1, 5] } }, ["Al\\pha", "Alpha"]],
  [{ count: { nin: [1, 5], ne: 3 } }, ["beta", "delta_1"]],
  [{ weight: { lt: 0 } }, ["Al\\pha"]],
  [{ weight: { gte: 2.5, lte: 3.5 } }, ["Gamma%", "beta"]],
  [{ inStock: true }, ["Al\\pha", "Alpha", "Gamma%"]],
  [{ inStock: { ne: true } }, ["beta", "delta_1"]],
  [{ inStock: { in: [false] } }, ["beta", "delta_1"]],
  [{ releasedAt: { gte: "2024-02-01" } }, ["Gamma%", "beta", "delta_1"]],
  [{ releasedAt: { lt: new Date("2024-01-01T00:00:00Z") } }, ["Al\\pha"]],
  [{ releasedAt: "2024-03-01T00:00:00Z" }, ["Gamma%"]],
  [{ releasedAt: { in: ["2024-01-01", "2024-04-01"] } }, ["Alpha", "delta_1"]],
  [{ note: { isNull: true } }, ["beta", "delta_1"]],
  [{ note: { isNull: false } }, ["Al\\pha", "Alpha", "Gamma%"]],
  [{ note: null }, ["beta", "delta_1"]],
  [{ or: [{ count: 1 }, { kind: "large" }] }, ["Alpha", "beta", "delta_1"]],
  [{ not: { kind: "small" } }, ["beta", "delta_1"]],
  [{ not: { or: [{ count: 1 }, { count: 2 }] } }, ["Al\\pha", "Gamma%", "delta_1"]],
  [
    { and: [{ count: { gte: 2 } }, { or: [{ inStock: true }, { label: { startsWith: "d" } }] }] },
    ["Al\\pha", "Gamma%", "delta_1"],
  ],
  [{}, ["Al\\pha", "Alpha", "Gamma%", "beta", "delta_1"]],
];

/** Filters that must be refused, with the path the 400 names. */
const HOSTILE: [unknown, string][] = [
  [{ nope: 1 }, "filter.nope"],
  [JSON.parse('{"__proto__":{"eq":1}}'), "filter.__proto__"],
  [{ "label; drop table item": "a" }, "filter.?"],
  [{ label: { like: "a" } }, "filter.label.like"],
  [{ count: { contains: "1" } }, "filter.count.contains"],
  [{ inStock: { gt: true } }, "filter.inStock.gt"],
  [{ kind: { contains: "sm" } }, "filter.kind.contains"],
  [{ count: "abc" }, "filter.count.eq"],
  [{ count: 1.5 }, "filter.count.eq"],
  [{ weight: Number.POSITIVE_INFINITY }, "filter.weight.eq"],
  [{ kind: "huge" }, "filter.kind.eq"],
  [{ releasedAt: "yesterday" }, "filter.releasedAt.eq"],
  [{ label: "a\0b" }, "filter.label.eq"],
  [{ label: "\ud800" }, "filter.label.eq"],
  [{ label: { contains: "" } }, "filter.label.contains"],
  [{ label: { in: Array.from({ length: 10_000 }, (_, i) => `v${i}`) } }, "filter.label.in"],
  [{ label: { in: "a,b" } }, "filter.label.in"],
  [{ note: { isNull: "yes" } }, "filter.note.isNull"],
  [{ and: "notalist" }, "filter.and"],
  [{ or: [1] }, "filter.or.0"],
  [[{ label: "a" }], "filter"],
  [{ label: { eq: { nested: 1 } } }, "filter.label.eq"],
];

forEachDialect((dialect) => {
  let app: ReturnType<typeof makeApp>;
  const makeApp = (database: DatabaseOptions) => crudkit({ database, autoMigrate: true, resources: [item] });
  beforeAll(async () => {
    app = makeApp(await dialect.fresh());
    for (const row of ROWS) await app.api.createItem({ body: row });
  });
  afterAll(() => app?.close());

  const labels = async (where: unknown, fromText = false, fixed = false): Promise<string[]> => {
    const parsed = parseWhere(where, FIELDS, { fromText });
    // A rule's own values (memberOf's roles) are marked `fixed`: written into the SQL when safe.
    const condition = parsed && fixed ? mapFieldConditions(parsed, (c) => ({ ...c, fixed: true })) : parsed;
    let query = app.db.selectFrom("item").select("label");
    let values: Record<string, unknown> = {};
    if (condition) {
      const compiled = compileWhere(condition, FIELDS, dialectProfile(dialect.name));
      query = query.where(compiled.build());
      values = compiled.values;
    }
    const { rows } = await runTemplate<{ label: string }>(app.db, compileTemplate(query), values);
    return rows.map((r) => r.label).sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
  };

  describe("filters", () => {
    it("every operator on every field type, and/or/not", async () => {
      for (const [where, expected] of CASES)
        expect(await labels(where), JSON.stringify(where)).toEqual(expected);
    });

    it("reads numbers, booleans and lists from query-string text", async () => {
      expect(await labels({ count: { in: "1,5" }, inStock: "true" }, true)).toEqual(["Al\\pha", "Alpha"]);
      expect(await labels({ or: { 0: { count: "1" }, 1: { weight: { lt: "0" } } } }, true)).toEqual([
        "Al\\pha",
        "Alpha",
      ]);
      expect(await labels({ note: { isNull: "true" } }, true)).toEqual(["beta", "delta_1"]);
    });

    it("an empty set from server code is a set: `in: []` matches nothing, `nin: []` everything (issue 45)", async () => {
      expect(await labels({ label: { in: [] } })).toEqual([]);
      expect((await labels({ label: { nin: [] } })).length).toBeGreaterThan(0);
      expect(await labels({ or: [{ label: { in: [] } }, { label: "Alpha" }] })).toEqual(["Alpha"]);
    });

    it("a rule's own values (`fixed`) match as bound ones do, hostile ones included (issue 45)", async () => {
      const sets: unknown[] = [
        { kind: { in: ["small"] } },
        { kind: { nin: ["small"] } },
        { label: { in: ["Alpha", "beta", "ALPHA"] } },
        { label: { in: ["Al\\pha", "Gamma%", "delta_1", "x' or '1'='1"] } },
        { label: { nin: ["Alpha", "it's", "a".repeat(101)] } },
      ];
      for (const where of sets)
        expect(await labels(where, false, true), JSON.stringify(where)).toEqual(await labels(where));
    });

    it("refuses hostile and malformed filters with a 400 naming them; the table is untouched", async () => {
      for (const [where, path] of HOSTILE) {
        let error: unknown;
        try {
          await labels(where);
        } catch (e) {
          error = e;
        }
        expect(error, JSON.stringify(where).slice(0, 80)).toBeInstanceOf(APIError);
        expect((error as APIError).code).toBe("BAD_REQUEST");
        expect((error as APIError).details?.[0]?.path, JSON.stringify(where).slice(0, 80)).toBe(path);
      }
      let deep: unknown = { label: "a" };
      for (let i = 0; i < 1000; i++) deep = { not: deep };
      await expect(labels(deep)).rejects.toMatchObject({ code: "BAD_REQUEST" });
      const long = { or: Array.from({ length: 65 }, (_, i) => ({ count: i })) };
      await expect(labels(long)).rejects.toMatchObject({ code: "BAD_REQUEST" });
      expect(await labels({})).toHaveLength(5);
    });
  });
});

describe("Where types", () => {
  it("allow each operator only where it fits the field's type", () => {
    const typed: Where<Item>[] = [
      { label: { contains: "a", gt: "b" } },
      { releasedAt: { gte: "2024-01-01", lt: new Date() } },
      { count: { in: [1, 2] } },
      { note: null },
      // @ts-expect-error text matching is for strings
      { count: { contains: "1" } },
      // @ts-expect-error no ordering on booleans
      { inStock: { gt: true } },
      // @ts-expect-error a number field takes numbers
      { count: "1" },
      // @ts-expect-error only fields of the record
      { nope: 1 },
      // @ts-expect-error a required field is never null
      { label: null },
    ];
    expect(typed).toHaveLength(9);
  });
});

describe("compiled filters", () => {
  it("write a rule's own safe texts into the SQL, and bind every other value, hostile ones too", () => {
    const fixed = (where: unknown) =>
      compileWhere(
        mapFieldConditions(parseWhere(where, FIELDS)!, (c) => ({ ...c, fixed: true })),
        FIELDS,
        dialectProfile("postgres"),
      );
    const roles = fixed({ label: { in: ["owner", "admin"] } });
    expect(roles.values).toEqual({});
    const compiler = new PostgresQueryCompiler();
    expect(compiler.compileQuery(roles.build().toOperationNode() as never, createQueryId()).sql).toContain(
      `in ('owner', 'admin')`,
    );
    expect(roles.shape).not.toBe(fixed({ label: { in: ["owner", "member"] } }).shape);
    // Built as a rule's answer is, past the checks of parseWhere (which refuses a NUL first).
    for (const hostile of ["x' or '1'='1", "back\\slash", "nul\u0000", "a".repeat(101), "semi;colon", ""]) {
      const condition = {
        kind: "field",
        field: "label",
        op: "in",
        value: ["owner", hostile],
        fixed: true,
      } as const;
      expect(compileWhere(condition, FIELDS, dialectProfile("mysql")).values).toEqual({
        w0: "owner",
        w1: hostile,
      });
    }
    // Not a text: bound as ever.
    expect(fixed({ count: { in: [1, 2] } }).values).toEqual({ w0: 1, w1: 2 });
  });

  it("share a shape when only values differ, and bind every value as a parameter", () => {
    const shape = (where: unknown) =>
      compileWhere(parseWhere(where, FIELDS)!, FIELDS, dialectProfile("postgres"));
    const a = shape({ label: { contains: "x" }, count: { in: [1, 2] } });
    const b = shape({ label: { contains: "y" }, count: { in: [3, 4] } });
    expect(a.shape).toBe(b.shape);
    expect(shape({ count: { in: [1, 2, 3] } }).shape).not.toBe(shape({ count: { in: [1, 2] } }).shape);
    expect(b.values).toEqual({ w0: "%y%", w1: 3, w2: 4 });
  });
});
