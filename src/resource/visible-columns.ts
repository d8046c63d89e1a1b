// Field rules in SQL: a field the caller may not read is not selected at all, so its value never
// leaves the database for her (a read, a list page, an expansion). A field she may read on some
// rows only (a record-aware rule) is selected through its condition:
//
//   CASE WHEN <rule> THEN "internalNotes" END AS "internalNotes",
//   CASE WHEN <rule> THEN 1 ELSE 0 END AS "ck_v0"
//
// and taken out of the rows where the marker says 0, so it is absent there (not null). The fields
// are still taken out of what she is answered with afterwards (`withoutHidden`): a read whose
// hooks see the whole record selects every column.

import { type AliasedRawBuilder, type Expression, type SelectQueryBuilder, type SqlBool, sql } from "kysely";
import type { Condition } from "../query/where.ts";
import type { CompiledWhere } from "../query/where-sql.ts";
import { gatesOf } from "./field-access.ts";

/** A field selected through its condition, and the column that says whether it held. */
export interface Gate {
  readonly field: string;
  readonly marker: string;
  readonly where: CompiledWhere;
}

/** What a statement selects for a caller: every column, or those she may read. */
export interface VisibleColumns {
  /** Part of a statement cache's key: "" for every column. */
  readonly key: string;
  /** The columns to select as they are; undefined for `*`. */
  readonly columns: readonly string[] | undefined;
  /** The fields selected through their conditions, when she reads some on some rows only. */
  readonly gates?: readonly Gate[];
  /** The gates' values, to bind with the statement's own. */
  readonly values?: Readonly<Record<string, unknown>>;
}

export const ALL_COLUMNS: VisibleColumns = { key: "", columns: undefined };

/** Compiles a gate's condition with slots named `<prefix>0`, `<prefix>1`… */
export type CompileGate = (condition: Condition, prefix: string) => CompiledWhere;

/**
 * The columns of a table a caller may read: all of `columns` but `hidden`, keeping `always` (the
 * id, the sort column a cursor is made from) even when hidden, for crudkit's own use; the fields
 * `hidden` gates, through their conditions.
 */
export function visibleColumns(
  columns: readonly string[],
  hidden: ReadonlySet<string> | undefined,
  always: readonly string[] = ["id"],
  compile?: CompileGate,
): VisibleColumns {
  const gated = compile && gatesOf(hidden);
  if ((!hidden || hidden.size === 0) && !gated) return ALL_COLUMNS;
  // A field she reads on some rows only goes through its condition even where crudkit needs it
  // (a sort column makes the cursor: there it is null where the rule fails); never the id.
  const selected = columns.filter(
    (c) => c === "id" || (gated?.has(c) !== true && (always.includes(c) || !hidden!.has(c))),
  );
  if (!gated) {
    if (selected.length === columns.length) return ALL_COLUMNS;
    return { key: selected.join(","), columns: selected };
  }
  const gates: Gate[] = [];
  const values: Record<string, unknown> = {};
  for (const [field, condition] of gated) {
    if (!columns.includes(field) || field === "id" || hidden!.has(field)) continue;
    const where = compile(condition, `g${gates.length}_`);
    Object.assign(values, where.values);
    gates.push({ field, marker: `ck_v${gates.length}`, where });
  }
  const key = `${selected.join(",")}|${gates.map((g) => `${g.field}:${g.where.shape}`).join(";")}`;
  return { key, columns: selected, gates, values };
}

/** `select *`, or the visible columns only (gated ones through their conditions). */
export function selectVisible<DB, TB extends keyof DB, O>(
  query: SelectQueryBuilder<DB, TB, O>,
  visible: VisibleColumns,
): SelectQueryBuilder<DB, TB, any> {
  if (!visible.columns) return query.selectAll();
  const plain = query.select(visible.columns as any);
  if (!visible.gates?.length) return plain;
  return plain.select(
    visible.gates.flatMap(({ field, marker, where }) => {
      const holds = where.build();
      return [
        sql`case when ${holds} then ${sql.ref(field)} end`.as(field),
        sql`case when ${holds} then 1 else 0 end`.as(marker),
      ];
    }) as any,
  );
}

/**
 * Over a derived table (`ranked`) whose rows carry the gates' markers (`gateMarkers` selected
 * inside it): the visible columns, each gated one only where its marker is 1.
 */
export function selectVisibleFrom(alias: string, all: readonly string[], visible: VisibleColumns): unknown[] {
  const columns: unknown[] = (visible.columns ?? all).map((c) => sql.ref(`${alias}.${c}`));
  for (const { field, marker } of visible.gates ?? [])
    columns.push(
      sql`case when ${sql.ref(`${alias}.${marker}`)} = 1 then ${sql.ref(`${alias}.${field}`)} end`.as(field),
      sql.ref(`${alias}.${marker}`),
    );
  return columns;
}

/** The gates' markers, for a statement whose rows are read again from outside (see above). */
export function gateMarkers(visible: VisibleColumns): AliasedRawBuilder<number, string>[] {
  return (visible.gates ?? []).map(({ marker, where }) =>
    sql<number>`case when ${where.build() as Expression<SqlBool>} then 1 else 0 end`.as(marker),
  );
}

/** A row read with `visible` as a record: a gated field is absent where its condition did not hold. */
export function decodeVisible(
  row: Record<string, unknown>,
  visible: VisibleColumns,
  fromRow: (row: Record<string, unknown>) => Record<string, unknown>,
): Record<string, unknown> {
  const gates = visible.gates;
  if (!gates?.length) return fromRow(row);
  const shut: string[] = [];
  for (const { field, marker } of gates) if (!isOn(row[marker])) shut.push(field);
  const record = fromRow(row);
  for (const { marker } of gates) delete record[marker];
  for (const field of shut) delete record[field];
  return record;
}

function isOn(value: unknown): boolean {
  return value === 1 || value === true || value === "1" || value === 1n;
}
