// A resource's table: one column per field, `id` as primary key, an index for the default order.

import { createHash } from "node:crypto";
import type {
  ColumnDefinition,
  ColumnType,
  IndexDefinition,
  TableDefinition,
} from "../db/table-definition.ts";
import type { Field, FieldKind } from "../schema/field-model.ts";
import type { AnyResource } from "./types.ts";

const COLUMN_TYPE: Record<FieldKind, ColumnType> = {
  string: "text",
  enum: "text",
  integer: "integer",
  number: "number",
  boolean: "boolean",
  date: "date",
  json: "json",
};

export function resourceTable(resource: AnyResource): TableDefinition {
  const columns: Record<string, ColumnDefinition> = {};
  for (const field of resource.fields) {
    columns[field.name] = {
      type: COLUMN_TYPE[field.kind],
      primaryKey: field.name === "id",
      notNull: !field.optional && !field.nullable,
      ...(field.enumValues ? { enumValues: field.enumValues } : {}),
      ...(field.hasDefault && field.name !== "id" ? { default: defaultOf(field) } : {}),
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
  // Lists sort by a field and then by id: with id at its end, an index serves the whole order.
  for (const columns of resource.indexes) add(columns.includes("id") ? columns : [...columns, "id"], false);
  return { name: resource.name, columns, indexes };
}

/**
 * `<table>_<columns>_idx` (`_uniq` for unique ones): the names the planner recognizes as crudkit's,
 * to drop them when they leave the definition. Long names are shortened with a hash (63 bytes fit
 * PostgreSQL and MySQL).
 */
export function indexName(table: string, columns: readonly string[], unique: boolean): string {
  const suffix = unique ? "uniq" : "idx";
  const name = `${table}_${columns.join("_")}_${suffix}`;
  if (name.length <= 63) return name;
  const hash = createHash("sha256").update(columns.join(",")).digest("hex").slice(0, 10);
  return `${table.slice(0, 40)}_${hash}_${suffix}`;
}

/** The schema's default, evaluated once: what existing rows get when the column is added later. */
function defaultOf(field: Field): unknown {
  const result = field.schema.safeParse(undefined);
  return result.success ? result.data : undefined;
}
