// What deleting a record does to the records that point at it, inside the delete's transaction:
// `restrict` refuses (409 naming the referencing resource), `cascade` deletes them (and what
// points at them, in turn), `setNull` clears their field. Each record changed this way runs its
// resource's in-transaction hooks (so audit records it) and, after commit, its commit hooks
// (so the cache forgets it). Their own access rules are not asked: the change is part of the
// delete the caller was allowed to make, as a database's ON DELETE would be.

import type { EndpointContext } from "../core/endpoint.ts";
import { APIError } from "../core/errors.ts";
import { uuidv7 } from "../core/id.ts";
import type { User } from "../core/identity.ts";
import { foreignKeyName } from "../db/table-definition.ts";
import { syncFiles } from "./file-fields.ts";
import { junctionName } from "./many-fields.ts";
import type { ReverseRelation } from "./relations.ts";
import { extend, hookContextOf, type ResourceRuntime } from "./runtime.ts";
import type { Write } from "./write-pipeline.ts";

type Row = Record<string, unknown>;

export interface Releasing {
  ctx: EndpointContext;
  user: User | null;
  /** Records already handled (`resource:id`), so a cycle in the data ends. */
  seen: Set<string>;
  /** The id of the delete everything here follows from (its audit entry's id). */
  changeId: string;
}

export function newReleasing(ctx: EndpointContext, user: User | null): Releasing {
  return { ctx, user, seen: new Set(), changeId: uuidv7() };
}

/** Whether deleting a record of `rt`'s resource has to look at other records first. */
export function hasDependents(rt: ResourceRuntime): boolean {
  const { name } = rt.resource;
  return rt.relations.dependents(name).length > 0 || rt.relations.listedBy(name).length > 0;
}

/**
 * Refuses, cascades and clears, for the record `id` of `rt`'s resource about to be deleted: each
 * record changed is a change of the delete's write (its hooks told inside, and after commit).
 */
export async function releaseDependents(
  rt: ResourceRuntime,
  write: Write,
  id: string,
  releasing: Releasing,
): Promise<void> {
  const trx = write.db;
  const relations = rt.relations.dependents(rt.resource.name);
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
    if (relation.onDelete === "cascade") await cascade(child, write, relation, id, records, releasing);
    else await clear(child, write, relation, id, records, releasing);
  }
  for (const { source, field } of rt.relations.listedBy(rt.resource.name))
    await unlist(rt.runtimeOf(source), write, field, id, releasing);
}

/**
 * The lists of ids (referencesMany) of `child` that name the deleted `id` leave it: each record
 * whose list changes is an update of the delete's write (audit, events, the cache forgetting it),
 * as a reference set to null is.
 */
async function unlist(child: ResourceRuntime, write: Write, field: string, id: string, releasing: Releasing) {
  const rows = await write.db
    .selectFrom(junctionName(child.resource, { name: field }))
    .select("owner")
    .where("target", "=", id)
    .orderBy("owner")
    .execute();
  for (const { owner } of rows) {
    const previous = await child.store.findForUpdate(write.db, String(owner));
    if (!previous) continue;
    const list = (previous[field] as string[] | undefined) ?? [];
    const changes = { [field]: list.filter((target) => target !== id) };
    const record = await child.store.update(write.db, String(owner), changes);
    if (record)
      await write.changed(child, causedBy(releasing, child, "update", previous), { record, previous });
  }
}

/** What happens to the `records` of `child` that point at the deleted `parentId` through `relation`. */
type Release = (
  child: ResourceRuntime,
  write: Write,
  relation: ReverseRelation,
  parentId: string,
  records: Row[],
  releasing: Releasing,
) => Promise<void>;

/** Deleted, and what points at them released first (depth first). */
const cascade: Release = async (child, write, relation, parentId, records, releasing) => {
  const pending = records.filter((r) => !releasing.seen.has(`${child.resource.name}:${r.id}`));
  for (const record of pending) await releaseDependents(child, write, String(record.id), releasing);
  await child.store.deleteReferencing(write.db, relation.field, parentId);
  const owned = child.fileFields;
  for (const previous of pending) {
    if (owned) {
      const released = await syncFiles(
        owned,
        write.db,
        releasing.ctx,
        child.resource.name,
        previous,
        undefined,
      );
      if (released.length) write.afterCommit(() => owned.files.collect(released));
    }
    await write.changed(child, causedBy(releasing, child, "delete", previous), { previous });
  }
};

/** Their reference set to null (and `updatedAt` moved on). */
const clear: Release = async (child, write, relation, parentId, records, releasing) => {
  const updatedAt = child.resource.timestamps ? new Date().toISOString() : undefined;
  await child.store.clearReferencing(write.db, relation.field, parentId, updatedAt);
  for (const previous of records) {
    const record: Row = extend(previous, { [relation.field]: null });
    if (updatedAt !== undefined) record.updatedAt = updatedAt;
    await write.changed(child, causedBy(releasing, child, "update", previous), { record, previous });
  }
};

/** What the hooks of a record changed by the delete see: marked as caused by it. */
function causedBy(
  releasing: Releasing,
  child: ResourceRuntime,
  operation: "update" | "delete",
  previous: Row,
) {
  const context = hookContextOf(
    releasing.ctx,
    child.resource.name,
    operation,
    releasing.user,
    String(previous.id),
  );
  return extend(context, { causedBy: releasing.changeId });
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
