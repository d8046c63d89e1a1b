// What a write answers, and checks, when the caller reads or writes some fields on some rows only
// (record-aware field rules). Only the database can say whether a row matches such a rule (it may
// name relations and memberships), so the stored row is asked: one statement per write, and none
// for a caller without such rules.

import type { Kysely } from "kysely";
import type { Condition } from "../query/where.ts";
import { gatesOf, hiddenSomewhere, mayNotWrite, withoutHidden } from "./field-access.ts";
import type { ResourceRuntime } from "./runtime.ts";

type Row = Record<string, unknown>;

/**
 * The record as the caller sees it once written: without her hidden fields, and each field she
 * reads on some rows only, read again through its rule from the stored row (absent where it fails).
 */
export async function seenAfterWrite(
  rt: ResourceRuntime,
  db: Kysely<any>,
  record: Row,
  hidden: ReadonlySet<string>,
  /** For an update: the fields of those she could read on the record before it (`shownOn`). */
  shownBefore?: ReadonlySet<string>,
): Promise<Row> {
  const gates = gatesOf(hidden);
  if (!gates) return withoutHidden(record, hidden);
  const stored = await rt.store.findById(db, String(record.id), undefined, hidden);
  const seen = withoutHidden(stored ?? withoutHidden(record, hiddenSomewhere(hidden)), hidden);
  if (!shownBefore) return seen;
  const unseen = [...gates.keys()].filter((field) => !shownBefore.has(field));
  return unseen.length ? withoutHidden(seen, new Set(unseen)) : seen;
}

/** Of the fields the caller reads on some rows only, those she may read on the record `id` as stored now. */
export async function shownOn(
  rt: ResourceRuntime,
  db: Kysely<any>,
  id: string,
  hidden: ReadonlySet<string>,
): Promise<ReadonlySet<string> | undefined> {
  const gates = gatesOf(hidden);
  if (!gates) return undefined;
  const shown = new Set<string>();
  for (const [field, gate] of gates) if (await rt.store.holds(db, id, gate)) shown.add(field);
  return shown;
}

/**
 * Refuses, inside the write's transaction, a value of a field the caller may write on some rows
 * only, when the row as stored is not one of them: the same 403 as for a field she may not write.
 */
export async function checkGatedWrites(
  rt: ResourceRuntime,
  db: Kysely<any>,
  id: string,
  gates: ReadonlyMap<string, Condition> | undefined,
): Promise<void> {
  if (!gates) return;
  for (const [field, gate] of gates)
    if (!(await rt.store.holds(db, id, gate))) throw mayNotWrite(field, rt.resource.name);
}
