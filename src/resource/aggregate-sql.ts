// The statement behind `GET /<plural>/aggregate`, compiled once per shape (see query-template.ts):
//
//   SELECT "status" AS g0, count(*) AS n, sum("price") AS a0 FROM "product"
//   WHERE <row rule> AND (<search>) AND <filter> GROUP BY "status" ORDER BY g0 LIMIT ?
//
// Aliases are ours (g0, n, a0…), never a field's name, so nothing the caller sends is written into
// SQL but bound values. Over a big SQLite table it runs on a reader thread, as long lists do: an
// aggregate reads every row its filter and rule leave, and writers must not wait for it.

import { type Expression, type Kysely, type SqlBool, sql } from "kysely";
import { dateFromColumn } from "../db/column-values.ts";
import type { Database } from "../db/database.ts";
import { compileTemplate, type QueryTemplate, runTemplate, slot } from "../db/query-template.ts";
import type { Condition, FilterField } from "../query/where.ts";
import { type CompiledWhere, compileWhere } from "../query/where-sql.ts";
import type { AggregateFunction } from "../schema/aggregate-kinds.ts";
import type { Field } from "../schema/field-model.ts";
import type { AggregateQuery } from "./aggregate-query.ts";
import { gatesOf } from "./field-access.ts";
import { likeSearch } from "./list-templates.ts";
import type { AnyResource } from "./types.ts";

/** One group of the answer: its fields' values, then each function's values by field. */
export type AggregateItem = { group: Record<string, unknown>; count?: number } & {
  [F in AggregateFunction]?: Record<string, unknown>;
};

export interface AggregateScope {
  /** The caller's row rule. */
  scope?: Condition | undefined;
  /** Fields she may not read, and those she reads on some rows only (their filters hold there only). */
  hidden?: ReadonlySet<string>;
  /** The fields `search` matches. */
  searchIn: readonly string[];
}

export interface Aggregator {
  run(main: Kysely<any>, query: AggregateQuery, within: AggregateScope): Promise<AggregateItem[]>;
}

/** Past this many rows an aggregate goes to a reader thread (the same size as a long list's). */
const BIG_TABLE = 10_000;
const TEMPLATE_CACHE_LIMIT = 256;

const SQL_FUNCTION: Record<AggregateFunction, (column: Expression<unknown>) => Expression<unknown>> = {
  countDistinct: (c) => sql`count(distinct ${c})`,
  sum: (c) => sql`sum(${c})`,
  avg: (c) => sql`avg(${c})`,
  min: (c) => sql`min(${c})`,
  max: (c) => sql`max(${c})`,
};

