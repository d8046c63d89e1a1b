// The statements of a list, one pair per shape of query (the filter's shape, never its values, is
// in the key): the page (by offset or keyset), its count, and the capped counts of list-count.ts.

import { type Expression, type Kysely, type SelectQueryBuilder, type SqlBool, sql } from "kysely";
import type { DialectProfile } from "../db/dialect.ts";
import { compileTemplate, slot } from "../db/query-template.ts";
import type { ListQuery } from "../query/list-query.ts";
import type { CompiledWhere } from "../query/where-sql.ts";
import { type Cursor, keysetCondition } from "./keyset.ts";
import type { ListTemplates } from "./list-count.ts";
import { ALL_COLUMNS, selectVisible, type VisibleColumns } from "./visible-columns.ts";

const TEMPLATE_CACHE_LIMIT = 256;

/** The list statements of `table`, compiled on first use per shape and kept (up to a limit). */
export function listTemplateCache(
  builder: Kysely<any>,
  table: string,
  profile: DialectProfile,
  defaultSort: string,
  nullableFields: ReadonlySet<string>,
) {
  const lists = new Map<string, ListTemplates>();
  // SELECT * (or the caller's columns) FROM t [WHERE (a LIKE ? ESCAPE '\' OR b LIKE ? ESCAPE '\') [AND <filter>]]
  //   ORDER BY <sort> <dir>, id <dir> LIMIT ? OFFSET ?
  // One pair of templates per shape of query: the filter's shape, never its values, is in the key.
  return (
    query: ListQuery,
    filter: CompiledWhere | undefined,
    rule: CompiledWhere | undefined,
    searchIn: readonly string[],
    indexed: boolean,
    keyset: { direction: Cursor["direction"]; valueIsNull: boolean } | undefined,
    visible: VisibleColumns = ALL_COLUMNS,
    /** The rows the page reads (its LIMIT), and whether it is the first (no OFFSET). */
    size: { rows: number; first: boolean } = { rows: 0, first: false },
  ) => {
    const searched = query.search ? `${indexed ? "fts:" : ""}${searchIn.join(",")}` : "";
    const paging = keyset ? `${keyset.direction}${keyset.valueIsNull ? "0" : ""}` : "";
    // See DialectProfile.literalLimit: the page's size, and whether it is the first, in its text.
    const literal = profile.literalLimit && Number.isSafeInteger(size.rows) && size.rows > 0;
    const first = literal && !keyset && size.first;
    const sized = literal ? `${size.rows}${first ? "f" : ""}` : "";
    const key = `${searched}:${query.sortBy ?? ""}:${query.sortOrder}:${filter?.shape ?? ""}:${rule?.shape ?? ""}:${paging}:${visible.key}:${sized}`;
    let templates = lists.get(key);
    if (!templates) {
      const conditions: Expression<SqlBool>[] = [];
      if (rule) conditions.push(rule.build());
      if (query.search && indexed) conditions.push(profile.textIndex!.rows(table, slot("match")));
      if (query.search) conditions.push(likeSearch(searchIn, profile));
      if (filter) conditions.push(filter.build());
      const sortBy = query.sortBy ?? defaultSort;
      let page = selectVisible(builder.selectFrom(table), visible);
      let count = builder.selectFrom(table).select(sql<number>`count(*)`.as("total"));
      let matching = builder.selectFrom(table).select(sql<number>`1`.as("one"));
      if (conditions.length > 0) {
        const where = sql.join(conditions, sql` and `) as Expression<SqlBool>;
        page = page.where(where);
        count = count.where(where);
        matching = matching.where(where);
      }
      // A page before a cursor is read backwards from it, then put back in order.
      const ascending = (query.sortOrder === "asc") !== (keyset?.direction === "before");
      const nullable = nullableFields.has(sortBy);
      if (keyset)
        page = page.where(
          keysetCondition(sortBy, ascending, keyset.valueIsNull, nullable, profile.rowValueKeyset),
        );
      const direction = ascending ? "asc" : "desc";
      const ordered = <Q extends SelectQueryBuilder<any, any, any>>(select: Q): Q => {
        // Nulls first ascending and last descending everywhere; PostgreSQL's own default is the reverse.
        const bySort =
          profile.explicitNullsOrder && nullable
            ? select.orderBy(
                sql`${sql.ref(sortBy)} ${sql.raw(direction)} nulls ${sql.raw(ascending ? "first" : "last")}`,
              )
            : select.orderBy(sortBy, direction);
        return (sortBy === "id" ? bySort : bySort.orderBy("id", direction)) as Q;
      };
      const limit = literal ? sql.lit(size.rows) : slot("limit");
      const paged = <Q extends SelectQueryBuilder<any, any, any>>(select: Q): Q =>
        (keyset || first ? select.limit(limit) : select.limit(limit).offset(slot("offset"))) as Q;
      const throughRelation = [rule?.shape, filter?.shape].some((shape) => shape?.includes("rel("));
      if (profile.lateRowLookup && throughRelation) {
        // The page's ids from the index, then only their rows (see DialectProfile.lateRowLookup).
        const ids = paged(ordered(page.clearSelect().select(`${table}.id`)));
        page = ordered(selectVisible(builder.selectFrom(table), visible).where("id", "in", ids));
      } else page = paged(ordered(page));
      templates = {
        page: compileTemplate(page),
        count: compileTemplate(count),
        narrowed: conditions.length > 0,
        capped: compileTemplate(
          builder
            .selectFrom(matching.limit(slot("cap")).as("capped"))
            .select(sql<number>`count(*)`.as("total")),
        ),
        matching: compileTemplate(matching),
      };
      if (lists.size < TEMPLATE_CACHE_LIMIT) lists.set(key, templates);
    }
    return templates;
  };
}

/** `search`: any of `searchIn` matching the `search` slot, case-insensitively (LIKE / ILIKE). */
export function likeSearch(searchIn: readonly string[], profile: DialectProfile): Expression<SqlBool> {
  return sql<SqlBool>`(${sql.join(
    searchIn.map((f) => profile.likeMatch(sql.ref(f), slot("search"))),
    sql` or `,
  )})`;
}
