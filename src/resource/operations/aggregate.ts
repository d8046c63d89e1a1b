// GET /<plural>/aggregate?aggregate[count]=*&aggregate[sum]=price&groupBy=status → 200 with
// { items: [{ group, count, sum }] }. The list rule decides and its rows are the only ones counted;
// fields hidden from the caller can be neither aggregated, grouped, sorted nor filtered on.

import type { Endpoint } from "../../core/endpoint.ts";
import { APIError } from "../../core/errors.ts";
import { admit } from "../admission.ts";
import { aggregateRules, parseAggregateQuery } from "../aggregate-query.ts";
import { runAll } from "../hooks.ts";
import { namesRelatedFields, scopeRelatedFilters } from "../relation-filter.ts";
import { capitalize, extend, hookContext, type ResourceRuntime } from "../runtime.ts";

export function aggregateEndpoint(rt: ResourceRuntime): Endpoint {
  const { resource, hooks } = rt;
  return {
    method: "GET",
    path: `/${resource.plural}/aggregate`,
    operationName: `aggregate${capitalize(resource.plural)}`,
    async handler(ctx) {
      const admission = await admit(rt, ctx, "list");
      const listRules = rt.listRulesFor(admission.hidden);
      const query = parseAggregateQuery(
        ctx.query,
        aggregateRules(resource, admission.hidden, listRules),
        ctx.where,
      );
      const { list } = query;
      if (list.where && namesRelatedFields(list.where, listRules.filterable))
        list.where = await scopeRelatedFilters(list.where, rt, ctx, listRules.filterable);
      // A beforeList hook that narrows lists (a tenant's filter, say) narrows aggregates alike.
      if (hooks.beforeList.length)
        await runAll(hooks.beforeList, extend(hookContext(ctx, rt, "list", admission.user), { query: list }));
      try {
        const items = await rt.aggregator.run(ctx.readDb ?? ctx.db, query, {
          scope: admission.scope,
          hidden: admission.hidden,
          searchIn: listRules.searchable,
        });
        return { items };
      } catch (error) {
        if (rt.driverErrors.timedOut(error)) throw tooCostly(error);
        throw error;
      }
    },
  };
}

/** The 503 of an aggregate that ran past the statement timeout: what it cost, and what helps. */
function tooCostly(cause: unknown): APIError {
  return new APIError(
    "STATEMENT_TIMEOUT",
    "The aggregate did not finish within the statement timeout: it reads every row its filter and the row rule leave. Narrow it with a filter, or add an index on the fields it filters and groups by (the resource's indexes option).",
    { cause },
  );
}
