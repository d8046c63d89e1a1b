// rateLimit(): at most `max` requests per caller, per resource and operation, in each fixed window
// of `window` seconds; the next answers 429 with Retry-After. Every answer of a limited endpoint
// says where the caller stands (RateLimit-Limit, -Remaining, -Reset, -Policy). Optionally a budget
// of upload bytes per caller, counted as the bodies stream. Counters in memory, or in Redis for
// every instance. The in-process API is not limited unless `inProcess` says so.

import { addressKey } from "../../core/client-address.ts";
import { contextWith } from "../../core/context.ts";
import type { Endpoint, EndpointContext } from "../../core/endpoint.ts";
import { APIError } from "../../core/errors.ts";
import { toResponse } from "../../core/http-handler.ts";
import type { User } from "../../core/identity.ts";
import { checkOptionKeys, optionKeys } from "../../core/option-keys.ts";
import type { CrudkitPlugin, PluginContext } from "../../core/plugin.ts";
import { throughBody } from "../../core/request-body.ts";
import { memoryRateLimitStore, type RateLimitStore } from "./store.ts";

export type RateLimitBy = "user" | "ip" | ((ctx: EndpointContext, user: User | null) => string | null);

export interface RateLimitOptions {
  /** Length of a window, in seconds. @default 60 */
  window?: number;
  /** Requests a caller may make in one window, per resource and operation. @default 100 */
  max?: number;
  /**
   * Who is counted: `user` (her id; her address when anonymous), `ip`, or a function (return null
   * to leave the request unlimited). @default "user"
   */
  by?: RateLimitBy;
  /**
   * Which endpoints: `"create"` (every resource's), `"product.create"`, `"product.*"`, or a plugin
   * endpoint's client method (`"uploadFile"`). @default every endpoint but health and the docs
   */
  operations?: readonly string[];
  /** @default memoryRateLimitStore() */
  store?: RateLimitStore;
  /** Bytes of upload bodies a caller may send per window (the JSON as sent, base64 included). */
  uploadBytes?: { max: number; window?: number };
  /** Limit `app.api` calls too (server code is trusted and not counted by default). @default false */
  inProcess?: boolean;
  /** Tells two rateLimit() plugins of one app apart. @default "rate-limit" */
  id?: string;
}

interface Limit {
  name: string;
  max: number;
  windowMs: number;
}

const RATE_LIMIT_OPTION_KEYS = optionKeys<RateLimitOptions>()(
  "window max by operations store uploadBytes inProcess id",
);

/**
 * Limits how often each caller may call each resource operation; over the limit is a 429 with
 * `Retry-After`, and every answer carries `RateLimit-*` headers.
 *
 * @example
 * plugins: [rateLimit({ window: 60, max: 100 }), rateLimit({ id: "writes", operations: ["create"], max: 10 })]
 */
