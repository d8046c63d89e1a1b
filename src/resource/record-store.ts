// The SQL behind a resource's five operations. Every query shape is compiled once (see
// query-template.ts); a request binds its values and runs a cached prepared statement.

import { type Expression, type Kysely, type SqlBool, sql } from "kysely";
import { APIError } from "../core/errors.ts";
import { type Database, isUniqueViolation, violatedUnique } from "../db/database.ts";
import { compileTemplate, firstRow, type QueryTemplate, runTemplate, slot } from "../db/query-template.ts";
import { createRecordCodec } from "../db/record-codec.ts";
import { walksIndex } from "../db/sqlite-plan.ts";
import {
  fewCandidates,
  indexableTerm,
  indexedRows,
  phraseIn,
  searchIndexColumns,
} from "../db/sqlite-search.ts";
import { indexName } from "../db/table-definition.ts";
import type { ListQuery, PageEdges } from "../query/list-query.ts";
import type { Condition, FilterField } from "../query/where.ts";
import { type CompiledWhere, compileWhere } from "../query/where-sql.ts";
import { type Cursor, cursorValue, decodeCursor, encodeCursor, keysetCondition } from "./keyset.ts";
import { countRows, type ListTemplates } from "./list-count.ts";
import { referenceErrors } from "./reference-errors.ts";
import { createRelatedReads, type RelatedReads } from "./related-reads.ts";
import type { AnyResource } from "./types.ts";

type Row = Record<string, unknown>;

export interface RecordStore {
  /** Inserts and returns the record exactly as a read would return it. */
  insert(db: Kysely<any>, record: Row): Promise<Row>;
  /** The record, if it exists and matches `scope` (a row rule). */
  findById(db: Kysely<any>, id: string, scope?: Condition): Promise<Row | undefined>;
  /**
   * Reads a record inside a transaction and locks it until the transaction ends, so the value a
   * write records as "before" is the one it replaces (PostgreSQL, MySQL; SQLite writes one at a time).
   */
  findForUpdate(trx: Kysely<any>, id: string, scope?: Condition): Promise<Row | undefined>;
  /**
   * Whether the record exists within `scope`, its row share-locked until the transaction ends, so
   * a write that points at it points at the row that was checked (a reference's read check).
   */
  holds(trx: Kysely<any>, id: string, scope: Condition): Promise<boolean>;
  /** Writes `changes` (record-shaped) and returns the record after, or undefined if none. */
  update(db: Kysely<any>, id: string, changes: Row): Promise<Row | undefined>;
  /** Deletes and returns the deleted record, or undefined if none matches id and `scope`. */
  delete(db: Kysely<any>, id: string, scope?: Condition): Promise<Row | undefined>;
  /** The records whose `field` holds `id` (locked until the transaction ends, where the engine locks rows). */
  referencing(trx: Kysely<any>, field: string, id: string): Promise<Row[]>;
  /** Whether any record's `field` holds `id`. */
  isReferenced(db: Kysely<any>, field: string, id: string): Promise<boolean>;
  /** Deletes the records whose `field` holds `id`. */
  deleteReferencing(trx: Kysely<any>, field: string, id: string): Promise<void>;
  /** Sets `field` to null where it holds `id` (and `updatedAt`, given as a record value). */
  clearReferencing(trx: Kysely<any>, field: string, id: string, updatedAt: string | undefined): Promise<void>;
  /** The reads behind `expand`: many records by id, or a few per parent. */
  readonly related: RelatedReads;
  /** A page, its total (null with `count=none`), and the cursors to the pages beside it. */
  list(db: Kysely<any>, query: ListQuery, within?: ListScope): Promise<ListedPage>;
}

export interface ListedPage extends PageEdges {
  items: Row[];
  total: number | null;
  /** A row followed the page (read when the total is not counted, or past a cursor). */
  more: boolean;
}

/** What narrows a list beyond the caller's own query: her row rule, and the fields search may match. */
export interface ListScope {
  scope?: Condition | undefined;
  /** @default the resource's searchable fields */
  searchIn?: readonly string[];
}

const TEMPLATE_CACHE_LIMIT = 256;

/** An OFFSET past this many rows reads them all first: such a page goes to a reader thread. */
const CHEAP_OFFSET = 1000;

/** Past this many rows a list may take long enough to be worth a reader thread. */
const BIG_TABLE = 10_000;

/**
 * Up to this many rows, counting a whole table takes a few milliseconds (SQLite counts the
 * smallest index): less than a trip to a reader thread costs a list that is otherwise cheap.
 */
const FAST_COUNT_ROWS = 200_000;

