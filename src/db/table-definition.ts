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
}

export interface IndexDefinition {
  name: string;
  columns: readonly string[];
  unique?: boolean;
}

export interface TableDefinition {
  name: string;
  columns: Readonly<Record<string, ColumnDefinition>>;
  indexes?: readonly IndexDefinition[];
}
