// A list page of a resource: filter and row rule compiled, search through the index where one
// covers the fields, the page by offset or keyset cursor, its count, and the cursors beside it.
// Over a big table, where the engine has reader threads (SQLite), a list that may read more than
// its page runs on one.

import type { Kysely } from "kysely";
import type { Database } from "../db/database.ts";
import { runTemplate } from "../db/query-template.ts";
import type { RecordCodec } from "../db/record-codec.ts";
import type { ListQuery } from "../query/list-query.ts";
import type { Condition, FilterField } from "../query/where.ts";
import { type CompiledWhere, compileWhere } from "../query/where-sql.ts";
import { gatesOf } from "./field-access.ts";
import { type Cursor, cursorValue, decodeCursor, encodeCursor } from "./keyset.ts";
import { countRows } from "./list-count.ts";
import type { listTemplateCache } from "./list-templates.ts";
import type { ListedPage, ListScope } from "./record-store.ts";
import type { AnyResource } from "./types.ts";
import { type CompileGate, decodeVisible, visibleColumns } from "./visible-columns.ts";

type Row = Record<string, unknown>;

/** An OFFSET past this many rows reads them all first: such a page goes to a reader thread. */
const CHEAP_OFFSET = 1000;

/** Past this many rows a list may take long enough to be worth a reader thread. */
const BIG_TABLE = 10_000;

/**
 * Up to this many rows, counting a whole table takes a few milliseconds (SQLite counts the
 * smallest index): less than a trip to a reader thread costs a list that is otherwise cheap.
 */
const FAST_COUNT_ROWS = 200_000;

/** What a resource's lists are built from, made once with its store. */
export interface ListParts {
  resource: AnyResource;
  database: Database;
  /** The table's columns, of which a page selects those the caller may read. */
  columns: readonly string[];
  fields: ReadonlyMap<string, FilterField>;
  codec: RecordCodec;
  defaultSort: string;
  compileScope: (scope: Condition) => CompiledWhere;
  compileGate: CompileGate;
  listTemplates: ReturnType<typeof listTemplateCache>;
}

/** The `list` of a resource's store. */
export function pagedList({
  resource,
  database,
  columns,
  fields,
  codec,
  defaultSort,
  compileScope,
  compileGate,
  listTemplates,
}: ListParts): (main: Kysely<any>, query: ListQuery, within?: ListScope) => Promise<ListedPage> {
  const { profile, readers } = database;
  const table = resource.name;
  // Where the engine's LIKE uses no index (SQLite), lists search through the engine's text index
  // once a migration built it; elsewhere the LIKE itself is what an index (pg_trgm) serves, or
  // what scans (MySQL).
  const textIndex = resource.searchable.length > 0 ? profile.textIndex : undefined;
  const size = readers?.tableSize(table);
  const few = size && textIndex?.fewCandidates(database.kysely, table);
  const searchIndex = textIndex?.columns(database.kysely, table);
  return async (main, query, within = {}) => {
    // A field she reads on some rows only is filtered on those rows only.
    const filter = query.where
      ? compileWhere(query.where, fields, profile, "w", { gates: gatesOf(within.hidden) })
      : undefined;
    const rule = within.scope ? compileScope(within.scope) : undefined;
    const sortBy = query.sortBy ?? defaultSort;
    const binding = { resource: resource.name, sortBy, sortOrder: query.sortOrder };
    const sortField = fields.get(sortBy)!;
    const cursor = query.cursor ? decodeCursor(query.cursor, binding, sortField, profile) : undefined;
    const keyset = cursor && { direction: cursor.direction, valueIsNull: cursor.value === null };
    const searchIn = within.searchIn ?? resource.searchable;
    let indexed = false;
    if (searchIndex && query.search !== undefined && textIndex!.answers(query.search)) {
      const covered = await searchIndex();
      indexed = searchIn.every((f) => covered.has(f));
    }
    // The id and the sort column make the cursors: selected even when hidden, never answered.
    const visible = visibleColumns(columns, within.hidden, ["id", sortBy], compileGate);
    // Without a count, and past a cursor, one row more than the page says whether another follows.
    const pageRows = query.count === "none" || cursor ? query.limit + 1 : query.limit;
    const templates = listTemplates(query, filter, rule, searchIn, indexed, keyset, visible, {
      rows: pageRows,
      first: query.page === 1,
    });
    // Over a big SQLite table, a list that may read more than its page runs on a reader thread:
    // however long it takes, the event loop goes on serving other requests.
    const cheap = async (rows: number) => {
      if (!cursor && (query.page - 1) * query.limit > CHEAP_OFFSET) return false;
      // A rare term: the list reads only the few rows the index holds for it, counted or not.
      if (indexed && (await few!(main, values.match!))) return true;
      const counted = query.count !== "none";
      if (counted && (templates.narrowed || (query.count === "exact" && rows > FAST_COUNT_ROWS)))
        return false;
      templates.walks ??= readers!.walksIndex(main, templates.page, values, templates.narrowed);
      return templates.walks;
    };
    const search = query.search === undefined ? undefined : `%${query.search.replace(/[\\%_]/g, "\\$&")}%`;
    const values = Object.assign(
      { match: indexed ? textIndex!.query(searchIn, query.search!) : undefined },
      filter?.values,
      rule?.values,
      visible.values,
      {
        search,
        limit: pageRows,
        offset: (query.page - 1) * query.limit,
        kv: cursor?.value,
        ki: cursor?.id,
      },
    );
    const tableRows = !main.isTransaction && size ? await size() : 0;
    const db = tableRows > BIG_TABLE && !(await cheap(tableRows)) ? readers!.pick() : main;
    // Side by side: on a pool (PostgreSQL, MySQL) the count and the page take two connections and
    // the list waits for the slower one, not for both; a single connection runs them in turn.
    const [total, { rows }] = await Promise.all([
      query.count === "none" ? null : countRows(db, database, table, templates, values, query.count),
      runTemplate<Row>(db, templates.page, values),
    ]);
    const more = rows.length > query.limit;
    const page = more ? rows.slice(0, query.limit) : rows;
    if (cursor?.direction === "before") page.reverse();
    const items = visible.gates
      ? page.map((row) => decodeVisible(row, visible, codec.fromRow))
      : page.map(codec.fromRow);
    const edge = (direction: Cursor["direction"], row: Row | undefined) =>
      row ? encodeCursor(binding, direction, cursorValue(sortField, row[sortBy]), row.id) : null;
    // Past a cursor the rows on its other side exist (the cursor's own row, at least).
    const hasNext = cursor
      ? cursor.direction === "before" || more
      : query.count === "none"
        ? more
        : undefined;
    const hasPrev = cursor ? cursor.direction === "after" || more : query.page > 1;
    const last = items.at(-1);
    const first = items[0];
    return {
      items,
      total,
      more,
      hasNext,
      hasPrev,
      nextCursor: hasNext !== false ? edge("after", last) : null,
      prevCursor: hasPrev ? edge("before", first) : null,
    };
  };
}
