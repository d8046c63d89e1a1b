// createClient: a proxy that turns `client.product.read(id)` and `client.uploadFile(input)` into
// requests. It knows nothing about the server at runtime; the types come from `typeof app`.

import { aggregateParams } from "./aggregate-params.ts";
import { batchOf } from "./batch.ts";
import { type CallOptions, type ClientOptions, type ClientResult, send } from "./request.ts";
import { type RealtimeEvent, type SubscribeOptions, subscribe } from "./subscribe.ts";
import type { Client } from "./types.ts";

type Call = (
  spec: { method: string; path: string; query?: any; body?: unknown },
  options?: CallOptions,
) => Promise<ClientResult<any>>;

/**
 * A typed client for a crudkit API, inferred from the server app's type alone (`import type`).
 * Every method resolves to `{ data, error }`; network failures land in `error` too.
 *
 * @example
 * import type { app } from "./server";
 * const client = createClient<typeof app>({ baseURL: "https://api.example.com/api", headers: { "x-api-key": key } });
 * const { data, error } = await client.product.list({ where: { price: { gte: 10 } }, expand: ["reviews"] });
 */
export function createClient<App>(options: ClientOptions): Client<App> {
  const call: Call = (spec, callOptions) => send(options, spec, callOptions);
  const members: Record<string, unknown> = Object.create(null);
  members.$fetch = (
    path: string,
    { method, query, body, ...rest }: CallOptions & { method?: string; query?: object; body?: unknown } = {},
  ) => call({ method: method ?? (body === undefined ? "GET" : "POST"), path, query, body }, rest);
  members.$batch = batchOf(call);
  return new Proxy(members, {
    get(target, key) {
      // Not a thenable: `await client` must not call a server method named "then".
      if (typeof key !== "string" || key === "then") return undefined;
      target[key] ??= member(key, call, options);
      return target[key];
    },
  }) as Client<App>;
}

interface IfMatchOption {
  ifMatch?: string;
}

/** `ifMatch` travels as the `If-Match` header, after the call's own headers. */
function withIfMatch(options: (CallOptions & IfMatchOption) | undefined): CallOptions | undefined {
  if (options?.ifMatch === undefined) return options;
  const { ifMatch, ...rest } = options;
  const headers = new Headers(rest.headers);
  headers.set("if-match", ifMatch);
  return { ...rest, headers };
}

/** `client.<name>`: callable as a plugin method, with the resource operations (and history) on it. */
function member(name: string, call: Call, clientOptions: ClientOptions) {
  const item = (id: string) => `/${name}/${encodeURIComponent(id)}`;
  return Object.assign(
    (input?: unknown, options?: CallOptions) =>
      call({ method: "POST", path: `/_rpc/${name}`, body: input ?? {} }, options),
    {
      create: (body: unknown, { onConflict, ...options }: CallOptions & { onConflict?: string } = {}) =>
        call(
          { method: "POST", path: `/${name}`, body, query: onConflict ? { onConflict } : undefined },
          options,
        ),
      read: (id: string, { expand, ...options }: CallOptions & { expand?: readonly string[] } = {}) =>
        call({ method: "GET", path: item(id), query: expand ? { expand } : undefined }, options),
      update: (id: string, body: unknown, options?: CallOptions & IfMatchOption) =>
        call({ method: "PATCH", path: item(id), body }, withIfMatch(options)),
      upsert: (id: string, body: unknown, options?: CallOptions & IfMatchOption) =>
        call({ method: "PUT", path: item(id), body }, withIfMatch(options)),
      delete: (id: string, options?: CallOptions & IfMatchOption) =>
        call({ method: "DELETE", path: item(id) }, withIfMatch(options)),
      // The record's changes from the audit log (the server needs audit()).
      history: (id: string, query?: object, options?: CallOptions) =>
        call({ method: "GET", path: `${item(id)}/history`, query }, options),
      // GET /<name> lists as /<plural> does, so the client needs no pluralizer.
      list: (query?: object, options?: CallOptions) =>
        call({ method: "GET", path: `/${name}`, query }, options),
      // Typed on the plural (`client.products.aggregate`): its path is /<plural>/aggregate.
      aggregate: (input: Record<string, unknown> = {}, options?: CallOptions) =>
        call(
          {
            method: "GET",
            path: `/${name}/aggregate`,
            query: { ...aggregateParams(input), where: input.where },
          },
          options,
        ),
      subscribe: (
        query: { where?: object } | undefined,
        onEvent: (event: RealtimeEvent<unknown>) => void,
        options?: SubscribeOptions,
      ) => subscribe(clientOptions, name, query, onEvent, options),
      // Every page, one after the other, by cursor; a failed request throws its error.
      async *pages(query: Record<string, unknown> = {}, options?: CallOptions) {
        const { page: _, ...rest } = query;
        let cursor: string | undefined;
        do {
          const { data, error } = await call(
            { method: "GET", path: `/${name}`, query: cursor ? { ...rest, cursor } : rest },
            options,
          );
          if (error) throw error;
          yield data;
          cursor = data.pagination.nextCursor ?? undefined;
        } while (cursor);
      },
    },
  );
}
