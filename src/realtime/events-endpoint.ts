// GET /<plural>/events (or the list's own URL asked with `Accept: text/event-stream`): a
// Server-Sent Events stream of the resource's creates, updates and deletes. The caller's list rule
// decides at the start whether she may subscribe; then every event is checked, at send time, against
// her row rule, her filter (`filter[…]` as on the list) and her field rules (hidden fields removed).
// Her access is asked again when her credentials expire and every `recheck` seconds.

import { addressKey } from "../core/client-address.ts";
import type { Endpoint, EndpointContext } from "../core/endpoint.ts";
import { APIError } from "../core/errors.ts";
import type { Identify, User } from "../core/identity.ts";
import { isFilterParameter } from "../query/bracket-query.ts";
import { parseListFilter, unknownParameter } from "../query/list-query.ts";
import { fieldsNamed } from "../query/where.ts";
import { matchesWhere, namesOtherRecords } from "../query/where-match.ts";
import { admit, decide } from "../resource/admission.ts";
import type { ResourceRuntime } from "../resource/runtime.ts";
import type { RealtimeHub, Stream } from "./hub.ts";

const EVENT_ID = /^[\w-]{1,100}$/;
/** Bytes of events that are sent at once rather than at the next flush. */
const FLUSH_AT = 64 * 1024;
const encoder = new TextEncoder();

/** Whether a request asks for the event stream (EventSource sends this Accept). */
export function wantsEvents(ctx: EndpointContext): boolean {
  return ctx.source === "http" && (ctx.headers.get("accept") ?? "").includes("text/event-stream");
}

export function eventsEndpoint(
  rt: ResourceRuntime,
  hub: RealtimeHub,
  identify: Identify | undefined,
): Endpoint {
  const { resource } = rt;
  return {
    method: "GET",
    path: `/${resource.plural}/events`,
    doc: {
      summary: `Stream ${resource.plural} as they are created, updated and deleted (Server-Sent Events)`,
      tags: [resource.name],
      query: {
        filter: {
          type: "object",
          description: "filter[field][op]=value, as on the list: only matching records.",
        },
        lastEventId: {
          type: "string",
          description: "Resume after this event (as the Last-Event-ID header).",
        },
      },
      headers: { "Last-Event-ID": "Resume after this event: the ones since are sent first, or `reset`." },
      response: "event-stream",
    },
    handler: (ctx) => openStream(rt, hub, identify, ctx),
  };
}

