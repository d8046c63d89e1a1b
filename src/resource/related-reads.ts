// The two reads behind `expand`, each one statement for a whole page of parents:
//
// (`*` is the caller's columns when she may not read every field.)
//
//   byIds:     SELECT * FROM "user" WHERE "id" IN (?, ?, …) [AND (<read rule>)]
//   byParents: SELECT <columns> FROM (
//                SELECT *, row_number() OVER (PARTITION BY "postId" ORDER BY "createdAt" DESC, "id" DESC) AS "ck_rank"
//                FROM "comment" WHERE "postId" IN (?, ?, …) [AND (<read rule>)]
//              ) AS "ranked" WHERE "ck_rank" <= 10 ORDER BY "ck_rank"
//   one parent: SELECT * FROM "comment" WHERE "postId" = ? [AND (<read rule>)]
//               ORDER BY "createdAt" DESC, "id" DESC LIMIT 10   (an index walk, no window)
//   byListers: the same window over the records whose list (a junction table) names a parent:
//              SELECT <columns>, "ck_parent" FROM (
//                SELECT "ck_r".*, "ck_j"."target" AS "ck_parent", row_number() OVER (PARTITION BY
//                  "ck_j"."target" ORDER BY "ck_r"."createdAt" DESC, "ck_r"."id" DESC) AS "ck_rank"
//                FROM "post_tagIds" AS "ck_j"
//                JOIN (SELECT * FROM "post" [WHERE <read rule>]) AS "ck_r" ON "ck_r"."id" = "ck_j"."owner"
//                WHERE "ck_j"."target" IN (?, ?, …)
//              ) AS "ranked" WHERE "ck_rank" <= 10 ORDER BY "ck_rank"
//              (the rule inside its own SELECT, where its column names can only mean the record's)
//
// Statements are compiled once per shape (how many ids, which rule) and then only bound. The
// limit is the relation's, a constant: written into the SQL, SQLite reads the 2 rows of a parent
// in 9 µs instead of 17 µs with a bound LIMIT.

import { type Kysely, sql } from "kysely";
import { compileTemplate, type QueryTemplate, runTemplate, slot } from "../db/query-template.ts";
import type { Condition } from "../query/where.ts";
import type { CompiledWhere } from "../query/where-sql.ts";
import {
  type CompileGate,
  decodeVisible,
  gateMarkers,
  selectVisible,
  selectVisibleFrom,
  visibleColumns,
} from "./visible-columns.ts";

type Row = Record<string, unknown>;

export interface ChildOrder {
  limit: number;
  sortBy: string;
  sortOrder: "asc" | "desc";
}

export interface RelatedReads {
  /** The records with these ids, within `scope`, without the `hidden` fields (not selected). */
  byIds(
    db: Kysely<any>,
    ids: readonly string[],
    scope?: Condition,
    hidden?: ReadonlySet<string>,
  ): Promise<Row[]>;
  /** Up to `order.limit` records per parent whose `field` holds one of `parentIds`, in order. */
  byParents(
    db: Kysely<any>,
    field: string,
    parentIds: readonly string[],
    order: ChildOrder,
    scope?: Condition,
    /** Fields not selected (`field` stays: the records are grouped by it). */
    hidden?: ReadonlySet<string>,
  ): Promise<Row[]>;
  /** Up to `order.limit` records per parent whose list (kept in `junction`) names one of `parentIds`. */
  byListers(
    db: Kysely<any>,
    junction: string,
    parentIds: readonly string[],
    order: ChildOrder,
    scope?: Condition,
    hidden?: ReadonlySet<string>,
  ): Promise<{ parent: string; record: Row }[]>;
}

const TEMPLATE_LIMIT = 256;

/** Ids bound in one statement: well within every engine's limit on bound values. */
export const IDS_PER_STATEMENT = 500;

/** What the reads of one table are made from. */
interface TableReads {
  builder: Kysely<any>;
  table: string;
  columns: readonly string[];
  compileScope: (scope: Condition) => CompiledWhere;
  compileGate: CompileGate;
  fromRow: (row: Row) => Row;
}

