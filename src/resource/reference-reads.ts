// A reference is a read: a create or update may only point at a record its caller may read under
// the target's `read` rule. Otherwise she learns which ids exist elsewhere, attaches her records
// to another tenant's (whose delete then cascades into hers or is blocked by them). The check runs
// in the write's transaction and share-locks the row it checked, so the write points at that row
// as it was checked; a record she may not read answers exactly as a missing one.

import type { Kysely } from "kysely";
import type { EndpointContext } from "../core/endpoint.ts";
import type { Field } from "../schema/field-model.ts";
import { missingReferences } from "./reference-errors.ts";
import { type Readers, readerOf } from "./related-access.ts";
import type { ResourceRuntime } from "./runtime.ts";

type Row = Record<string, unknown>;

/** The reference fields whose writes are checked (`requireRead`, the default). */
export function checkedReferences(fields: readonly Field[]): readonly Field[] {
  return fields.filter((f) => f.reference?.requireRead === true);
}

/**
 * Whether a write must check references before it runs (and so run in a transaction): a field it
 * sets names a record, and the caller is not server code.
 */
export function checksReferences(rt: ResourceRuntime, ctx: EndpointContext, written: Row): boolean {
  if (ctx.overrideAccess) return false;
  for (const field of rt.references) if (typeof written[field.name] === "string") return true;
  return false;
}

/**
 * In the write's transaction: refuses (400, as for a missing id) every reference in `written` to a
 * record the caller may not read. A target whose read rule allows every row is left to the
 * foreign key, which answers a missing id with the same 400. One query per field, the same for a
 * missing and an unreadable record.
 */
export async function checkReferences(
  rt: ResourceRuntime,
  ctx: EndpointContext,
  trx: Kysely<any>,
  written: Row,
  readers: Readers = new Map(),
): Promise<void> {
  if (ctx.overrideAccess) return;
  const missing: Field[] = [];
  for (const field of rt.references) {
    const id = written[field.name];
    if (typeof id !== "string") continue;
    const target = rt.runtimeOf(field.reference!.target);
    const reader = await readerOf(target, ctx, readers);
    if (reader === null) missing.push(field);
    else if (reader.scope && !(await target.store.holds(trx, id, reader.scope))) missing.push(field);
  }
  if (missing.length > 0) throw missingReferences(missing);
}
