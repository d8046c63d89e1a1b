// Lists of ids (`referencesMany()`, many-to-many). A field of them has no column: each is a
// junction table `<resource>_<field>` of (owner, target, position), one row per id, with foreign
// keys that cascade both ways (a deleted target leaves every list, a deleted owner takes its rows).
// The store below wraps a resource's own: a write sets each list it names in its transaction
// (delete the owner's rows, insert the new ones in order), and every record read carries its lists,
// read for a whole page in one statement per field.
//
//   SELECT "owner", "target" FROM "post_tagIds" WHERE "owner" IN (?, ?, …) ORDER BY "owner", "position"

import type { Kysely } from "kysely";
import type { DriverErrors } from "../core/driver-errors.ts";
import { compileTemplate, type QueryTemplate, runTemplate, slot } from "../db/query-template.ts";
import { indexName, type TableDefinition } from "../db/table-definition.ts";
import type { Field } from "../schema/field-model.ts";
import { hiddenSomewhere } from "./field-access.ts";
import type { RecordStore } from "./record-store.ts";
import { missingReferences } from "./reference-errors.ts";
import { IDS_PER_STATEMENT } from "./related-reads.ts";
import type { AnyResource } from "./types.ts";

type Row = Record<string, unknown>;

const CHUNK = IDS_PER_STATEMENT;

/** `post_tagIds`: the junction table of a list field. */
export function junctionName(resource: { name: string }, field: { name: string }): string {
  return `${resource.name}_${field.name}`;
}

/**
 * The junction table: (owner, target) unique, which also serves a record's list in order by its
 * position; an index on target for the reverse lookups (who lists this tag).
 */
export function junctionTable(resource: AnyResource, field: Field): TableDefinition {
  const name = junctionName(resource, field);
  return {
    name,
    columns: {
      owner: { type: "text", notNull: true, references: { table: resource.name, onDelete: "cascade" } },
      target: { type: "text", notNull: true, references: { table: field.many!.target, onDelete: "cascade" } },
      position: { type: "integer", notNull: true },
    },
    indexes: [
      { name: indexName(name, ["owner", "target"], true), columns: ["owner", "target"], unique: true },
      { name: indexName(name, ["target"], false), columns: ["target"] },
    ],
  };
}

