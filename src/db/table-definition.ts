import { createHash } from "node:crypto";

// Tables as data: resources and plugins describe what they need; migrations create it.

export type ColumnType = "text" | "integer" | "number" | "boolean" | "date" | "json";

export interface ColumnDefinition {
  type: ColumnType;
  primaryKey?: boolean;
  /** @default false */
  notNull?: boolean;
  unique?: boolean;
  /** Filled with the current time when an insert leaves it out. */
  defaultNow?: boolean;
  /** What existing rows get when this column is added later (the schema's default, evaluated once). */
  default?: unknown;
  /** Allowed values (a CHECK constraint). */
  enumValues?: readonly string[];
  /** A foreign key to another table's `id`, and what deleting that row does to this one. */
  references?: ForeignKey;
}

export interface ForeignKey {
  table: string;
  onDelete: "restrict" | "cascade" | "set null";
}

export interface IndexDefinition {
  name: string;
  columns: readonly string[];
  unique?: boolean;
  /** A trigram index (PostgreSQL's pg_trgm, one column): serves `ilike '%term%'`. @default btree */
  method?: "trigram";
}

export interface TableDefinition {
  name: string;
  columns: Readonly<Record<string, ColumnDefinition>>;
  indexes?: readonly IndexDefinition[];
  /** Text columns searched by substring: each database indexes them its own way (search-index.ts). */
  search?: readonly string[];
}

/**
 * `<table>_<columns>_idx` (`_uniq` for unique ones): the names the planner recognizes as crudkit's,
 * to drop them when they leave the definition. Long names are shortened with a hash (63 bytes fit
 * PostgreSQL and MySQL).
 */
export function indexName(
  table: string,
  columns: readonly string[],
  unique: boolean,
  suffix = unique ? "uniq" : "idx",
): string {
  const name = `${table}_${columns.join("_")}_${suffix}`;
  if (name.length <= 63) return name;
  const hash = createHash("sha256").update(columns.join(",")).digest("hex").slice(0, 10);
  return `${table.slice(0, 40)}_${hash}_${suffix}`;
}

/** `<table>_<column>_fkey`, shortened like index names: how the planner finds its foreign keys. */
export function foreignKeyName(table: string, column: string): string {
  return indexName(table, [column], false, "fkey");
}
