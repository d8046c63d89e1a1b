// DELETE /<resource>/:id → 200 with { success: true, id }; with If-Match, only if the record is
// still the version named (412 otherwise).

import type { Endpoint } from "../../core/endpoint.ts";
import { checkIfMatch } from "../../core/etag.ts";
import { admit } from "../admission.ts";
import { hasDependents, newReleasing, referencedConflict, releaseDependents } from "../dependents.ts";
import { syncFiles } from "../file-fields.ts";
import { seenAfterWrite } from "../gated-answer.ts";
import { runAll } from "../hooks.ts";
import { ifMatchOf } from "../if-match.ts";
import { capitalize, hookContext, notFound, type ResourceRuntime } from "../runtime.ts";
import { runWrite } from "../write-pipeline.ts";

export function deleteEndpoint(rt: ResourceRuntime): Endpoint {
  const { resource, hooks } = rt;
  const dependents = hasDependents(rt);
  const owned = rt.fileFields;
  return {
    method: "DELETE",
    path: `/${resource.name}/:id`,
    operationName: `delete${capitalize(resource.name)}`,
    minimal: "changed",
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
      await runWrite(
        ctx.db,
        hooks.afterDelete.length > 0 || dependents || owned !== undefined || ifMatch !== undefined,
        async (write) => {
          const { db } = write;
          // The record itself first (within the caller's rows), then what points at it, then the delete.
          if (releasing || ifMatch) {
            const current = await rt.store.findForUpdate(db, id, scope);
            if (!current) notFound(rt, id);
            if (ifMatch) checkIfMatch(ifMatch, await seenAfterWrite(rt, db, current, hidden), resource.name);
          }
          if (releasing) await releaseDependents(rt, write, id, releasing);
          const previous = await rt.store.delete(db, id, scope).catch((error) => {
            const violation = rt.driverErrors.foreignKey(error);
            throw violation ? referencedConflict(rt, violation.constraint) : error;
          });
          if (!previous) notFound(rt, id);
          if (owned) {
            const released = await syncFiles(owned, db, ctx, resource.name, previous, undefined);
            if (released.length) write.afterCommit(() => owned.files.collect(released));
          }
          await write.changed(rt, base, { previous });
        },
        { wholeOrNothing: ctx.batchStep },
      );
      return { success: true, id };
    },
  };
}