export function rateLimit(options: RateLimitOptions = {}) {
  checkOptionKeys(options, RATE_LIMIT_OPTION_KEYS, "rateLimit()");
  const windowMs = positive(options.window ?? 60, "window") * 1000;
  const max = positiveInteger(options.max ?? 100, "max");
  const by = options.by ?? "user";
  const selected = options.operations;
  const store = options.store ?? memoryRateLimitStore();
  const budget = options.uploadBytes && {
    max: positiveInteger(options.uploadBytes.max, "uploadBytes.max"),
    windowMs: positive(options.uploadBytes.window ?? options.window ?? 60, "uploadBytes.window") * 1000,
  };
  const id = options.id ?? "rate-limit";

  function wrap(endpoint: Endpoint, handler: Endpoint["handler"], app: PluginContext) {
    const name = limitNameOf(endpoint);
    if (!name || (selected && !selected.some((s) => matches(s, name)))) return undefined;
    // Every refusal is counted (metrics()).
    const limited: typeof refusal = (...args) => {
      app.telemetry.count("rateLimit.refused");
      return refusal(...args);
    };
    const limit: Limit = { name, max, windowMs };
    const metered = budget && endpoint.rawBody && endpoint.method === "POST" ? budget : undefined;
    return async (ctx: EndpointContext): Promise<unknown> => {
      if (ctx.source !== "http" && !options.inProcess) return handler(ctx);
      // Failed authentication counts per address in a bucket of its own, checked before the
      // credentials are, so keys cannot be guessed without limit (a right guess is refused too).
      // Only where the address is known: a host that passes none would put every caller in one bucket.
      const failures = ctx.ip === undefined ? undefined : `${id}\0unauthorized\0ip:${addressKey(ctx.ip)}`;
      if (failures) {
        const failed = await store.add(failures, 0, windowMs);
        if (failed.total >= max)
          throw limited(stateHeaders(limit, failed.total, failed.resetAt), failed.resetAt, "failed sign-ins");
      }
      let caller: string | null;
      try {
        caller = await callerOf(ctx, by);
      } catch (error) {
        if (failures && error instanceof APIError && error.status === 401)
          await store.add(failures, 1, windowMs);
        throw error;
      }
      if (caller === null) return handler(ctx);
      const count = await store.add(`${id}\0${limit.name}\0${caller}`, 1, limit.windowMs);
      const headers = stateHeaders(limit, count.total, count.resetAt);
      if (count.total > limit.max) throw limited(headers, count.resetAt, `${limit.name} requests`);
      let result: unknown;
      try {
        const metering = metered ? await meteredContext(ctx, metered, `${id}\0bytes\0${caller}`) : ctx;
        result = await handler(metering);
      } catch (error) {
        if (failures && error instanceof APIError && error.status === 401)
          await store.add(failures, 1, windowMs);
        throw error instanceof APIError ? withHeaders(error, headers) : error;
      }
      if (ctx.source !== "http") return result;
      const response = toResponse(endpoint, result, ctx.request);
      for (const [key, value] of Object.entries(headers)) response.headers.set(key, value);
      return response;
    };

    /** The request with its body counted against the caller's upload budget as it streams. */
    async function meteredContext(
      ctx: EndpointContext,
      meter: { max: number; windowMs: number },
      key: string,
    ): Promise<EndpointContext> {
      const request = ctx.request;
      if (!request?.body) return ctx;
      const refuse = (resetAt: number) =>
        limited(
          { "ratelimit-policy": `${meter.max};w=${meter.windowMs / 1000};name="upload-bytes"` },
          resetAt,
          "upload bytes",
        );
      // A declared length past what is left is refused before anything is read.
      const declared = Number(request.headers.get("content-length") ?? Number.NaN);
      const used = await store.add(key, 0, meter.windowMs);
      if (declared > meter.max - used.total) throw refuse(used.resetAt);
      const copy = throughBody(
        request,
        new TransformStream<Uint8Array, Uint8Array>({
          async transform(chunk, controller) {
            const count = await store.add(key, chunk.byteLength, meter.windowMs);
            if (count.total > meter.max) {
              // Refused bytes are not spent.
              await store.add(key, -chunk.byteLength, meter.windowMs);
              throw refuse(count.resetAt);
            }
            controller.enqueue(chunk);
          },
        }),
      );
      return contextWith(ctx, { request: copy });
    }
  }

  return {
    id,
    wrap,
    describeWrapped: (endpoint: Endpoint) => {
      const name = limitNameOf(endpoint);
      if (!name || (selected && !selected.some((s) => matches(s, name)))) return undefined;
      return {
        responseHeaders: {
          "RateLimit-Limit": "Requests allowed per window.",
          "RateLimit-Remaining": "Requests left in this window.",
          "RateLimit-Reset": "Seconds until the window ends.",
          "RateLimit-Policy": "The limit and its window, as `max;w=seconds`.",
          "Retry-After": "On a 429: seconds to wait.",
        },
        errors: [429],
      };
    },
    health: store.ping ? () => store.ping!() : undefined,
  } satisfies CrudkitPlugin;
}

/** `product.create` for a resource operation, the client method (or route) of a plugin endpoint. */
function limitNameOf(endpoint: Endpoint): string | undefined {
  // Health checks, and metrics (a scraper's token is no sign-in identify() would take).
  if (endpoint.doc?.public || endpoint.ungated) return undefined;
  const resource = endpoint.doc?.resource;
  if (resource) return `${resource.name}.${resource.operation}`;
  return endpoint.clientMethod ?? endpoint.operationName ?? `${endpoint.method} ${endpoint.path}`;
}

function matches(selector: string, name: string): boolean {
  if (selector === name) return true;
  const dot = name.indexOf(".");
  if (dot === -1) return false;
  return selector === name.slice(dot + 1) || selector === `${name.slice(0, dot)}.*`;
}

async function callerOf(ctx: EndpointContext, by: RateLimitBy): Promise<string | null> {
  const address = `ip:${addressKey(ctx.ip)}`;
  if (by === "ip") return address;
  const user = await ctx.getUser();
  if (by === "user") return user ? `user:${user.id}` : address;
  const key = by(ctx, user);
  return key === null ? null : `fn:${key}`;
}

function stateHeaders(limit: Limit, total: number, resetAt: number): Record<string, string> {
  return {
    "ratelimit-limit": String(limit.max),
    "ratelimit-remaining": String(Math.max(0, limit.max - total)),
    "ratelimit-reset": String(secondsUntil(resetAt)),
    "ratelimit-policy": `${limit.max};w=${limit.windowMs / 1000}`,
  };
}

function refusal(headers: Record<string, string>, resetAt: number, what: string): APIError {
  const wait = secondsUntil(resetAt);
  return new APIError(
    "RATE_LIMITED",
    `Too many ${what}: the limit for this window is reached; retry in ${wait} s.`,
    { headers: { ...headers, "retry-after": String(wait) } },
  );
}

function withHeaders(error: APIError, headers: Record<string, string>): APIError {
  return new APIError(error.code, error.message, {
    ...(error.details ? { details: error.details } : {}),
    headers: { ...headers, ...error.headers },
    cause: error.cause,
  });
}

const secondsUntil = (at: number) => Math.max(1, Math.ceil((at - Date.now()) / 1000));

function positive(value: number, name: string): number {
  if (!(Number.isFinite(value) && value > 0))
    throw new Error(`rateLimit(): ${name} must be a positive number.`);
  return value;
}

function positiveInteger(value: number, name: string): number {
  if (!(Number.isInteger(value) && value > 0))
    throw new Error(`rateLimit(): ${name} must be a positive integer.`);
  return value;
}