/** The resource's store, its records carrying their lists and its writes setting them. */
export function withManyFields(
  store: RecordStore,
  resource: AnyResource,
  driver: DriverErrors,
  builder: Kysely<any>,
): RecordStore {
  const many = resource.many;
  if (many.length === 0) return store;
  const tables = new Map(many.map((f) => [f.name, junctionName(resource, f)]));
  const attach = listsReader(many, tables, builder);

  /** Sets the list of `field` of the record `id` (in a transaction). An unknown id is the 400 of a missing reference. */
  const setList = async (trx: Kysely<any>, id: string, field: Field, ids: readonly string[]) => {
    const table = tables.get(field.name)!;
    await trx.deleteFrom(table).where("owner", "=", id).execute();
    if (ids.length === 0) return;
    try {
      await trx
        .insertInto(table)
        .values(ids.map((target, position) => ({ owner: id, target, position })))
        .execute();
    } catch (error) {
      throw driver.foreignKey(error) ? missingReferences([field]) : error;
    }
  };

  /** The lists a write names, and the rest of it. */
  const split = (record: Readonly<Row>) => {
    const own: Row = {};
    const lists: [Field, string[]][] = [];
    for (const [key, value] of Object.entries(record)) {
      const field = many.find((f) => f.name === key);
      if (!field) own[key] = value;
      else if (Array.isArray(value)) lists.push([field, value as string[]]);
    }
    return { own, lists };
  };
  const atomically = <T>(db: Kysely<any>, work: (trx: Kysely<any>) => Promise<T>) =>
    db.isTransaction ? work(db) : db.transaction().execute(work);

  return {
    ...store,
    insert: (db, record) =>
      atomically(db, async (trx) => {
        const { own, lists } = split(record);
        const created = await store.insert(trx, own);
        for (const field of many) created[field.name] = [];
        for (const [field, ids] of lists) {
          await setList(trx, String(created.id), field, ids);
          created[field.name] = [...ids];
        }
        return created;
      }),
    async findById(db, id, scope, hidden) {
      const record = await store.findById(db, id, scope, hidden);
      if (record) await attach(db, [record], hidden);
      return record;
    },
    async findForUpdate(trx, id, scope) {
      const record = await store.findForUpdate(trx, id, scope);
      if (record) await attach(trx, [record]);
      return record;
    },
    update: (db, id, changes) =>
      atomically(db, async (trx) => {
        const { own, lists } = split(changes);
        // Only a list changing: the record's row locked all the same, so two writes of its list
        // take turns instead of interleaving their deletes and inserts.
        const record =
          Object.keys(own).length > 0 ? await store.update(trx, id, own) : await store.findForUpdate(trx, id);
        if (!record) return undefined;
        for (const [field, ids] of lists) await setList(trx, id, field, ids);
        await attach(trx, [record]);
        return record;
      }),
    delete: (db, id, scope) =>
      atomically(db, async (trx) => {
        // The lists as they were (the audit entry's "before"): the junction rows go with the record.
        const lists: Row = { id };
        await attach(trx, [lists]);
        const previous = await store.delete(trx, id, scope);
        if (previous) for (const field of many) previous[field.name] = lists[field.name];
        return previous;
      }),
    async list(db, query, within) {
      const page = await store.list(db, query, within);
      await attach(db, page.items, within?.hidden);
      return page;
    },
    // Expanded records carry their lists too (and `expand=posts.tags` goes on from them).
    related: {
      async byIds(db, ids, scope, hidden) {
        const records = await store.related.byIds(db, ids, scope, hidden);
        await attach(db, records, hidden);
        return records;
      },
      async byParents(db, field, parentIds, order, scope, hidden) {
        const records = await store.related.byParents(db, field, parentIds, order, scope, hidden);
        await attach(db, records, hidden);
        return records;
      },
      async byListers(db, junction, parentIds, order, scope, hidden) {
        const found = await store.related.byListers(db, junction, parentIds, order, scope, hidden);
        await attach(
          db,
          found.map((f) => f.record),
          hidden,
        );
        return found;
      },
    },
  };
}

/**
 * Reads records' lists into them, one statement per field (per 500 records), each compiled once per
 * field and count (a page's size, mostly one of a few).
 */
function listsReader(many: readonly Field[], tables: ReadonlyMap<string, string>, builder: Kysely<any>) {
  const templates = new Map<string, QueryTemplate>();
  const listsOf = (field: string, count: number) => {
    const key = `${field}:${count}`;
    let template = templates.get(key);
    if (!template) {
      const owners = Array.from({ length: count }, (_, i) => slot(`o${i}`));
      template = compileTemplate(
        builder
          .selectFrom(tables.get(field)!)
          .select(["owner", "target"])
          .where("owner", "in", owners)
          .orderBy("owner")
          .orderBy("position"),
      );
      if (templates.size < 256) templates.set(key, template);
    }
    return template;
  };
  return async (db: Kysely<any>, records: Row[], hidden?: ReadonlySet<string>): Promise<void> => {
    if (records.length === 0) return;
    // A list read on some rows only (a record-aware field rule) is left out of every row: it has
    // no column to select through the rule, as the other fields are.
    const unseen = hidden && hiddenSomewhere(hidden);
    for (const field of many) {
      if (unseen?.has(field.name)) continue;
      const lists = new Map<string, string[]>();
      for (let i = 0; i < records.length; i += CHUNK) {
        const ids = records.slice(i, i + CHUNK).map((r) => String(r.id));
        const values: Row = {};
        for (const [n, id] of ids.entries()) values[`o${n}`] = id;
        const { rows } = await runTemplate<Row>(db, listsOf(field.name, ids.length), values);
        for (const row of rows) {
          const owner = String(row.owner);
          const list = lists.get(owner);
          if (list) list.push(String(row.target));
          else lists.set(owner, [String(row.target)]);
        }
      }
      for (const record of records) record[field.name] = lists.get(String(record.id)) ?? [];
    }
  };
}