/** About how many rows `table` has, looked up at most once a second (rowids grow with the table). */
function tableSize(database: Database, table: string): () => Promise<number> {
  let size = 0;
  let checkedAt = 0;
  const query = sql<{ last: unknown }>`select max(rowid) as last from ${sql.table(table)}`;
  return async () => {
    const now = Date.now();
    if (now - checkedAt >= 1000) {
      checkedAt = now;
      size = Number((await query.execute(database.kysely)).rows[0]?.last ?? 0);
    }
    return size;
  };
}

export function createRecordStore(
  resource: AnyResource,
  database: Database,
  /** Every field a filter or row rule may name. */
  fields: ReadonlyMap<string, FilterField>,
  log: (message: string, error: unknown) => void,
): RecordStore {
  const { kysely: builder, profile, returning } = database;
  const table = resource.name;
  const codec = createRecordCodec(resource.fields, profile, log);
  const columns = resource.fields.map((f) => f.name);
  const defaultSort = resource.timestamps ? "createdAt" : "id";
  const nullableFields = new Set(resource.fields.filter((f) => f.optional || f.nullable).map((f) => f.name));

  const insert = compileTemplate(
    builder.insertInto(table).values(Object.fromEntries(columns.map((c) => [c, slot(c)]))),
  );
  // SELECT * FROM "product" WHERE "id" = ?
  const byId = profile.equalsExactly("id", slot("$id"));
  const findById = compileTemplate(builder.selectFrom(table).selectAll().where(byId));
  // SELECT * FROM "product" WHERE "id" = ? FOR UPDATE
  const findLocked = profile.rowLocks
    ? compileTemplate(builder.selectFrom(table).selectAll().where(byId).forUpdate())
    : findById;
  const deleteById = returning
    ? compileTemplate(builder.deleteFrom(table).where(byId).returningAll())
    : compileTemplate(builder.deleteFrom(table).where(byId));
  const updates = new Map<string, QueryTemplate>();
  const lists = new Map<string, ListTemplates>();
  const scoped = new Map<
    string,
    { find: QueryTemplate; lock: QueryTemplate; hold: QueryTemplate; delete: QueryTemplate }
  >();
  // SQLite searches through its FTS5 index once a migration built it; elsewhere the LIKE itself
  // is what an index (pg_trgm) serves, or what scans (MySQL).
  const size = database.readers ? tableSize(database, table) : undefined;
  const few = size && resource.searchable.length > 0 ? fewCandidates(database, table) : undefined;
  const searchIndex =
    profile.searchIndex === "fts5 trigram" && resource.searchable.length > 0
      ? searchIndexColumns(database, table)
      : undefined;

  const compileScope = (scope: Condition) => compileWhere(scope, fields, profile, "r");
  // SELECT * FROM t WHERE id = ? AND (<rule>) [FOR UPDATE]; DELETE … WHERE id = ? AND (<rule>) [RETURNING *];
  // SELECT id FROM t WHERE id = ? AND (<rule>) [FOR SHARE]
  const scopedTemplates = (rule: CompiledWhere) => {
    let templates = scoped.get(rule.shape);
    if (!templates) {
      const where = sql<SqlBool>`${byId} and ${rule.build()}`;
      const find = compileTemplate(builder.selectFrom(table).selectAll().where(where));
      const deleting = builder.deleteFrom(table).where(where);
      templates = {
        find,
        lock: profile.rowLocks
          ? compileTemplate(builder.selectFrom(table).selectAll().where(where).forUpdate())
          : find,
        hold: compileTemplate(
          profile.shareLock
            ? builder.selectFrom(table).select("id").where(where).modifyEnd(profile.shareLock)
            : builder.selectFrom(table).select("id").where(where),
        ),
        delete: compileTemplate(returning ? deleting.returningAll() : deleting),
      };
      if (scoped.size < TEMPLATE_CACHE_LIMIT) scoped.set(rule.shape, templates);
    }
    return templates;
  };

  const updateTemplate = (changed: string[]): QueryTemplate => {
    const key = changed.join(",");
    let template = updates.get(key);
    if (!template) {
      const query = builder
        .updateTable(table)
        .set(Object.fromEntries(changed.map((c) => [c, slot(c)])))
        .where(byId);
      template = compileTemplate(returning ? query.returningAll() : query);
      if (updates.size < TEMPLATE_CACHE_LIMIT) updates.set(key, template);
    }
    return template;
  };

  // SELECT * FROM t [WHERE (a LIKE ? ESCAPE '\' OR b LIKE ? ESCAPE '\') [AND <filter>]]
  //   ORDER BY <sort> <dir>, id <dir> LIMIT ? OFFSET ?
  // One pair of templates per shape of query: the filter's shape, never its values, is in the key.
  const listTemplates = (
    query: ListQuery,
    filter: CompiledWhere | undefined,
    rule: CompiledWhere | undefined,
    searchIn: readonly string[],
    indexed: boolean,
    keyset: { direction: Cursor["direction"]; valueIsNull: boolean } | undefined,
  ) => {
    const searched = query.search ? `${indexed ? "fts:" : ""}${searchIn.join(",")}` : "";
    const paging = keyset ? `${keyset.direction}${keyset.valueIsNull ? "0" : ""}` : "";
    const key = `${searched}:${query.sortBy ?? ""}:${query.sortOrder}:${filter?.shape ?? ""}:${rule?.shape ?? ""}:${paging}`;
    let templates = lists.get(key);
    if (!templates) {
      const conditions: Expression<SqlBool>[] = [];
      if (rule) conditions.push(rule.build());
      if (query.search && indexed) conditions.push(indexedRows(table, slot("match")));
      if (query.search)
        conditions.push(
          sql<SqlBool>`(${sql.join(
            searchIn.map((f) => profile.likeMatch(sql.ref(f), slot("search"))),
            sql` or `,
          )})`,
        );
      if (filter) conditions.push(filter.build());
      const sortBy = query.sortBy ?? defaultSort;
      let page = builder.selectFrom(table).selectAll();
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
      // Nulls first ascending and last descending everywhere; PostgreSQL's own default is the reverse.
      page =
        profile.explicitNullsOrder && nullable
          ? page.orderBy(
              sql`${sql.ref(sortBy)} ${sql.raw(direction)} nulls ${sql.raw(ascending ? "first" : "last")}`,
            )
          : page.orderBy(sortBy, direction);
      if (sortBy !== "id") page = page.orderBy("id", direction);
      templates = {
        page: compileTemplate(
          keyset ? page.limit(slot("limit")) : page.limit(slot("limit")).offset(slot("offset")),
        ),
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

  const missingReference = referenceErrors(resource);
  // Unique sets by index name, so a violation names the fields whatever the driver reports.
  const uniqueSets = new Map(resource.unique.map((columns) => [indexName(table, columns, true), columns]));
  /** A unique violation as a 409 naming the field(s); any other error as it is. */
  const conflictOf = (error: unknown): unknown => {
    if (!isUniqueViolation(error)) return error;
    const { columns, constraint } = violatedUnique(error);
    const fields = columns ?? (constraint ? uniqueSets.get(constraint) : undefined);
    if (!fields) return new APIError("CONFLICT", `This ${resource.name} conflicts with an existing one.`);
    const named = fields.map((f) => `"${f}"`).join(" and ");
    return new APIError(
      "CONFLICT",
      fields.length === 1 && fields[0] === "id"
        ? `A ${resource.name} with this id already exists.`
        : `Another ${resource.name} already has this ${named}: ${fields.length > 1 ? "together they" : "it"} must be unique.`,
      { details: fields.map((path) => ({ path, message: "Must be unique." })) },
    );
  };

  const findOne = async (db: Kysely<any>, id: string, template = findById, values?: Row) => {
    const row = await firstRow<Row>(db, template, values ? Object.assign({ $id: id }, values) : { $id: id });
    return row ? codec.fromRow(row) : undefined;
  };
  const findScoped = (db: Kysely<any>, id: string, scope: Condition | undefined, locked: boolean) => {
    if (!scope) return findOne(db, id, locked ? findLocked : findById);
    const rule = compileScope(scope);
    const templates = scopedTemplates(rule);
    return findOne(db, id, locked ? templates.lock : templates.find, rule.values);
  };
  // Without RETURNING (MySQL): lock, read, delete, in one transaction, so of concurrent deletes
  // exactly one finds the record.
  const deleteLocked = async (trx: Kysely<any>, id: string, scope: Condition | undefined) => {
    const previous = await findScoped(trx, id, scope, true);
    if (previous) await runTemplate(trx, deleteById, { $id: id });
    return previous;
  };

  return {
    async holds(trx, id, scope) {
      const rule = compileScope(scope);
      return (
        (await firstRow(trx, scopedTemplates(rule).hold, Object.assign({ $id: id }, rule.values))) !==
        undefined
      );
    },
    async insert(db, record) {
      const row = codec.toRow(record);
      try {
        await runTemplate(db, insert, row);
        return codec.fromRow(row);
      } catch (error) {
        throw await missingReference(conflictOf(error), db, row);
      }
    },
    findById: (db, id, scope) => findScoped(db, id, scope, false),
    findForUpdate: (trx, id, scope) => findScoped(trx, id, scope, true),
    async update(db, id, changes) {
      const changed = Object.keys(changes).sort();
      const row = codec.toRow(changes);
      const values: Row = { $id: id };
      for (const c of changed) values[c] = row[c];
      const result = await runTemplate<Row>(db, updateTemplate(changed), values).catch(async (error) => {
        throw await missingReference(conflictOf(error), db, row);
      });
      // Without RETURNING (MySQL), read the record back; MySQL's affected rows count only changed rows.
      if (!returning) return findOne(db, id);
      return result.rows[0] ? codec.fromRow(result.rows[0]) : undefined;
    },
    async delete(db, id, scope) {
      if (returning) {
        const rule = scope ? compileScope(scope) : undefined;
        const template = rule ? scopedTemplates(rule).delete : deleteById;
        const { rows } = await runTemplate<Row>(
          db,
          template,
          rule ? Object.assign({ $id: id }, rule.values) : { $id: id },
        );
        return rows[0] ? codec.fromRow(rows[0]) : undefined;
      }
      return db.isTransaction
        ? deleteLocked(db, id, scope)
        : db.transaction().execute((trx) => deleteLocked(trx, id, scope));
    },
    related: createRelatedReads(builder, table, columns, compileScope, codec.fromRow),
    async referencing(trx, field, id) {
      const query = trx.selectFrom(table).selectAll().where(field, "=", id).orderBy("id");
      const rows = await (profile.rowLocks ? query.forUpdate() : query).execute();
      return rows.map(codec.fromRow);
    },
    async isReferenced(db, field, id) {
      return (await db.selectFrom(table).select("id").where(field, "=", id).limit(1).execute()).length > 0;
    },
    async deleteReferencing(trx, field, id) {
      await trx.deleteFrom(table).where(field, "=", id).execute();
    },
    async clearReferencing(trx, field, id, updatedAt) {
      const changes: Row = { [field]: null };
      if (updatedAt !== undefined) changes.updatedAt = updatedAt;
      const row = codec.toRow(changes);
      const set: Row = {};
      for (const column of Object.keys(changes)) set[column] = row[column];
      await trx.updateTable(table).set(set).where(field, "=", id).execute();
    },
    async list(main, query, within = {}) {
      const filter = query.where ? compileWhere(query.where, fields, profile) : undefined;
      const rule = within.scope ? compileScope(within.scope) : undefined;
      const sortBy = query.sortBy ?? defaultSort;
      const binding = { resource: resource.name, sortBy, sortOrder: query.sortOrder };
      const sortField = fields.get(sortBy)!;
      const cursor = query.cursor ? decodeCursor(query.cursor, binding, sortField, profile) : undefined;
      const keyset = cursor && { direction: cursor.direction, valueIsNull: cursor.value === null };
      const searchIn = within.searchIn ?? resource.searchable;
      let indexed = false;
      if (searchIndex && query.search !== undefined && indexableTerm(query.search)) {
        const covered = await searchIndex();
        indexed = searchIn.every((f) => covered.has(f));
      }
      const templates = listTemplates(query, filter, rule, searchIn, indexed, keyset);
      // Over a big SQLite table, a list that may read more than its page runs on a reader thread:
      // however long it takes, the event loop goes on serving other requests.
      const cheap = async (rows: number) => {
        if (!cursor && (query.page - 1) * query.limit > CHEAP_OFFSET) return false;
        // A rare term: the list reads only the few rows the index holds for it, counted or not.
        if (indexed && (await few!(main, values.match!))) return true;
        const counted = query.count !== "none";
        if (counted && (templates.narrowed || (query.count === "exact" && rows > FAST_COUNT_ROWS)))
          return false;
        templates.walks ??= walksIndex(main, templates.page, values, templates.narrowed);
        return templates.walks;
      };
      const search = query.search === undefined ? undefined : `%${query.search.replace(/[\\%_]/g, "\\$&")}%`;
      const values = Object.assign(
        { match: indexed ? phraseIn(searchIn, query.search!) : undefined },
        filter?.values,
        rule?.values,
        {
          search,
          // Without a count, and past a cursor, one row more than the page says whether another follows.
          limit: query.count === "none" || cursor ? query.limit + 1 : query.limit,
          offset: (query.page - 1) * query.limit,
          kv: cursor?.value,
          ki: cursor?.id,
        },
      );
      const tableRows = !main.isTransaction && size ? await size() : 0;
      const db = tableRows > BIG_TABLE && !(await cheap(tableRows)) ? database.readers!.pick() : main;
      const total =
        query.count === "none" ? null : await countRows(db, database, table, templates, values, query.count);
      const { rows } = await runTemplate<Row>(db, templates.page, values);
      const more = rows.length > query.limit;
      const page = more ? rows.slice(0, query.limit) : rows;
      if (cursor?.direction === "before") page.reverse();
      const items = page.map(codec.fromRow);
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
    },
  };
}
