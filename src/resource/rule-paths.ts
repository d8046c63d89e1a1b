// Row rules through relations: a rule's `Where` may name a field of a referenced record, one or two
// hops away (`"project.orgId"` on a task, `"task.project.orgId"` on a comment), a field of the
// records that reference it, meaning any of them (`"tasks.assignee"` on a project), and a set of
// another resource's values (`valuesOf`, what `memberOf` builds). Each becomes SQL the database
// answers: an EXISTS over the referenced table, a semi-join over the other one. A rule speaks with
// the server's authority: the read rules of the resources it passes through do not apply to it.

import type { Kysely } from "kysely";
import type { Condition, FilterField, SubSelect } from "../query/where.ts";
import { mapFieldConditions, ValuesOf } from "../query/where.ts";
import type { RelationGraph } from "./relations.ts";
import type { ResourceRuntime } from "./runtime.ts";
import type { AnyResource } from "./types.ts";

/** Hops a rule's path may take through references. */
const MAX_HOPS = 2;

/**
 * The fields a rule of `resource` may name: its own, and each field of a record its references
 * reach, up to two hops (`project.orgId`, `project.org.name`).
 */
export function rulePathFields(
  resource: AnyResource,
  relations: RelationGraph,
  fieldsOf: (resource: AnyResource) => ReadonlyMap<string, FilterField>,
  hops = MAX_HOPS,
): ReadonlyMap<string, FilterField> {
  const fields = new Map(fieldsOf(resource));
  if (hops === 0) return fields;
  for (const relation of relations.expandable(resource.name).values()) {
    // Forward, a record this one references; reverse, any of the records that reference it.
    const reverse = relation.kind === "reverse" && relation.through === undefined;
    if (relation.kind !== "forward" && !reverse) continue;
    const target = relations.resource(relation.kind === "forward" ? relation.target : relation.source);
    if (!target) continue;
    for (const [name, field] of rulePathFields(target, relations, fieldsOf, hops - 1)) {
      const path = `${relation.name}.${name}`;
      if (fields.has(path)) continue;
      const via = { relation: relation.name, field: relation.field, target: target.name, targetField: name };
      fields.set(path, {
        name: path,
        kind: field.kind,
        enumValues: field.enumValues,
        via: reverse ? { ...via, reverse: true } : via,
      });
    }
  }
  return fields;
}

/**
 * A rule's checked condition made ready for SQL: each condition on a referenced record becomes an
 * EXISTS over its table (with no read rule: the rule's authority), and each `valuesOf` the
 * semi-join over its resource's table.
 */
export function throughRelations(condition: Condition, rt: ResourceRuntime): Condition {
  return mapFieldConditions(condition, (c) => {
    const value = c.value instanceof ValuesOf ? subSelect(c.value, rt) : c.value;
    const via = rt.rulePaths.get(c.field)?.via;
    if (!via) return value === c.value ? c : { ...c, value };
    const target = rt.runtimeOf(via.target);
    const item = throughRelations({ ...c, field: via.targetField, value }, target);
    // Any record that references this one matches: this id is among the ones they hold. Only
    // those that hold one: a null in the set would make `not in` unknown for every record.
    const held: Condition = { kind: "field", field: via.field, op: "isNull", value: false };
    if (via.reverse)
      return {
        kind: "field",
        field: "id",
        op: "in",
        value: {
          kind: "subselect",
          table: target.resource.name,
          column: via.field,
          where: { kind: "and", items: [item, held] },
          fields: target.rulePaths,
        },
      };
    return {
      kind: "related",
      from: rt.resource.name,
      via: via.field,
      table: target.resource.name,
      fields: target.rulePaths,
      item,
      scope: undefined,
    };
  });
}

function subSelect(values: ValuesOf, rt: Pick<ResourceRuntime, "relations" | "runtimeOf">): SubSelect {
  const source = rt.relations.resource(values.resource);
  if (!source) throw new Error(`crudkit: valuesOf(): there is no resource named "${values.resource}".`);
  const other = rt.runtimeOf(source.name);
  if (!other.ruleFields.has(values.column))
    throw new Error(
      `crudkit: valuesOf(): "${values.column}" is not a field of "${source.name}" a rule can name.`,
    );
  const parsed = other.parseRule(values.where, `valuesOf("${source.name}")`);
  const fixed = new Set(values.fixed);
  const where =
    parsed && fixed.size > 0
      ? mapFieldConditions(parsed, (c) => (fixed.has(c.field) ? { ...c, fixed: true } : c))
      : parsed;
  return { kind: "subselect", table: source.name, column: values.column, where, fields: other.rulePaths };
}

/**
 * A plugin rule's condition over the plugin's own table, with each `valuesOf` (a `memberOf` on an
 * audit entry's scope, say) made the semi-join over its resource's table.
 */
export function pluginRuleSets(
  condition: Condition,
  app: Pick<ResourceRuntime, "relations" | "runtimeOf">,
): Condition {
  return mapFieldConditions(condition, (c) =>
    c.value instanceof ValuesOf ? { ...c, value: subSelect(c.value, app) } : c,
  );
}

/**
 * The value `path` names from a record of `rt`'s resource: one of its fields (`orgId`), or a field
 * of the record a reference reaches, one or two hops (`project.orgId`), read on `db` (a write's
 * transaction sees its own changes). Null where a reference is empty or its record gone; undefined
 * when the resource has no such path.
 */
export async function valueAt(
  rt: ResourceRuntime,
  record: Readonly<Record<string, unknown>>,
  path: string,
  db: Kysely<any>,
): Promise<unknown> {
  if (rt.ruleFields.has(path)) return record[path] ?? null;
  const via = rt.rulePaths.get(path)?.via;
  // A reverse path names many records' values, not one.
  if (!via || via.reverse) return undefined;
  const id = record[via.field];
  if (typeof id !== "string") return null;
  const target = rt.runtimeOf(via.target);
  const next = await target.store.findById(db, id);
  return next ? valueAt(target, next, via.targetField, db) : null;
}
