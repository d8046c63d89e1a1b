// `app.api.aggregate<Plural>({ count: true, sum: ["price"], groupBy: ["status"], where, headers })`:
// the request's fields written as the query the endpoint reads (the client's own writer), the call
// options (headers, overrideAccess, asResponse) passed on as for every other operation.

import { aggregateParams } from "../client/aggregate-params.ts";
import type { CallOptions } from "../core/context.ts";
import type { Endpoint } from "../core/endpoint.ts";
import type { ApiFunction } from "./in-process-api.ts";

/** Replaces each aggregate operation of `api` by one that takes the request's fields at the top. */
export function withAggregateCalls(api: Record<string, ApiFunction>, endpoints: readonly Endpoint[]): void {
  for (const endpoint of endpoints) {
    if (endpoint.doc?.resource?.operation !== "aggregate") continue;
    for (const name of [endpoint.operationName, ...(endpoint.operationAliases ?? [])])
      if (name && api[name]) api[name] = aggregateCall(api[name]);
  }
}

function aggregateCall(call: ApiFunction): ApiFunction {
  return (options = {}) => {
    // What no aggregate takes (a body, params, a query object) is left out, as on the wire.
    const {
      headers,
      overrideAccess,
      asResponse,
      body: _b,
      params: _p,
      query: _q,
      ...input
    } = options as CallOptions & Record<string, unknown>;
    const { where, ...fields } = input;
    return call({
      headers,
      overrideAccess,
      asResponse,
      // The where object goes as it is: the list parser reads it with its values typed.
      query: { ...aggregateParams(fields), ...(where === undefined ? {} : { where }) },
    });
  };
}
