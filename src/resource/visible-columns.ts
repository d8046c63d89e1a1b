// Field rules in SQL: a field the caller may not read is not selected at all, so its value never
// leaves the database for her (a read, a list page, an expansion). The fields are still taken out
// of what she is answered with afterwards (`withoutHidden`): a read whose hooks see the whole
// record selects every column.

import type { SelectQueryBuilder } from "kysely";

/** What a statement selects for a caller: every column, or those she may read. */
export interface VisibleColumns {
  /** Part of a statement cache's key: "" for every column. */
  readonly key: string;
  /** The columns to select; undefined for `*`. */
  readonly columns: readonly string[] | undefined;
}

export const ALL_COLUMNS: VisibleColumns = { key: "", columns: undefined };

/**
 * The columns of a table a caller may read: all of `columns` but `hidden`, keeping `always` (the
 * id, the sort column a cursor is made from) even when hidden, for crudkit's own use.
 */
export function visibleColumns(
  columns: readonly string[],
  hidden: ReadonlySet<string> | undefined,
  always: readonly string[] = ["id"],
): VisibleColumns {
  if (!hidden || hidden.size === 0) return ALL_COLUMNS;
  const selected = columns.filter((c) => !hidden.has(c) || always.includes(c));
  if (selected.length === columns.length) return ALL_COLUMNS;
  return { key: selected.join(","), columns: selected };
}

/** `select *`, or the visible columns only. */
export function selectVisible<DB, TB extends keyof DB, O>(
  query: SelectQueryBuilder<DB, TB, O>,
  visible: VisibleColumns,
): SelectQueryBuilder<DB, TB, any> {
  return visible.columns ? query.select(visible.columns as any) : query.selectAll();
}
