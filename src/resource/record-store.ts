// The SQL behind a resource's five operations. Every query shape is compiled once (see
// query-template.ts); a request binds its values and runs a cached prepared statement.

import type { Kysely } from "kysely";
import type { Database } from "../db/database.ts";
import type { DialectProfile } from "../db/dialect.ts";
import { firstRow, runDeferrable, runTemplate } from "../db/query-template.ts";
import { createRecordCodec } from "../db/record-codec.ts";
import type { ListQuery, PageEdges } from "../query/list-query.ts";
import type { Condition, FilterField } from "../query/where.ts";
import { type CompiledWhere, compileWhere } from "../query/where-sql.ts";
import { pagedList } from "./list-page.ts";
import { listTemplateCache } from "./list-templates.ts";
import { manyRowInsert, recordTemplates } from "./record-templates.ts";
import { referenceErrors } from "./reference-errors.ts";
import { createRelatedReads, type RelatedReads } from "./related-reads.ts";
import type { AnyResource } from "./types.ts";
import { uniqueConflicts } from "./unique-conflicts.ts";
import { decodeVisible, visibleColumns } from "./visible-columns.ts";

type Row = Record<string, unknown>;

export interface RecordStore {
  /** Inserts and returns the record exactly as a read would return it. */
  insert(db: Kysely<any>, record: Row): Promise<Row>;
  /** The record, if it exists and matches `scope` (a row rule). */
  /**
   * Reads a record (within `scope`). The `hidden` fields are not selected: the record comes back
   * without them, for a caller who may not read them.
   */
  findById(
    db: Kysely<any>,
    id: string,
    scope?: Condition,
    hidden?: ReadonlySet<string>,
  ): Promise<Row | undefined>;
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
  /** Fields the caller may not read: not selected (the page's records come without them). */
  hidden?: ReadonlySet<string>;
  /** @default the resource's searchable fields */
  searchIn?: readonly string[];
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

  const { insert, findById, findLocked, findVisible, deleteById, scopedTemplates, updateTemplate } =
    recordTemplates(builder, table, columns, profile, returning);
  const insertShape = manyRowInsert(builder, table, columns);
  const { compileScope, compileRecordScope, compileGate } = scopeCompilers(fields, profile, table);
  const compilers = { compileScope, compileGate };
  const listTemplates = listTemplateCache(builder, table, profile, defaultSort, nullableFields);

  const missingReference = referenceErrors(resource, database.profile.errors);
  const conflictOf = uniqueConflicts(resource);

  const findOne = async (db: Kysely<any>, id: string, template = findById, values?: Row) => {
    const row = await firstRow<Row>(db, template, values ? Object.assign({ $id: id }, values) : { $id: id });
    return row ? codec.fromRow(row) : undefined;
  };
  const findScoped = (db: Kysely<any>, id: string, scope: Condition | undefined, locked: boolean) => {
    if (!scope) return findOne(db, id, locked ? findLocked : findById);
    const rule = compileRecordScope(scope);
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
      const rule = compileRecordScope(scope);
      return (
        (await firstRow(trx, scopedTemplates(rule).hold, Object.assign({ $id: id }, rule.values))) !==
        undefined
      );
    },
    async insert(db, record) {
      const row = codec.toRow(record);
      const explain = async (error: unknown) => missingReference(conflictOf(error), db, row);
      try {
        // A batch's transaction may send it later, with the rows after it (coalesced-inserts.ts).
        await runDeferrable(db, insert, row, { shape: insertShape, explain });
        return codec.fromRow(row);
      } catch (error) {
        throw await explain(error);
      }
    },
    async findById(db, id, scope, hidden) {
      const visible = visibleColumns(columns, hidden, ["id"], compileGate);
      if (!visible.columns) return findScoped(db, id, scope, false);
      const rule = scope ? compileRecordScope(scope) : undefined;
      const values = Object.assign({ $id: id }, rule?.values, visible.values);
      const row = await firstRow<Row>(db, findVisible(visible, rule), values);
      return row ? decodeVisible(row, visible, codec.fromRow) : undefined;
    },
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
        const rule = scope ? compileRecordScope(scope) : undefined;
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
    related: createRelatedReads(builder, table, columns, compileScope, compileGate, codec.fromRow),
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
    list: pagedList({ resource, database, columns, fields, codec, defaultSort, listTemplates, ...compilers }),
  };
}

/**
 * A rule's condition is kept per answer (rule-cache.ts): its SQL is compiled once with it, as a
 * set for pages (`compileScope`), row by row for statements on one record (`compileRecordScope`),
 * and as the condition of a field read on some rows only (`compileGate`).
 */
function scopeCompilers(fields: ReadonlyMap<string, FilterField>, profile: DialectProfile, table: string) {
  const compiledOnce = (oneRowOf: string | undefined) => {
    const kept = new WeakMap<Condition, CompiledWhere>();
    return (scope: Condition) => {
      let compiled = kept.get(scope);
      if (!compiled) {
        compiled = compileWhere(scope, fields, profile, "r", { oneRowOf });
        kept.set(scope, compiled);
      }
      return compiled;
    };
  };
  const compileScope = compiledOnce(undefined);
  const compileRecordScope = compiledOnce(table);
  const gates = new WeakMap<Condition, Map<string, CompiledWhere>>();
  const compileGate = (gate: Condition, prefix: string) => {
    let byPrefix = gates.get(gate);
    if (!byPrefix) {
      byPrefix = new Map();
      gates.set(gate, byPrefix);
    }
    let compiled = byPrefix.get(prefix);
    if (!compiled) {
      compiled = compileWhere(gate, fields, profile, prefix);
      byPrefix.set(prefix, compiled);
    }
    return compiled;
  };
  return { compileScope, compileRecordScope, compileGate };
}
