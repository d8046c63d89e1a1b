// A reference is a read: a create or update may only point at a record its caller may read under
// the target's `read` rule. Otherwise she learns which ids exist elsewhere, attaches her records
// to another tenant's (whose delete then cascades into hers or is blocked by them). The rules are
// asked before the write's transaction (a rule may query the database, which on SQLite would wait
// for that transaction); then, in the transaction, one query per row-ruled target reads the row
// under the rule and share-locks it, so the write points at the row as it was checked. A record
// she may not read answers exactly as a missing one.

import type { Kysely } from "kysely";
import type { EndpointContext } from "../core/endpoint.ts";
import type { User } from "../core/identity.ts";
import type { Condition } from "../query/where.ts";
import type { Field } from "../schema/field-model.ts";
import { missingReferences } from "./reference-errors.ts";
import { type Readers, readerOf } from "./related-access.ts";
import type { ResourceRuntime } from "./runtime.ts";

type Row = Record<string, unknown>;

/** What the transaction must still check: each reference whose target's read rule has a row rule. */
export interface ReferenceChecks {
  /** `ids`: one for a reference, the list for a list of ids (`referencesMany`). */
  readonly rows: readonly {
    field: Field;
    target: ResourceRuntime;
    ids: readonly string[];
    scope: Condition;
  }[];
}

/** The reference fields whose writes are checked (`requireRead`, the default). */
export function checkedReferences(fields: readonly Field[]): readonly Field[] {
  return fields.filter((f) => f.reference?.requireRead === true);
}

/**
 * Before the write's transaction: asks the read rule of each record `written` points at. A target
 * whose rule refuses the caller is a 400 here (the same as a missing id); one whose rule allows
 * every row is left to the foreign key, which answers a missing id with the same 400. Returns the
 * row-ruled checks the transaction must run, or undefined when there are none. Server code
 * (`overrideAccess`) is not checked, and neither is the owner field holding the caller's own id.
 */
export async function referenceChecks(
  rt: ResourceRuntime,
  ctx: EndpointContext,
  user: User | null,
  written: Row,
  readers: Readers = new Map(),
): Promise<ReferenceChecks | undefined> {
  const lists = rt.resource.many.filter((f) => f.many!.requireRead);
  if (ctx.overrideAccess || (rt.references.length === 0 && lists.length === 0)) return undefined;
  const refused: Field[] = [];
  const rows: { field: Field; target: ResourceRuntime; ids: readonly string[]; scope: Condition }[] = [];
  const ask = async (field: Field, ids: readonly string[]) => {
    const target = rt.runtimeOf((field.reference ?? field.many)!.target);
    const reader = await readerOf(target, ctx, readers);
    if (reader === null) refused.push(field);
    else if (reader.scope) rows.push({ field, target, ids, scope: reader.scope });
  };
  for (const field of rt.references) {
    const id = written[field.name];
    if (typeof id !== "string") continue;
    if (field.name === rt.resource.access.owner && user !== null && id === user.id) continue;
    await ask(field, [id]);
  }
  for (const field of lists) {
    const ids = written[field.name];
    if (Array.isArray(ids) && ids.length > 0) await ask(field, ids as string[]);
  }
  if (refused.length > 0) throw missingReferences(refused);
  return rows.length > 0 ? { rows } : undefined;
}

/** In the write's transaction: each row-ruled reference must name a row the caller may read. */
export async function checkReferenceRows(trx: Kysely<any>, checks: ReferenceChecks): Promise<void> {
  const missing: Field[] = [];
  for (const { field, target, ids, scope } of checks.rows) {
    // A reference's row is share-locked as it is checked; a list's are read in one statement.
    const held = field.many
      ? (await target.store.related.byIds(trx, ids, scope)).length === ids.length
      : await target.store.holds(trx, ids[0]!, scope);
    if (!held) missing.push(field);
  }
  if (missing.length > 0) throw missingReferences(missing);
}
