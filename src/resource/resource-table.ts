// A resource's table: one column per field, `id` as primary key, an index for the default order.

import type { ColumnDefinition, ColumnType, TableDefinition } from "../db/table-definition.ts";
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
  const sortKey = resource.timestamps ? ["createdAt", "id"] : [];
  return {
    name: resource.name,
    columns,
    indexes: sortKey.length ? [{ name: `${resource.name}_createdAt_id_idx`, columns: sortKey }] : [],
  };
}

/** The schema's default, evaluated once: what existing rows get when the column is added later. */
function defaultOf(field: Field): unknown {
  const result = field.schema.safeParse(undefined);
  return result.success ? result.data : undefined;
}
