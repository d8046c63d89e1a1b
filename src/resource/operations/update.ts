// PATCH /<resource>/:id → 200 with the updated record. Only the fields sent change.

import type { Endpoint } from "../../core/endpoint.ts";
import { checkRule, denyWithoutRule } from "../access.ts";
import { runAfterCommit, runAll, runTransforming } from "../hooks.ts";
import { capitalize, hookContext, inTransaction, notFound, type ResourceRuntime } from "../runtime.ts";

export function updateEndpoint(rt: ResourceRuntime): Endpoint {
  const { resource, hooks } = rt;
  const rule = resource.access.update;
  // The previous record is read under a row lock, which only a transaction holds, so reading it
  // makes the update a transaction.
  const needsPrevious = hooks.afterUpdate.length > 0 || hooks.afterUpdateCommit.length > 0;
  return {
    method: "PATCH",
    path: `/${resource.name}/:id`,
    operationName: `update${capitalize(resource.name)}`,
    async handler(ctx) {
      const user = await ctx.getUser();
      const id = ctx.params.id!;
      if (!ctx.overrideAccess) denyWithoutRule(rule, "update", resource.name);
      const body = await ctx.readBody();
      if (!ctx.overrideAccess) {
        await checkRule(rule, {
          user,
          headers: ctx.headers,
          operation: "update",
          resource: resource.name,
          id,
          body,
        });
      }
      const base = { ...hookContext(ctx, rt, "update", user), id };
      let data = rt.validator.update(body);
      if (hooks.beforeUpdate.length) data = await runTransforming(hooks.beforeUpdate, base, "data", data);

      const changes: Record<string, unknown> = resource.timestamps
        ? { ...data, updatedAt: new Date().toISOString() }
        : data;
      const { record, previous } = await inTransaction(ctx.db, needsPrevious, async (db) => {
        const previous = needsPrevious ? await rt.store.findForUpdate(db, id) : undefined;
        if (needsPrevious && !previous) notFound(rt, id);
        const record = Object.keys(changes).length
          ? await rt.store.update(db, id, changes)
          : await rt.store.findById(db, id);
        if (!record) notFound(rt, id);
        await runAll(hooks.afterUpdate, { ...base, db, record, previous });
        return { record, previous };
      });
      if (hooks.afterUpdateCommit.length)
        await runAfterCommit(hooks.afterUpdateCommit, { ...base, record, previous }, rt.log);
      if (hooks.afterWriteCommit.length) await runAfterCommit(hooks.afterWriteCommit, base, rt.log);
      return record;
    },
  };
}
