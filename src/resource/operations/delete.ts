// DELETE /<resource>/:id → 200 with { success: true, id }; with If-Match, only if the record is
// still the version named (412 otherwise).

import type { Endpoint } from "../../core/endpoint.ts";
import { checkIfMatch } from "../../core/etag.ts";
import { violatedForeignKey } from "../../db/data-errors.ts";
import { admit } from "../admission.ts";
import {
  afterRelease,
  hasDependents,
  newReleasing,
  referencedConflict,
  releaseDependents,
} from "../dependents.ts";
import { withoutHidden } from "../field-access.ts";
import { syncFiles } from "../file-fields.ts";
import { runAfterCommit, runAll } from "../hooks.ts";
import { ifMatchOf } from "../if-match.ts";
import {
  capitalize,
  extend,
  hookContext,
  inTransaction,
  notFound,
  type ResourceRuntime,
} from "../runtime.ts";

export function deleteEndpoint(rt: ResourceRuntime): Endpoint {
  const { resource, hooks } = rt;
  const dependents = hasDependents(rt);
  const owned = rt.fileFields;
  return {
    method: "DELETE",
    path: `/${resource.name}/:id`,
    operationName: `delete${capitalize(resource.name)}`,
    async handler(ctx) {
      const { user, scope, hidden } = await admit(rt, ctx, "delete");
      const ifMatch = ifMatchOf(rt, ctx);
      const id = ctx.params.id!;
      // Outside the caller's rows is a missing id, and no hook learns of it.
      if (scope && hooks.beforeDelete.length && !(await rt.store.findById(ctx.db, id, scope)))
        notFound(rt, id);
      const releasing = dependents ? newReleasing(ctx, user) : undefined;
      const base = hookContext(ctx, rt, "delete", user, id);
      // What a cascade changes names this delete (its audit entry is marked as caused by it).
      if (releasing) base.changeId = releasing.changeId;
      if (hooks.beforeDelete.length) await runAll(hooks.beforeDelete, base);
      let released: string[] = [];
      const previous = await inTransaction(
        ctx.db,
        hooks.afterDelete.length > 0 || dependents || owned !== undefined || ifMatch !== undefined,
        async (db) => {
          // The record itself first (within the caller's rows), then what points at it, then the delete.
          if (releasing || ifMatch) {
            const current = await rt.store.findForUpdate(db, id, scope);
            if (!current) notFound(rt, id);
            if (ifMatch) checkIfMatch(ifMatch, withoutHidden(current, hidden), resource.name);
          }
          if (releasing) await releaseDependents(rt, db, id, releasing);
          const previous = await rt.store.delete(db, id, scope).catch((error) => {
            const violation = violatedForeignKey(error);
            throw violation ? referencedConflict(rt, violation.constraint) : error;
          });
          if (!previous) notFound(rt, id);
          if (owned) released = await syncFiles(owned, db, ctx, resource.name, previous, undefined);
          await runAll(hooks.afterDelete, extend(base, { db, previous }));
          return previous;
        },
      );
      if (released.length) await owned!.files.collect(released);
      if (releasing) await afterRelease(rt, releasing);
      if (hooks.afterDeleteCommit.length)
        await runAfterCommit(hooks.afterDeleteCommit, extend(base, { previous }), rt.log);
      if (hooks.afterWriteCommit.length) await runAfterCommit(hooks.afterWriteCommit, base, rt.log);
      return { success: true, id };
    },
  };
}