export function createAggregator(
  resource: AnyResource,
  database: Database,
  /** Every field a filter or row rule may name. */
  fields: ReadonlyMap<string, FilterField>,
): Aggregator {
  const { kysely: builder, profile, readers } = database;
  const table = resource.name;
  const kinds = new Map(resource.fields.map((f) => [f.name, f.kind]));
  const templates = new Map<string, QueryTemplate>();
  const rules = new WeakMap<Condition, CompiledWhere>();
  const size = readers?.tableSize(table);
  const ruleOf = (scope: Condition) => {
    let compiled = rules.get(scope);
    if (!compiled) {
      compiled = compileWhere(scope, fields, profile, "r");
      rules.set(scope, compiled);
    }
    return compiled;
  };
  const nullsLast = (last: boolean) =>
    profile.explicitNullsOrder ? sql.raw(last ? " nulls last" : " nulls first") : sql.raw("");
  const order = (alias: string, direction: "asc" | "desc") =>
    sql`${sql.ref(alias)} ${sql.raw(direction)}${nullsLast(direction === "desc")}`;

  const build = (
    query: AggregateQuery,
    filter?: CompiledWhere,
    rule?: CompiledWhere,
    searchIn?: readonly string[],
  ) => {
    const conditions: Expression<SqlBool>[] = [];
    if (rule) conditions.push(rule.build());
    if (searchIn) conditions.push(likeSearch(searchIn, profile));
    if (filter) conditions.push(filter.build());
    const selections: Expression<unknown>[] = query.groupBy.map(
      (f, i) => sql`${sql.ref(f)} as ${sql.ref(`g${i}`)}`,
    );
    if (query.count) selections.push(sql`count(*) as ${sql.ref("n")}`);
    query.values.forEach(({ fn, field }, i) => {
      selections.push(sql`${SQL_FUNCTION[fn](sql.ref(field))} as ${sql.ref(`a${i}`)}`);
    });
    let select = builder.selectFrom(table).select(selections as any);
    if (conditions.length > 0) select = select.where(sql.join(conditions, sql` and `) as Expression<SqlBool>);
    if (query.groupBy.length > 0) select = select.groupBy(query.groupBy.map((f) => sql.ref(f)));
    const sortAlias = aliasOf(query);
    if (sortAlias) select = select.orderBy(order(sortAlias, query.sortOrder));
    // Then the groups, in order: the same answer on every engine, and nulls first.
    for (let i = 0; i < query.groupBy.length; i++)
      if (`g${i}` !== sortAlias) select = select.orderBy(order(`g${i}`, sortAlias ? "asc" : query.sortOrder));
    return compileTemplate(select.limit(slot("limit")));
  };

  return {
    async run(main, query, within) {
      const filter = query.list.where
        ? compileWhere(query.list.where, fields, profile, "w", { gates: gatesOf(within.hidden) })
        : undefined;
      const rule = within.scope ? ruleOf(within.scope) : undefined;
      const searched = query.list.search !== undefined ? within.searchIn : undefined;
      const key = `${query.groupBy}|${query.count}|${query.values.map((v) => `${v.fn}.${v.field}`)}|${query.sortBy ?? ""}|${query.sortOrder}|${filter?.shape ?? ""}|${rule?.shape ?? ""}|${searched ?? ""}`;
      let template = templates.get(key);
      if (!template) {
        template = build(query, filter, rule, searched);
        if (templates.size < TEMPLATE_CACHE_LIMIT) templates.set(key, template);
      }
      const search = searched && `%${query.list.search!.replace(/[\\%_]/g, "\\$&")}%`;
      const values = Object.assign({}, filter?.values, rule?.values, { search, limit: query.limit });
      // However long it takes, on a reader thread the event loop (and SQLite's writer) goes on.
      const db = !main.isTransaction && size && (await size()) > BIG_TABLE ? readers!.pick() : main;
      const { rows } = await runTemplate<Record<string, unknown>>(db, template, values);
      return rows.map((row) => itemOf(row, query, kinds));
    },
  };
}

/** The alias `sortBy` names: `n` for count, `g<i>` for a group field, `a<i>` for an aggregate. */
function aliasOf(query: AggregateQuery): string | undefined {
  const { sortBy } = query;
  if (sortBy === undefined) return undefined;
  if (sortBy === "count") return "n";
  const group = query.groupBy.indexOf(sortBy);
  if (group >= 0) return `g${group}`;
  return `a${query.values.findIndex(({ fn, field }) => `${fn}.${field}` === sortBy)}`;
}

/**
 * A row as JSON: counts, sums and averages are numbers whatever the engine answers (PostgreSQL's
 * bigint and numeric arrive as text, MariaDB's DECIMAL too); group values and extremes read as the
 * field reads in a record (dates as ISO strings, booleans as booleans).
 */
function itemOf(
  row: Record<string, unknown>,
  query: AggregateQuery,
  kinds: ReadonlyMap<string, Field["kind"]>,
): AggregateItem {
  const group: Record<string, unknown> = {};
  query.groupBy.forEach((f, i) => {
    group[f] = columnValue(kinds.get(f)!, row[`g${i}`]);
  });
  const item: AggregateItem = { group };
  if (query.count) item.count = Number(row.n);
  query.values.forEach(({ fn, field }, i) => {
    const value = row[`a${i}`];
    const kind = fn === "min" || fn === "max" ? kinds.get(field)! : "number";
    const byField = item[fn] ?? {};
    byField[field] = columnValue(kind, value);
    item[fn] = byField;
  });
  return item;
}

function columnValue(kind: Field["kind"], value: unknown): unknown {
  if (value === null || value === undefined) return null;
  switch (kind) {
    case "integer":
    case "number":
      return Number(value);
    case "boolean":
      return value === true || value === 1 || value === "1";
    case "date":
      return dateFromColumn(value);
    default:
      return value;
  }
}
