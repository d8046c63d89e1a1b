// Where an endpoint's reads run when the app has read replicas (`database.replicas`): the port the
// contexts use (core/context.ts), filled in by app/read-router.ts. A GET's reads (records, lists,
// counts, expansions, search, history) go to `ctx.readDb`: a replica that holds the caller's own
// writes, or the primary. Writes, and everything inside a transaction, use `ctx.db`, the primary.

import type { Kysely } from "kysely";
import type { EndpointContext } from "./endpoint.ts";

/**
 * The response header that carries a write's position in the primary's log, and the request
 * header a client sends it back in, so that her next reads, on any instance, see that write.
 */
export const POSITION_HEADER = "crudkit-position";

/** Who reads or wrote: the request's user, its position header, or server code (`app.api`). */
export interface ReadCaller {
  readonly userId: string | undefined;
  readonly headers: Headers;
  /** `server`: an `app.api` call, which sees every write this instance made. */
  readonly source: "http" | "server";
}

export interface ReadRouter {
  /** The database the reads of a request run on: a replica that has the caller's writes, or the primary. */
  route(caller: ReadCaller): Kysely<any>;
  /**
   * After a request that may have written: remembers the primary's position for the caller, and
   * answers it as the text of the position header (undefined when it could not be read).
   */
  wrote(caller: ReadCaller): Promise<string | undefined>;
  /** A request whose reads ran on `db` failed: true when it should run again on the primary. */
  failed(db: Kysely<any>, error: unknown): boolean;
}

/** Methods whose reads may go to a replica: they change nothing. */
export function readsOnly(method: string): boolean {
  return method === "GET" || method === "HEAD";
}

/** A context whose reads a router places (context.ts). */
export interface RoutedContext extends EndpointContext, ReadCaller {
  /** The replica its reads ran on, if they did. */
  readonly replica: Kysely<any> | undefined;
  readFromPrimary(): void;
  readonly writesPrimary: boolean;
}

/**
 * Runs `handler` on `ctx`. When the call's reads ran on a replica that failed them, it runs once
 * more on a fresh context (`again`) reading from the primary: no request fails for a replica. After
 * a call that may have written, the primary's position is noted for the caller (`position`).
 */
export async function handledOnReplicas<C extends RoutedContext>(
  reads: ReadRouter,
  handler: (ctx: C) => Promise<unknown>,
  ctx: C,
  again: () => C,
): Promise<{ ctx: C; result: unknown; position: string | undefined }> {
  let result: unknown;
  try {
    result = await handler(ctx);
  } catch (error) {
    const replica = ctx.replica;
    if (!replica || !reads.failed(replica, error)) throw error;
    ctx = again();
    ctx.readFromPrimary();
    result = await handler(ctx);
  }
  return { ctx, result, position: ctx.writesPrimary ? await reads.wrote(ctx) : undefined };
}