export function createRelatedReads(
  builder: Kysely<any>,
  table: string,
  columns: readonly string[],
  compileScope: (scope: Condition) => CompiledWhere,
  compileGate: CompileGate,
  fromRow: (row: Row) => Row,
): RelatedReads {
  const templates = new Map<string, QueryTemplate>();
  const cached = (key: string, make: () => QueryTemplate) => {
    let template = templates.get(key);
    if (!template) {
      template = make();
      if (templates.size < TEMPLATE_LIMIT) templates.set(key, template);
    }
    return template;
  };
  /** `ids` as slots `i0…`, and the values to bind. */
  const idSlots = (ids: readonly string[], values: Row) =>
    ids.map((id, i) => {
      values[`i${i}`] = id;
      return slot(`i${i}`);
    });

  return {
    async byIds(db, ids, scope, hidden) {
      if (ids.length === 0) return [];
      const rule = scope ? compileScope(scope) : undefined;
      const visible = visibleColumns(columns, hidden, ["id"], compileGate);
      const values: Row = Object.assign({}, rule?.values, visible.values);
      const slots = idSlots(ids, values);
      const template = cached(`ids:${ids.length}:${rule?.shape ?? ""}:${visible.key}`, () => {
        let query = selectVisible(builder.selectFrom(table), visible).where("id", "in", slots);
        if (rule) query = query.where(rule.build());
        return compileTemplate(query);
      });
      return (await runTemplate<Row>(db, template, values)).rows.map((row) =>
        decodeVisible(row, visible, fromRow),
      );
    },
    async byParents(db, field, parentIds, order, scope, hidden) {
      if (parentIds.length === 0) return [];
      const rule = scope ? compileScope(scope) : undefined;
      const visible = visibleColumns(columns, hidden, ["id", field], compileGate);
      const values: Row = Object.assign({}, rule?.values, visible.values);
      const slots = idSlots(parentIds, values);
      const key = `parents:${field}:${parentIds.length}:${order.sortBy}:${order.sortOrder}:${order.limit}:${rule?.shape ?? ""}:${visible.key}`;
      const template = cached(key, () => {
        if (parentIds.length === 1) {
          let query = selectVisible(builder.selectFrom(table), visible)
            .where(field, "=", slots[0])
            .orderBy(order.sortBy, order.sortOrder)
            .orderBy("id", order.sortOrder)
            .limit(sql.lit(order.limit));
          if (rule) query = query.where(rule.build());
          return compileTemplate(query);
        }
        const direction = sql.raw(order.sortOrder);
        const rank = sql<number>`row_number() over (partition by ${sql.ref(field)} order by ${sql.ref(order.sortBy)} ${direction}, ${sql.ref("id")} ${direction})`;
        let inner = builder
          .selectFrom(table)
          .selectAll()
          .select([rank.as("ck_rank"), ...gateMarkers(visible)])
          .where(field, "in", slots);
        if (rule) inner = inner.where(rule.build());
        return compileTemplate(
          builder
            .selectFrom(inner.as("ranked"))
            .select(selectVisibleFrom("ranked", columns, visible) as any)
            .where("ranked.ck_rank", "<=", sql.lit(order.limit))
            .orderBy("ranked.ck_rank"),
        );
      });
      return (await runTemplate<Row>(db, template, values)).rows.map((row) =>
        decodeVisible(row, visible, fromRow),
      );
    },
    byListers: listersRead({ builder, table, columns, compileScope, compileGate, fromRow }, cached, idSlots),
  };
}

/** `byListers`: the records whose list (a junction table) names the parents, ranked per parent. */
function listersRead(
  { builder, table, columns, compileScope, compileGate, fromRow }: TableReads,
  cached: (key: string, make: () => QueryTemplate) => QueryTemplate,
  idSlots: (ids: readonly string[], values: Row) => ReturnType<typeof slot>[],
): RelatedReads["byListers"] {
  return async (db, junction, parentIds, order, scope, hidden) => {
    if (parentIds.length === 0) return [];
    const rule = scope ? compileScope(scope) : undefined;
    const visible = visibleColumns(columns, hidden, ["id"], compileGate);
    const values: Row = Object.assign({}, rule?.values, visible.values);
    const slots = idSlots(parentIds, values);
    const key = `listers:${junction}:${parentIds.length}:${order.sortBy}:${order.sortOrder}:${order.limit}:${rule?.shape ?? ""}:${visible.key}`;
    const template = cached(key, () => {
      let records = builder
        .selectFrom(table)
        .selectAll()
        .select(gateMarkers(visible) as any);
      if (rule) records = records.where(rule.build());
      const direction = sql.raw(order.sortOrder);
      const listed = builder
        .selectFrom(`${junction} as ck_j`)
        .innerJoin(records.as("ck_r"), "ck_r.id", "ck_j.owner");
      if (parentIds.length === 1)
        // One parent: its first records in order, no window to rank them all by.
        return compileTemplate(
          listed
            .select([
              ...(selectVisibleFrom("ck_r", columns, visible) as any[]),
              sql.ref("ck_j.target").as("ck_parent"),
            ])
            .where("ck_j.target", "=", slots[0]!)
            .orderBy(sql`${sql.ref(`ck_r.${order.sortBy}`)} ${direction}`)
            .orderBy(sql`${sql.ref("ck_r.id")} ${direction}`)
            .limit(sql.lit(order.limit)),
        );
      const rank = sql<number>`row_number() over (partition by ${sql.ref("ck_j.target")} order by ${sql.ref(`ck_r.${order.sortBy}`)} ${direction}, ${sql.ref("ck_r.id")} ${direction})`;
      const inner = listed
        .selectAll("ck_r")
        .select([sql.ref("ck_j.target").as("ck_parent"), rank.as("ck_rank")])
        .where("ck_j.target", "in", slots);
      return compileTemplate(
        builder
          .selectFrom(inner.as("ranked"))
          .select([
            ...(selectVisibleFrom("ranked", columns, visible) as any[]),
            sql.ref("ranked.ck_parent").as("ck_parent"),
          ])
          .where("ranked.ck_rank", "<=", sql.lit(order.limit))
          .orderBy("ranked.ck_rank"),
      );
    });
    return (await runTemplate<Row>(db, template, values)).rows.map((row) => {
      const parent = String(row.ck_parent);
      // Rows that read back as records are the records (record-codec.ts): take the marker out.
      delete row.ck_parent;
      return { parent, record: decodeVisible(row, visible, fromRow) };
    });
  };
}
