// POST /_rpc/<clientMethod>: how the client reaches plugin endpoints by name alone. The one input
// object is split into path parameters, and query or body by the endpoint's method; then the
// endpoint's own handler runs, with the caller's headers, rules and validation unchanged.

import { contextWith, whereOf } from "../core/context.ts";
import type { Endpoint, EndpointContext } from "../core/endpoint.ts";
import { APIError, ConfigError } from "../core/errors.ts";
import { toResponse } from "../core/http-handler.ts";

export const RPC_PATH = "/_rpc/:method";

export function rpcEndpoint(endpoints: readonly Endpoint[]): Endpoint | undefined {
  const byName = new Map<string, Endpoint>();
  for (const endpoint of endpoints) {
    if (!endpoint.clientMethod) continue;
    if (byName.has(endpoint.clientMethod))
      throw new ConfigError(`Two endpoints declare client method "${endpoint.clientMethod}".`);
    byName.set(endpoint.clientMethod, endpoint);
  }
  if (byName.size === 0) return undefined;
  return {
    method: "POST",
    path: RPC_PATH,
    async handler(ctx) {
      const endpoint = byName.get(ctx.params.method!);
      if (!endpoint) throw new APIError("NOT_FOUND", "No client method of that name exists.");
      // An endpoint that reads the request stream itself gets it whole: the input is the body.
      if (endpoint.rawBody)
        return toResponse(endpoint, await endpoint.handler(contextWith(ctx, { params: {} })));
      const input = await ctx.readBody();
      if (typeof input !== "object" || input === null || Array.isArray(input)) {
        throw new APIError("VALIDATION_ERROR", "Expected a JSON object with the method's input.", {
          details: [{ path: "", message: "Expected a JSON object." }],
        });
      }
      return toResponse(
        endpoint,
        await endpoint.handler(innerContext(ctx, endpoint, input as Record<string, unknown>)),
      );
    },
  };
}

function innerContext(
  outer: EndpointContext,
  endpoint: Endpoint,
  input: Record<string, unknown>,
): EndpointContext {
  const rest: Record<string, unknown> = Object.assign(Object.create(null), input);
  const params: Record<string, string> = {};
  for (const [, name] of endpoint.path.matchAll(/:(\w+)/g)) {
    const value = rest[name!];
    if (typeof value !== "string" || value === "") {
      throw new APIError("VALIDATION_ERROR", `Invalid input: ${name} must be a non-empty string.`, {
        details: [{ path: name!, message: "Expected a non-empty string." }],
      });
    }
    params[name!] = value;
    delete rest[name!];
  }
  const carriesBody = endpoint.method === "POST" || endpoint.method === "PUT" || endpoint.method === "PATCH";
  const query: Record<string, string | undefined> = Object.create(null);
  if (!carriesBody)
    for (const [key, value] of Object.entries(rest)) {
      // A list's `where` stays the object it is, for the list parser (see whereOf).
      if (key !== "where" || typeof value !== "object" || value === null)
        query[key] = value == null ? undefined : String(value);
    }
  const where = carriesBody ? undefined : whereOf(rest, 32);
  return contextWith(outer, { params, query, where, readBody: async () => (carriesBody ? rest : undefined) });
}
