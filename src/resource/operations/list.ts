// GET /<plural>?page&limit&search&sortBy&sortOrder → 200 with { items, pagination }.

import type { Endpoint } from "../../core/endpoint.ts";
import type { CachedRead } from "../../core/plugin.ts";
import { checkRule } from "../access.ts";
import { runAll, runTransforming } from "../hooks.ts";
import { type ListQuery, paginate, parseListQuery } from "../list-query.ts";
import { capitalize, hookContext, type ResourceRuntime } from "../runtime.ts";

type ListRead = CachedRead & { query: ListQuery };

export function listEndpoint(rt: ResourceRuntime): Endpoint {
  const { resource, hooks } = rt;
  const rule = resource.access.list;
  const load = async (read: CachedRead) => {
    const { ctx, user, query } = read as ListRead;
    const base =
      hooks.beforeList.length || hooks.afterList.length
        ? { ...hookContext(ctx, rt, "list", user), query }
        : undefined;
    if (hooks.beforeList.length) await runAll(hooks.beforeList, base!);
    const { items, total } = await rt.store.list(ctx.db, query);
    const result = paginate(items, total, query);
    return hooks.afterList.length ? runTransforming(hooks.afterList, base!, "result", result) : result;
  };
  return {
    method: "GET",
    path: `/${resource.plural}`,
    operationName: `list${capitalize(resource.plural)}`,
    async handler(ctx) {
      const user = await ctx.getUser();
      if (!ctx.overrideAccess)
        await checkRule(rule, { user, headers: ctx.headers, operation: "list", resource: resource.name });
      const query = parseListQuery(ctx.query, rt.listRules);
      // The key is the parsed query, so `?page=1` and no page share an entry.
      const filter = query.where ? JSON.stringify(query.where) : "";
      const key = `${query.page}|${query.limit}|${query.sortBy ?? ""}|${query.sortOrder}|${query.search ?? ""}|${filter}`;
      const read: ListRead = { resource: resource.name, operation: "list", key, user, ctx, query };
      return rt.readCache && ctx.source === "http" ? rt.readCache.serve(read, load) : load(read);
    },
  };
}
