// What the list parser (query/) enforces, as the document needs it. This folder sits below
// query/, so the app (the composition root) hands these in rather than the document importing
// them: one source of truth, and the imports still point down.

/** The kinds of field a filter may name. */
export type FilterKind = "string" | "enum" | "integer" | "number" | "boolean" | "date" | "list";

/** Every filter operator; the parser's own `Operator` must fit here, or the app does not compile. */
export type FilterOperator =
  | "eq"
  | "ne"
  | "gt"
  | "gte"
  | "lt"
  | "lte"
  | "in"
  | "nin"
  | "contains"
  | "startsWith"
  | "endsWith"
  | "isNull"
  | "has";

/** A field `filter[…]` may name: its own, or one a reference reaches (`project.orgId`). */
export interface FilterFieldShape {
  kind: FilterKind;
  enumValues?: readonly string[];
}

/** The limits and operators of the list query language. */
export interface ListLanguage {
  operators: Readonly<Record<FilterKind, ReadonlySet<FilterOperator>>>;
  countModes: ReadonlySet<string>;
  maxPage: number;
  maxSearchLength: number;
  maxFilterValues: number;
  maxFilterText: number;
  /** How deep `expand` goes (`author.company.country`). */
  maxExpandDepth: number;
}

/** One resource list's rules, as its endpoint enforces them. */
export interface ListShape {
  defaultLimit: number;
  maxLimit: number;
  count?: string;
  sortable: ReadonlySet<string>;
  searchable: readonly string[];
  filterable: ReadonlyMap<string, FilterFieldShape>;
}
