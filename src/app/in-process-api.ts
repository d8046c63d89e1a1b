// `app.api`: each endpoint with an operation name, callable from server code through the same
// handler code as HTTP.

import type { Kysely } from "kysely";
import { type CallOptions, type ContextDeps, InProcessContext } from "../core/context.ts";
import type { Endpoint } from "../core/endpoint.ts";
import { APIError, toAPIError } from "../core/errors.ts";
import { Versioned } from "../core/etag.ts";
import { toResponse } from "../core/http-handler.ts";
import type { InFlight } from "../core/in-flight.ts";
import { handledOnReplicas } from "../core/read-routing.ts";
import { errorResponse } from "../core/respond.ts";
import type { ServerCalls } from "../core/server-api.ts";
import { untraced } from "../core/tracing.ts";
import type { StartupGate } from "./startup.ts";

type Run = (options: CallOptions, db: Kysely<any>) => Promise<unknown>;

/** The operations `ctx.api` runs, filled in as `buildApi` names them. */
export function createServerCalls(): ServerCalls & { set(name: string, run: Run): void } {
  const runs = new Map<string, Run>();
  return { find: (name) => runs.get(name), set: (name, run) => void runs.set(name, run) };
}

function serverCallsOf(deps: ContextDeps) {
  return deps.serverCalls as ReturnType<typeof createServerCalls>;
}

export type ApiFunction = (options?: CallOptions) => Promise<unknown>;

export function buildApi(
  endpoints: readonly Endpoint[],
  {
    deps,
    startup,
    log,
    inFlight,
    tracing = true,
  }: {
    deps: ContextDeps;
    startup: StartupGate;
    log: (message: string, error: unknown) => void;
    inFlight: InFlight;
    /** `crudkit({ tracing: false })`: no span of crudkit's under the caller's. */
    tracing?: boolean;
  },
): Record<string, ApiFunction> {
  const api: Record<string, ApiFunction> = {};
  // What `ctx.api` in hooks finds by name (ContextDeps.serverCalls reads this map).
  const calls = serverCallsOf(deps);
  for (const endpoint of endpoints) {
    const pathParams = [...endpoint.path.matchAll(/:([A-Za-z_]\w*)/g)].map((m) => m[1]!);
    /**
     * `routed`: an `app.api` call, whose reads may go to a replica. A hook's `ctx.api` call reads
     * from the primary: it may follow a write whose position is not noted yet (a commit hook).
     */
    const run = async (options: CallOptions, db: Kysely<any>, routed = false) => {
      inFlight.begin();
      try {
        // A caller without types may leave a path's id out: the 400 says how to give it.
        for (const name of pathParams)
          if (typeof options.params?.[name] !== "string")
            throw new APIError(
              "BAD_REQUEST",
              `params.${name} must be a string: pass params: { ${name}: "…" }.`,
            );
        const starting = startup();
        if (starting) await starting;
        const reading = endpoint.method === "GET";
        const handler = (ctx: InProcessContext) =>
          tracing ? endpoint.handler(ctx) : untraced(() => endpoint.handler(ctx));
        const ctx = new InProcessContext(options, deps, db, reading, routed);
        const result = deps.reads
          ? (
              await handledOnReplicas(
                deps.reads,
                handler,
                ctx,
                () => new InProcessContext(options, deps, db, reading, routed),
              )
            ).result
          : await handler(ctx);
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
    const call: ApiFunction = (options = {}) => run(options, deps.db, true);
    for (const name of [endpoint.operationName, ...(endpoint.operationAliases ?? [])])
      if (name) {
        api[name] = call;
        calls.set(name, run);
      }
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
