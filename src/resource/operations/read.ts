// GET /<resource>/:id → 200 with the record.

import type { Endpoint } from "../../core/endpoint.ts";
import type { CachedRead } from "../../core/plugin.ts";
import { checkRule } from "../access.ts";
import { runAll, runTransforming } from "../hooks.ts";
import { capitalize, hookContext, notFound, type ResourceRuntime } from "../runtime.ts";

export function readEndpoint(rt: ResourceRuntime): Endpoint {
  const { resource, hooks } = rt;
  const rule = resource.access.read;
  // One function per endpoint, not a closure per request: it takes everything from `read`.
  const load = async ({ ctx, user, key: id }: CachedRead) => {
    const base =
      hooks.beforeRead.length || hooks.afterRead.length
        ? { ...hookContext(ctx, rt, "read", user), id }
        : undefined;
    if (hooks.beforeRead.length) await runAll(hooks.beforeRead, base!);
    const record = await rt.store.findById(ctx.db, id);
    if (!record) notFound(rt, id);
    return hooks.afterRead.length ? runTransforming(hooks.afterRead, base!, "record", record) : record;
  };
  return {
    method: "GET",
    path: `/${resource.name}/:id`,
    operationName: `read${capitalize(resource.name)}`,
    async handler(ctx) {
      const user = await ctx.getUser();
      const id = ctx.params.id!;
      if (!ctx.overrideAccess)
        await checkRule(rule, { user, headers: ctx.headers, operation: "read", resource: resource.name, id });
      const read: CachedRead = { resource: resource.name, operation: "read", key: id, user, ctx };
      // Server code always reads the database; HTTP callers may be answered from the cache.
      return rt.readCache && ctx.source === "http" ? rt.readCache.serve(read, load) : load(read);
    },
  };
}
