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
  readonly rows: readonly { field: Field; target: ResourceRuntime; id: string; scope: Condition }[];
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
  if (ctx.overrideAccess || rt.references.length === 0) return undefined;
  const refused: Field[] = [];
  const rows: { field: Field; target: ResourceRuntime; id: string; scope: Condition }[] = [];
  for (const field of rt.references) {
    const id = written[field.name];
    if (typeof id !== "string") continue;
    if (field.name === rt.resource.access.owner && user !== null && id === user.id) continue;
    const target = rt.runtimeOf(field.reference!.target);
    const reader = await readerOf(target, ctx, readers);
    if (reader === null) refused.push(field);
    else if (reader.scope) rows.push({ field, target, id, scope: reader.scope });
  }
  if (refused.length > 0) throw missingReferences(refused);
  return rows.length > 0 ? { rows } : undefined;
}

/** In the write's transaction: each row-ruled reference must name a row the caller may read. */
export async function checkReferenceRows(trx: Kysely<any>, checks: ReferenceChecks): Promise<void> {
  const missing: Field[] = [];
  for (const { field, target, id, scope } of checks.rows)
    if (!(await target.store.holds(trx, id, scope))) missing.push(field);
  if (missing.length > 0) throw missingReferences(missing);
}
