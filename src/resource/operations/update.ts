// PATCH /<resource>/:id → 200 with the updated record and its ETag. Only the fields sent change;
// with If-Match, only if the record is still the version named (412 otherwise).

import type { Endpoint } from "../../core/endpoint.ts";
import { APIError } from "../../core/errors.ts";
import { checkIfMatch, Versioned } from "../../core/etag.ts";
import { fieldsNamed } from "../../query/where.ts";
import { admit } from "../admission.ts";
import { gatesOf } from "../field-access.ts";
import { syncFiles, touchesFiles } from "../file-fields.ts";
import { checkGatedWrites, seenAfterWrite, shownOn } from "../gated-answer.ts";
import { runTransforming } from "../hooks.ts";
import { ifMatchOf } from "../if-match.ts";
import { checkReferenceRows, referenceChecks } from "../reference-reads.ts";
import { capitalize, extend, hookContext, notFound, type ResourceRuntime } from "../runtime.ts";
import { runWrite } from "../write-pipeline.ts";

export function updateEndpoint(rt: ResourceRuntime): Endpoint {
  const { resource, hooks } = rt;
  // The previous record is read under a row lock, which only a transaction holds, so reading it
  // makes the update a transaction.
  const needsPrevious = hooks.afterUpdate.length > 0 || hooks.afterUpdateCommit.length > 0;
  return {
    method: "PATCH",
    path: `/${resource.name}/:id`,
    operationName: `update${capitalize(resource.name)}`,
    minimal: "changed",
    async handler(ctx) {
      const { user, data: valid, scope, hidden, writeGates } = await admit(rt, ctx, "update");
      const ifMatch = ifMatchOf(rt, ctx);
      const id = ctx.params.id!;
      // Outside the caller's rows is a missing id, and no hook learns of it.
      if (scope && hooks.beforeUpdate.length && !(await rt.store.findById(ctx.db, id, scope)))
        notFound(rt, id);
      const base = hookContext(ctx, rt, "update", user, id);
      let data = valid;
      if (hooks.beforeUpdate.length) data = await runTransforming(hooks.beforeUpdate, base, "data", data);

      const changes: Record<string, unknown> = resource.timestamps
        ? extend(data, { updatedAt: new Date().toISOString() })
        : data;
      const changed = Object.keys(changes);
      // Only a change to a field the rule names can take the record out of the caller's rows.
      const named = scope && fieldsNamed(scope);
      const recheck = named !== undefined && changed.some((f) => named.has(f));
      const owned = touchesFiles(rt.fileFields, changes) ? rt.fileFields : undefined;
      const references = await referenceChecks(rt, ctx, user, changes);
      // A reference check runs in a transaction; the record is read first, so a missing id stays a 404.
      const locked =
        needsPrevious ||
        scope !== undefined ||
        owned !== undefined ||
        ifMatch !== undefined ||
        references !== undefined ||
        writeGates !== undefined ||
        gatesOf(hidden) !== undefined;
      const written = await runWrite(
        ctx.db,
        locked || hooks.afterUpdate.length > 0,
        async (write) => {
          const { db } = write;
          const previous = locked ? await rt.store.findForUpdate(db, id, scope) : undefined;
          if (locked && !previous) notFound(rt, id);
          if (ifMatch) checkIfMatch(ifMatch, await seenAfterWrite(rt, db, previous!, hidden), resource.name);
          if (references) await checkReferenceRows(db, references);
          // A field read or written on some rows only: the row before the change must be one of
          // them too, or moving a record (to another organization) would show or set it.
          await checkGatedWrites(rt, db, id, writeGates);
          const shownBefore = await shownOn(rt, db, id, hidden);
          const record = changed.length
            ? await rt.store.update(db, id, changes)
            : (previous ?? (await rt.store.findById(db, id)));
          if (!record) notFound(rt, id);
          if (recheck && !(await rt.store.findById(db, id, scope))) throw outOfScope(rt.resource.name);
          await checkGatedWrites(rt, db, id, writeGates);
          if (owned) {
            const released = await syncFiles(owned, db, ctx, resource.name, previous, record);
            if (released.length) write.afterCommit(() => owned.files.collect(released));
          }
          await write.changed(rt, base, { record, previous });
          return { record, shownBefore };
        },
        { wholeOrNothing: ctx.batchStep },
      );
      const visible = await seenAfterWrite(rt, ctx.db, written.record, hidden, written.shownBefore);
      return new Versioned(visible, visible, false);
    },
  };
}

/** Thrown inside the transaction, so the change rolls back. */
function outOfScope(resource: string): APIError {
  return new APIError(
    "FORBIDDEN",
    `Access denied: after this change the record would be outside what the update rule of "${resource}" lets you change; nothing was saved.`,
  );
}
