// The statements on one record of a table, compiled once: insert, read by id (and locked), delete,
// each also within a row rule (compiled once per shape of rule), and an update per set of columns.

import { type Kysely, type SqlBool, sql } from "kysely";
import type { InsertShape } from "../db/coalesced-inserts.ts";
import type { DialectProfile } from "../db/dialect.ts";
import { compileTemplate, type QueryTemplate, slot } from "../db/query-template.ts";
import type { CompiledWhere } from "../query/where-sql.ts";
import { selectVisible, type VisibleColumns } from "./visible-columns.ts";

const TEMPLATE_CACHE_LIMIT = 256;

/** A record's statements within a row rule. */
export interface ScopedTemplates {
  find: QueryTemplate;
  lock: QueryTemplate;
  hold: QueryTemplate;
  delete: QueryTemplate;
}

/**
 * The table's INSERT for any number of rows, compiled once per count: what a batch sends for the
 * creates it coalesced (coalesced-inserts.ts). Each row binds its columns in the one-row order.
 */
export function manyRowInsert(builder: Kysely<any>, table: string, columns: readonly string[]): InsertShape {
  const statements = new Map<number, string>();
  return {
    width: columns.length,
    many(rows) {
      let text = statements.get(rows);
      if (text === undefined) {
        const row = () => Object.fromEntries(columns.map((c) => [c, null]));
        const compiled = builder
          .insertInto(table)
          .values(Array.from({ length: rows }, row))
          .compile();
        text = compiled.sql;
        if (statements.size < TEMPLATE_CACHE_LIMIT) statements.set(rows, text);
      }
      return text;
    },
  };
}

export function recordTemplates(
  builder: Kysely<any>,
  table: string,
  columns: readonly string[],
  profile: DialectProfile,
  returning: boolean,
) {
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
  const scoped = new Map<string, ScopedTemplates>();
  // SELECT * FROM t WHERE id = ? AND (<rule>) [FOR UPDATE]; DELETE … WHERE id = ? AND (<rule>) [RETURNING *];
  // SELECT id FROM t WHERE id = ? AND (<rule>) [FOR SHARE]
  const scopedTemplates = (rule: CompiledWhere): ScopedTemplates => {
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

  // SELECT <the caller's columns> FROM t WHERE id = ? [AND (<rule>)]: a read for a caller who may
  // not read every field.
  const visibleFinds = new Map<string, QueryTemplate>();
  const findVisible = (visible: VisibleColumns, rule: CompiledWhere | undefined): QueryTemplate => {
    if (!visible.columns) return rule ? scopedTemplates(rule).find : findById;
    const key = `${rule?.shape ?? ""}|${visible.key}`;
    let template = visibleFinds.get(key);
    if (!template) {
      const where = rule ? sql<SqlBool>`${byId} and ${rule.build()}` : byId;
      template = compileTemplate(selectVisible(builder.selectFrom(table), visible).where(where));
      if (visibleFinds.size < TEMPLATE_CACHE_LIMIT) visibleFinds.set(key, template);
    }
    return template;
  };

  return { insert, findById, findLocked, findVisible, deleteById, scopedTemplates, updateTemplate };
}
