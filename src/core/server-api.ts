// `ctx.api` in hooks: the app's in-process API as the server's own hand. Inside a write's
// `after<Op>` hooks it runs in that write's transaction, so what a hook creates commits or rolls
// back with the write; it validates, runs hooks, writes audit entries and publishes events as any
// call does (after the outer write commits). It acts with the server's authority unless asked
// to act as the caller of the request being served (`asCaller: true`).

import type { Kysely } from "kysely";
import type { CallOptions } from "./context.ts";

export interface ServerCallOptions extends CallOptions {
  /** Act as the caller of the request being served: her identity, her rules. @default false */
  asCaller?: boolean;
}

/** One operation of the app (`createMembership`, `listTasks`…), as server code calls it. */
export type ServerCall = (options?: ServerCallOptions) => Promise<any>;

/** The app's operations by name; call `app.api`'s names (typed there) the same way. */
export type ServerApi = { readonly [operation: string]: ServerCall };

/** Runs an operation of the app by name on `db`; undefined when no operation has that name. */
export interface ServerCalls {
  find(operation: string): ((options: CallOptions, db: Kysely<any>) => Promise<unknown>) | undefined;
}

const REBIND = Symbol("crudkit.rebind");

/**
 * The API a hook sees: each operation of `calls`, run on `db`, as the server or (asked) as the
 * caller whose request carried `headers`.
 */
export function serverApi(calls: ServerCalls, db: Kysely<any>, headers: Headers): ServerApi {
  const bound = new Map<string | symbol, unknown>();
  return new Proxy(Object.create(null) as ServerApi, {
    get(_, name) {
      if (name === REBIND) return (other: Kysely<any>) => serverApi(calls, other, headers);
      if (typeof name !== "string") return undefined;
      let call = bound.get(name);
      if (call === undefined) {
        const run = calls.find(name);
        if (!run) return undefined;
        call = ({ asCaller = false, ...options }: ServerCallOptions = {}) =>
          run(
            {
              ...options,
              headers: asCaller ? (options.headers ?? callerOf(headers)) : options.headers,
              overrideAccess: asCaller ? false : (options.overrideAccess ?? true),
            },
            db,
          );
        bound.set(name, call);
      }
      return call;
    },
  });
}

/**
 * The headers that say who the caller is, without those that speak of the request itself: its
 * `If-Match` and `Idempotency-Key` name the outer write, not what a hook writes.
 */
function callerOf(headers: Headers): Headers {
  const caller = new Headers(headers);
  for (const name of REQUEST_ONLY) caller.delete(name);
  return caller;
}

const REQUEST_ONLY = ["if-match", "if-none-match", "idempotency-key", "content-type", "content-length"];

/** The same API, run on another database handle (a write's transaction). */
export function serverApiOn(api: ServerApi, db: Kysely<any>): ServerApi {
  const rebind = (api as unknown as Record<symbol, (db: Kysely<any>) => ServerApi>)[REBIND];
  return rebind ? rebind(db) : api;
}
