// GET /<plural>?page&limit&search&sortBy&sortOrder&count&filter[…] → 200 with { items, pagination }.

import type { Kysely } from "kysely";
import type { Endpoint } from "../../core/endpoint.ts";
import type { CachedRead } from "../../core/plugin.ts";
import { type ListQuery, paginate, parseListQuery } from "../../query/list-query.ts";
import { type Admission, admit, readsOtherTables, scopeKey } from "../admission.ts";
import { type ExpandNode, expandRecords, parseExpand } from "../expand.ts";
import { gatesOnly, withoutHidden } from "../field-access.ts";
import { runAll, runTransforming } from "../hooks.ts";
import type { Readers } from "../related-access.ts";
import { namesRelatedFields, scopeRelatedFilters } from "../relation-filter.ts";
import { capitalize, extend, hookContext, type ResourceRuntime, readsFor } from "../runtime.ts";

type ListRead = CachedRead & {
  query: ListQuery;
  admission: Admission;
  searchIn: readonly string[];
  expand: ExpandNode[] | undefined;
  /** The related read admissions a relation filter asked, for the expansion to reuse. */
  readers: Readers | undefined;
  /** Where the page is read: a page a cache keeps comes from the primary (see readsFor). */
  db: Kysely<any>;
};

const EXPAND = ["expand"];

export function listEndpoint(rt: ResourceRuntime): Endpoint {
  const { resource, hooks } = rt;
  const load = async (read: CachedRead) => {
    const { ctx, user, query, admission, searchIn, expand, readers, db } = read as ListRead;
    const base =
      hooks.beforeList.length || hooks.afterList.length
        ? extend(hookContext(ctx, rt, "list", user), { query })
        : undefined;
    if (hooks.beforeList.length) await runAll(hooks.beforeList, base!);
    // Hidden fields are not even selected, unless hooks see the page first (they see whole records).
    const { hidden } = admission;
    const listed = await rt.store.list(db, query, {
      scope: admission.scope,
      searchIn,
      hidden: hooks.afterList.length ? gatesOnly(hidden) : hidden,
    });
    let result = paginate(listed.items, listed.total, query, listed.more, listed);
    if (hooks.afterList.length) result = await runTransforming(hooks.afterList, base!, "result", result);
    if (hidden.size > 0)
      result = extend(result, { items: result.items.map((r) => withoutHidden(r, hidden)) });
    if (expand) await expandRecords(rt, ctx, result.items, expand, readers);
    return result;
  };
  return {
    method: "GET",
    path: `/${resource.plural}`,
    operationName: `list${capitalize(resource.plural)}`,
    lists: true,
    async handler(ctx) {
      const admission = await admit(rt, ctx, "list");
      // A caller who may not read a field cannot search, sort or filter on it either.
      const rules = rt.listRulesFor(admission.hidden);
      const query = parseListQuery(ctx.query, rules, EXPAND, ctx.where);
      const expand = parseExpand(ctx.query.expand, rt, admission.hidden);
      const related = query.where !== undefined && namesRelatedFields(query.where, rules.filterable);
      // One set of related read admissions for the request: a relation filtered on and expanded
      // asks its rule once.
      const readers: Readers | undefined = related && expand ? new Map() : undefined;
      if (related) query.where = await scopeRelatedFilters(query.where!, rt, ctx, rules.filterable, readers);
      // Other resources' records change without telling this resource's cache: lists that expand
      // or filter on them are not cached.
      const cached =
        rt.readCache && ctx.source === "http" && !expand && !related && !readsOtherTables(admission)
          ? rt.readCache
          : undefined;
      // The key is the parsed query, so `?page=1` and no page share an entry (only a cache needs it).
      const key = cached
        ? `${query.cursor ?? query.page}|${query.limit}|${query.count}|${query.sortBy ?? ""}|${query.sortOrder}|${query.search ?? ""}|${query.where ? JSON.stringify(query.where) : ""}`
        : "";
      const read: ListRead = {
        resource: resource.name,
        operation: "list",
        key,
        // Only a cache needs the scope as text.
        scope: cached ? scopeKey(admission) : "",
        user: admission.user,
        ctx,
        query,
        admission,
        searchIn: rules.searchable,
        expand,
        readers,
        db: readsFor(ctx, cached !== undefined),
      };
      return cached ? cached.serve(read, load) : load(read);
    },
  };
}
