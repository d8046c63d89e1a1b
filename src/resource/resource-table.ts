// A resource's table: one column per field, `id` as primary key, an index for the default order.

import {
  type ColumnDefinition,
  type ColumnType,
  type IndexDefinition,
  indexName,
  type TableDefinition,
} from "../db/table-definition.ts";
import type { Field, FieldKind } from "../schema/field-model.ts";
import type { AnyResource } from "./types.ts";

const ON_DELETE = { restrict: "restrict", cascade: "cascade", setNull: "set null" } as const;

const COLUMN_TYPE: Record<FieldKind, ColumnType> = {
  string: "text",
  enum: "text",
  integer: "integer",
  number: "number",
  boolean: "boolean",
  date: "date",
  json: "json",
};

/** `resource`'s table, with `ruleIndexes` (see rule-indexes.ts) among its indexes. */
export function resourceTable(resource: AnyResource, ruleIndexes: readonly string[][] = []): TableDefinition {
  const columns: Record<string, ColumnDefinition> = {};
  for (const field of resource.fields) {
    columns[field.name] = {
      type: COLUMN_TYPE[field.kind],
      primaryKey: field.name === "id",
      notNull: !field.optional && !field.nullable,
      ...(field.enumValues ? { enumValues: field.enumValues } : {}),
      ...(field.hasDefault && field.name !== "id" ? { default: defaultOf(field) } : {}),
      ...(field.reference
        ? { references: { table: field.reference.target, onDelete: ON_DELETE[field.reference.onDelete] } }
        : {}),
    };
  }
  const order = resource.timestamps ? ["createdAt", "id"] : ["id"];
  const indexes: IndexDefinition[] = [];
  const add = (columns: readonly string[], unique: boolean) => {
    const name = indexName(resource.name, columns, unique);
    if (!indexes.some((i) => i.name === name)) indexes.push({ name, columns, ...(unique ? { unique } : {}) });
  };
  if (resource.timestamps) add(order, false);
  // A row rule on the owner lists `where owner = ? order by createdAt desc, id desc`.
  if (resource.access.owner) add([resource.access.owner, ...order], false);
  for (const columns of resource.unique) add(columns, true);
  // Deletes look up the records pointing at one (onDelete), and reverse expansions list them in order.
  for (const field of resource.fields) if (field.reference) add([field.name, ...order], false);
  // Lists sort by a field and then by id: with id at its end, an index serves the whole order.
  for (const columns of resource.indexes) add(columns.includes("id") ? columns : [...columns, "id"], false);
  // What memberOf paths through this table read it by: (id, field), answered from the index alone.
  for (const columns of ruleIndexes) add(columns, false);
  return {
    name: resource.name,
    columns,
    indexes,
    ...(resource.searchable.length > 0 ? { search: resource.searchable } : {}),
  };
}

/** The schema's default, evaluated once: what existing rows get when the column is added later. */
function defaultOf(field: Field): unknown {
  const result = field.schema.safeParse(undefined);
  return result.success ? result.data : undefined;
}
