// GET /<resource>/:id → 200 with the record.

import type { Endpoint } from "../../core/endpoint.ts";
import type { CachedRead } from "../../core/plugin.ts";
import { type Admission, admit, scopeKey } from "../admission.ts";
import { withoutHidden } from "../field-access.ts";
import { runAll, runTransforming } from "../hooks.ts";
import { capitalize, hookContext, notFound, type ResourceRuntime } from "../runtime.ts";

type ScopedRead = CachedRead & { admission: Admission };

export function readEndpoint(rt: ResourceRuntime): Endpoint {
  const { resource, hooks } = rt;
  // One function per endpoint, not a closure per request: it takes everything from `read`.
  const load = async (read: CachedRead) => {
    const { ctx, user, key: id, admission } = read as ScopedRead;
    const { scope, hidden } = admission;
    const base =
      hooks.beforeRead.length || hooks.afterRead.length ? hookContext(ctx, rt, "read", user, id) : undefined;
    // Outside the caller's rows is a missing id, and no hook learns of it.
    let record = scope ? await rt.store.findById(ctx.db, id, scope) : undefined;
    if (scope && !record) notFound(rt, id);
    if (hooks.beforeRead.length) await runAll(hooks.beforeRead, base!);
    record ??= await rt.store.findById(ctx.db, id);
    if (!record) notFound(rt, id);
    if (hooks.afterRead.length) record = await runTransforming(hooks.afterRead, base!, "record", record);
    return withoutHidden(record, hidden);
  };
  return {
    method: "GET",
    path: `/${resource.name}/:id`,
    operationName: `read${capitalize(resource.name)}`,
    async handler(ctx) {
      const admission = await admit(rt, ctx, "read");
      const id = ctx.params.id!;
      const read: ScopedRead = {
        resource: resource.name,
        operation: "read",
        key: id,
        // Only a cache needs the scope as text.
        scope: rt.readCache ? scopeKey(admission) : "",
        user: admission.user,
        ctx,
        admission,
      };
      // Server code always reads the database; HTTP callers may be answered from the cache.
      return rt.readCache && ctx.source === "http" ? rt.readCache.serve(read, load) : load(read);
    },
  };
}