/** Answers a subscription: the stream, or the error its rule or filter calls for. */
export async function openStream(
  rt: ResourceRuntime,
  hub: RealtimeHub,
  identify: Identify | undefined,
  ctx: EndpointContext,
): Promise<Response> {
  if (ctx.source !== "http" || !ctx.request)
    throw new APIError("BAD_REQUEST", "Event streams are served over HTTP only.");
  const admission = await admit(rt, ctx, "list");
  const rules = rt.listRulesFor(admission.hidden);
  // The one answer every list gives an unknown parameter, naming it (`filters[status]` included).
  for (const name of Object.keys(ctx.query))
    if (!isFilterParameter(name) && name !== "lastEventId") throw unknownParameter(name, ["lastEventId"]);
  const where = parseListFilter(ctx.query, rules, ctx.where);
  // `filter[author.name]` names a related record's field (a `via` field): refused like a related condition.
  const named = where ? fieldsNamed(where) : undefined;
  if (
    where &&
    (namesOtherRecords(where) || [...named!].some((f) => rules.filterable.get(f)?.via !== undefined))
  )
    throw new APIError(
      "BAD_REQUEST",
      "Event streams cannot filter on related records; filter on this resource's fields.",
    );
  const lastEventId = ctx.headers.get("last-event-id") ?? ctx.query.lastEventId ?? undefined;
  if (lastEventId !== undefined && lastEventId !== "" && !EVENT_ID.test(lastEventId))
    throw new APIError("BAD_REQUEST", "Last-Event-ID must be the id of an event this stream sent.");
  if (hub.full) throw new APIError("SERVICE_UNAVAILABLE", "Too many event streams are open; retry shortly.");
  // One caller cannot take every connection: a few streams per user and per address.
  const release = hub.holdPlace(admission.user?.id, ctx.ip === undefined ? undefined : addressKey(ctx.ip));
  try {
    await hub.start();
  } catch (error) {
    release();
    throw error;
  }

  // What the caller may see: changed when her access is asked again.
  let scope = admission.scope;
  let hidden = admission.hidden;
  const filterFields = rules.filterable;
  const headers = new Headers(ctx.headers);
  const url = ctx.request.url;

  let controller!: ReadableStreamDefaultController<Uint8Array>;
  let open = true;
  let timer: NodeJS.Timeout | undefined;
  // Events that need the database (a row rule on related records) keep their order through this.
  let pending: Promise<void> = Promise.resolve();

  const close = () => {
    if (!open) return;
    open = false;
    release();
    clearTimeout(timer);
    hub.detach(stream);
  };
  // Bytes waiting for the next flush (the hub flushes every stream at most every `flushEvery` ms).
  let waiting: Uint8Array[] = [];
  let waitingBytes = 0;
  const stream: Stream = {
    resource: rt.resource.name,
    write(bytes) {
      if (!open) return false;
      waiting.push(bytes);
      waitingBytes += bytes.byteLength;
      // A burst goes out (and counts against the slow-client limit) without waiting for the timer.
      if (waitingBytes >= FLUSH_AT) stream.flush();
      else hub.pending(stream);
      return open;
    },
    flush() {
      if (!open || waiting.length === 0) return;
      controller.enqueue(waiting.length === 1 ? waiting[0]! : Buffer.concat(waiting));
      waiting = [];
      waitingBytes = 0;
      // The client reads too slowly: what waits for it must not grow without bound.
      if ((controller.desiredSize ?? 0) < -hub.settings.maxQueued) {
        hub.dropped++;
        stream.end("dropped", "This client read events too slowly; reconnect with Last-Event-ID.");
      }
    },
    end(event, reason) {
      if (!open) return;
      stream.flush();
      if (!open) return;
      controller.enqueue(encoder.encode(`event: ${event}\ndata: ${JSON.stringify({ reason })}\n\n`));
      close();
      try {
        controller.close();
      } catch {
        // The stream was already cancelled.
      }
    },
    offer(event, frame) {
      if (!open) return;
      const record = event.record;
      if (!record) {
        // A delete too large for the bus: only a subscriber who sees every row may hear of it.
        if (!scope && !where) stream.write(frame(hidden));
        return;
      }
      const seen = visible(record);
      if (seen !== undefined) {
        if (seen) stream.write(frame(hidden));
        return;
      }
      // The row rule names related records: the database decides (a deleted record cannot be asked).
      if (event.type === "delete") return;
      pending = pending
        .then(async () => {
          if (open && (await rt.store.findById(rt.db, event.recordId, scope))) stream.write(frame(hidden));
        })
        .catch((error) => rt.log("crudkit: a realtime event could not be checked", error));
    },
  };

  const visible = (record: Record<string, unknown>): boolean | undefined => {
    if (where && !matchesWhere(where, record, filterFields, hub.likeFolds)) return false;
    return scope ? matchesWhere(scope, record, rt.ruleFields, hub.likeFolds) : true;
  };

  // Asks the caller's identity and list rule again; a caller who lost access is told, then cut off.
  const recheck = async () => {
    try {
      const user = identify ? await identify(new Request(url, { headers })) : null;
      const again = await decide(rt, { user, headers, operation: "list", resource: rt.resource.name });
      scope = again.scope;
      hidden = again.hidden;
      // A filter on a field now hidden would keep telling its value apart (a prefix at a time).
      if (named && [...named].some((f) => hidden.has(f)))
        return stream.end(
          "expired",
          "A field this stream filters on is no longer visible to you; reconnect without it.",
        );
      schedule(user);
    } catch (error) {
      const status = error instanceof APIError ? error.status : 500;
      if (status >= 500) rt.log("crudkit: an event stream's access could not be checked", error);
      stream.end("expired", "Your access to this stream ended; sign in again, then reconnect.");
    }
  };
  const schedule = (user: User | null) => {
    if (!open) return;
    const expiry = expiryOf(user);
    const wait = Math.min(hub.settings.recheck * 1000, expiry === undefined ? Infinity : expiry - Date.now());
    // Credentials past their expiry may still pass for a moment (a clock tolerance): ask each second.
    timer = setTimeout(() => void recheck(), wait > 0 ? wait : 1000);
    timer.unref();
  };

  const body = new ReadableStream<Uint8Array>(
    {
      start(c) {
        controller = c;
        c.enqueue(encoder.encode("retry: 3000\n: connected\n\n"));
      },
      cancel: close,
    },
    new ByteLengthQueuingStrategy({ highWaterMark: 16 * 1024 }),
  );
  const resumed = hub.attach(stream, lastEventId || undefined);
  if (!resumed)
    stream.write(
      encoder.encode(
        `event: reset\ndata: ${JSON.stringify({ reason: "Events since Last-Event-ID are no longer kept; reload, then keep listening." })}\n\n`,
      ),
    );
  schedule(admission.user);
  return new Response(body, {
    headers: {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache, no-transform",
      "x-accel-buffering": "no",
    },
  });
}

/** When the caller's credentials stop being valid: a JWT's `exp`, or an `expiresAt` an identity gives. */
function expiryOf(user: User | null): number | undefined {
  if (!user) return undefined;
  const exp = (user.claims as { exp?: unknown } | undefined)?.exp;
  if (typeof exp === "number") return exp * 1000;
  const at = user.expiresAt;
  if (at instanceof Date) return at.getTime();
  if (typeof at === "number") return at;
  if (typeof at === "string" && !Number.isNaN(Date.parse(at))) return Date.parse(at);
  return undefined;
}
