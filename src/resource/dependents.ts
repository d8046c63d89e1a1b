// What deleting a record does to the records that point at it, inside the delete's transaction:
// `restrict` refuses (409 naming the referencing resource), `cascade` deletes them (and what
// points at them, in turn), `setNull` clears their field. Each record changed this way runs its
// resource's in-transaction hooks (so audit records it) and, after commit, its commit hooks
// (so the cache forgets it). Their own access rules are not asked: the change is part of the
// delete the caller was allowed to make, as a database's ON DELETE would be.

import type { Kysely } from "kysely";
import type { EndpointContext } from "../core/endpoint.ts";
import { APIError } from "../core/errors.ts";
import { uuidv7 } from "../core/id.ts";
import type { User } from "../core/identity.ts";
import { foreignKeyName } from "../db/table-definition.ts";
import { syncFiles } from "./file-fields.ts";
import { runAfterCommit, runAll } from "./hooks.ts";
import type { ReverseRelation } from "./relations.ts";
import { extend, hookContextOf, type ResourceRuntime } from "./runtime.ts";

type Row = Record<string, unknown>;

/** Work left for after the commit: the commit hooks of every record changed along the way. */
export type AfterCommit = (() => Promise<void>)[];

export interface Releasing {
  ctx: EndpointContext;
  user: User | null;
  /** Records already handled (`resource:id`), so a cycle in the data ends. */
  seen: Set<string>;
  after: AfterCommit;
  /** Resources changed, each told once after commit (afterWriteCommit). */
  touched: Set<string>;
  /** The id of the delete everything here follows from (its audit entry's id). */
  changeId: string;
}

export function newReleasing(ctx: EndpointContext, user: User | null): Releasing {
  return { ctx, user, seen: new Set(), after: [], touched: new Set(), changeId: uuidv7() };
}

/** Whether deleting a record of `rt`'s resource has to look at other records first. */
export function hasDependents(rt: ResourceRuntime): boolean {
  return rt.relations.dependents(rt.resource.name).length > 0;
}

/** Refuses, cascades and clears, for the record `id` of `rt`'s resource about to be deleted. */
export async function releaseDependents(
  rt: ResourceRuntime,
  trx: Kysely<any>,
  id: string,
  releasing: Releasing,
): Promise<void> {
  const relations = rt.relations.dependents(rt.resource.name);
  if (relations.length === 0) return;
  releasing.seen.add(`${rt.resource.name}:${id}`);
  // Refusals first: nothing is changed for a delete that cannot happen.
  for (const relation of relations)
    if (
      relation.onDelete === "restrict" &&
      (await rt.runtimeOf(relation.source).store.isReferenced(trx, relation.field, id))
    )
      throw stillReferenced(rt.resource.name, relation);
  for (const relation of relations) {
    if (relation.onDelete === "restrict") continue;
    const child = rt.runtimeOf(relation.source);
    const records = await child.store.referencing(trx, relation.field, id);
    if (records.length === 0) continue;
    if (relation.onDelete === "cascade") await cascade(child, trx, relation, id, records, releasing);
    else await clear(child, trx, relation, id, records, releasing);
    releasing.touched.add(child.resource.name);
  }
}

async function cascade(
  child: ResourceRuntime,
  trx: Kysely<any>,
  relation: ReverseRelation,
  parentId: string,
  records: Row[],
  releasing: Releasing,
): Promise<void> {
  const { hooks } = child;
  const pending = records.filter((r) => !releasing.seen.has(`${child.resource.name}:${r.id}`));
  for (const record of pending) await releaseDependents(child, trx, String(record.id), releasing);
  await child.store.deleteReferencing(trx, relation.field, parentId);
  const owned = child.fileFields;
  for (const previous of pending) {
    if (owned) {
      const released = await syncFiles(owned, trx, releasing.ctx, child.resource.name, previous, undefined);
      if (released.length) releasing.after.push(() => owned.files.collect(released));
    }
    const base = extend(
      hookContextOf(releasing.ctx, child.resource.name, "delete", releasing.user, String(previous.id)),
      { causedBy: releasing.changeId },
    );
    await runAll(hooks.afterDelete, extend(base, { db: trx, previous }));
    if (hooks.afterDeleteCommit.length)
      releasing.after.push(() =>
        runAfterCommit(hooks.afterDeleteCommit, extend(base, { previous }), child.log),
      );
  }
}

async function clear(
  child: ResourceRuntime,
  trx: Kysely<any>,
  relation: ReverseRelation,
  parentId: string,
  records: Row[],
  releasing: Releasing,
): Promise<void> {
  const { hooks } = child;
  const updatedAt = child.resource.timestamps ? new Date().toISOString() : undefined;
  await child.store.clearReferencing(trx, relation.field, parentId, updatedAt);
  for (const previous of records) {
    const record: Row = extend(previous, { [relation.field]: null });
    if (updatedAt !== undefined) record.updatedAt = updatedAt;
    const base = extend(
      hookContextOf(releasing.ctx, child.resource.name, "update", releasing.user, String(previous.id)),
      { causedBy: releasing.changeId },
    );
    await runAll(hooks.afterUpdate, extend(base, { db: trx, record, previous }));
    if (hooks.afterUpdateCommit.length)
      releasing.after.push(() =>
        runAfterCommit(hooks.afterUpdateCommit, extend(base, { record, previous }), child.log),
      );
  }
}

/** After the delete committed: the commit hooks of every record it changed. */
export async function afterRelease(rt: ResourceRuntime, releasing: Releasing): Promise<void> {
  for (const work of releasing.after) await work();
  for (const name of releasing.touched) {
    const child = rt.runtimeOf(name);
    if (child.hooks.afterWriteCommit.length)
      await runAfterCommit(
        child.hooks.afterWriteCommit,
        hookContextOf(releasing.ctx, name, "delete", releasing.user),
        child.log,
      );
  }
}

function stillReferenced(resource: string, relation: ReverseRelation): APIError {
  return new APIError(
    "CONFLICT",
    `This ${resource} is still referenced by records of "${relation.source}" (field "${relation.field}"); delete or change them first.`,
    {
      details: [
        { path: `${relation.source}.${relation.field}`, message: `Still references this ${resource}.` },
      ],
    },
  );
}

/** A foreign key refused the delete after the checks (a record added meanwhile): the same 409. */
export function referencedConflict(rt: ResourceRuntime, constraint: string | undefined): APIError {
  const relations = rt.relations.dependents(rt.resource.name);
  const named = relations.find((r) => constraint !== undefined && constraint === keyNameOf(r));
  if (named) return stillReferenced(rt.resource.name, named);
  return new APIError(
    "CONFLICT",
    `This ${rt.resource.name} is still referenced by other records; delete or change them first.`,
  );
}

function keyNameOf(relation: ReverseRelation): string {
  return foreignKeyName(relation.source, relation.field);
}
