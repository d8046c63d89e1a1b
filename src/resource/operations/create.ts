// POST /<resource> → 201 with the created record and its ETag.

import type { Endpoint } from "../../core/endpoint.ts";
import { Versioned } from "../../core/etag.ts";
import { denied } from "../access.ts";
import { admit } from "../admission.ts";
import { syncFiles, touchesFiles } from "../file-fields.ts";
import { checkGatedWrites, seenAfterWrite } from "../gated-answer.ts";
import { runTransforming } from "../hooks.ts";
import { newRecord } from "../new-record.ts";
import { checkReferenceRows, referenceChecks } from "../reference-reads.ts";
import { capitalize, hookContext, type ResourceRuntime } from "../runtime.ts";
import { runWrite } from "../write-pipeline.ts";

export function createEndpoint(rt: ResourceRuntime): Endpoint {
  const { resource, hooks } = rt;
  return {
    method: "POST",
    path: `/${resource.name}`,
    status: 201,
    operationName: `create${capitalize(resource.name)}`,
    minimal: "created",
    idempotent: true,
    async handler(ctx) {
      const { user, data: valid, scope, hidden, writeGates } = await admit(rt, ctx, "create");
      const base = hookContext(ctx, rt, "create", user);
      let data = valid;
      if (hooks.beforeCreate.length) data = await runTransforming(hooks.beforeCreate, base, "data", data);

      const record = newRecord(rt, data);
      const owned = touchesFiles(rt.fileFields, record) ? rt.fileFields : undefined;
      const references = await referenceChecks(rt, ctx, user, record);
      const created = await runWrite(
        ctx.db,
        hooks.afterCreate.length > 0 ||
          owned !== undefined ||
          references !== undefined ||
          scope !== undefined ||
          writeGates !== undefined,
        async (write) => {
          if (references) await checkReferenceRows(write.db, references);
          const created = await rt.store.insert(write.db, record);
          // A create rule's Where (a memberOf) holds for the row as stored, or nothing is.
          if (scope && !(await rt.store.holds(write.db, String(created.id), scope)))
            throw denied("create", resource.name);
          await checkGatedWrites(rt, write.db, String(created.id), writeGates);
          if (owned) await syncFiles(owned, write.db, ctx, resource.name, undefined, created);
          await write.changed(rt, base, { record: created });
          return created;
        },
        { wholeOrNothing: ctx.batchStep },
      );
      const visible = await seenAfterWrite(rt, ctx.db, created, hidden);
      return new Versioned(visible, visible, false);
    },
  };
}
