// `app.api`: each endpoint with an operation name, callable from server code through the same
// handler code as HTTP.

import { type CallOptions, type ContextDeps, InProcessContext } from "../core/context.ts";
import type { Endpoint } from "../core/endpoint.ts";
import { toAPIError } from "../core/errors.ts";
import { Versioned } from "../core/etag.ts";
import { toResponse } from "../core/http-handler.ts";
import type { InFlight } from "../core/in-flight.ts";
import { errorResponse } from "../core/respond.ts";
import type { StartupGate } from "./startup.ts";

export type ApiFunction = (options?: CallOptions) => Promise<unknown>;

export function buildApi(
  endpoints: readonly Endpoint[],
  {
    deps,
    startup,
    log,
    inFlight,
  }: {
    deps: ContextDeps;
    startup: StartupGate;
    log: (message: string, error: unknown) => void;
    inFlight: InFlight;
  },
): Record<string, ApiFunction> {
  const api: Record<string, ApiFunction> = {};
  for (const endpoint of endpoints) {
    const call: ApiFunction = async (options = {}) => {
      inFlight.begin();
      try {
        const starting = startup();
        if (starting) await starting;
        const result = await endpoint.handler(new InProcessContext(options, deps));
        if (options.asResponse) return toResponse(endpoint, result);
        return result instanceof Versioned ? result.data : result;
      } catch (error) {
        const apiError = toAPIError(error, log, deps.driverErrors);
        if (options.asResponse) return errorResponse(apiError);
        throw apiError;
      } finally {
        inFlight.end();
      }
    };
    for (const name of [endpoint.operationName, ...(endpoint.operationAliases ?? [])])
      if (name) api[name] = call;
  }
  return api;
}

/** `list<Plural>Pages`: every page of a list, one after the other, by cursor. */
export function pagesOf(list: ApiFunction) {
  return async function* (options: CallOptions = {}) {
    const { page: _, ...query } = (options.query ?? {}) as Record<string, unknown>;
    let cursor: string | undefined;
    do {
      const result = (await list({ ...options, query: cursor ? { ...query, cursor } : query })) as {
        pagination: { nextCursor?: string | null };
      };
      yield result;
      cursor = result.pagination.nextCursor ?? undefined;
    } while (cursor);
  };
}
