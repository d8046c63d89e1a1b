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
import { type ListRules, parseListFilter, unknownParameter } from "../query/list-query.ts";
import { type Condition, fieldsNamed } from "../query/where.ts";
import { matchesWhere, namesOtherRecords } from "../query/where-match.ts";
import { type Admission, admit, decide } from "../resource/admission.ts";
import { hiddenSomewhere } from "../resource/field-access.ts";
import type { ResourceRuntime } from "../resource/runtime.ts";
import type { ChangeEvent } from "./bus.ts";
import type { Frame, RealtimeHub, Stream } from "./hub.ts";

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
  // Events are matched and shaped in memory: a field she reads on some rows only is left out of
  // them, and not filtered on (only the database can tell on which rows she may read it).
  const rules = rt.listRulesFor(hiddenSomewhere(admission.hidden));
  const { where, lastEventId } = subscription(ctx, rules);
  if (hub.full) throw new APIError("SERVICE_UNAVAILABLE", "Too many event streams are open; retry shortly.");
  // One caller cannot take every connection: a few streams per user and per address.
  const release = hub.holdPlace(admission.user?.id, ctx.ip === undefined ? undefined : addressKey(ctx.ip));
  try {
    await hub.start();
  } catch (error) {
    release();
    throw error;
  }
  const stream = new EventStream(rt, hub, {
    identify,
    admission,
    where,
    filterFields: rules.filterable,
    release,
  });
  const body = stream.body(ctx.request.url, new Headers(ctx.headers));
  const resumed = hub.attach(stream, lastEventId || undefined);
  if (!resumed)
    stream.write(
      encoder.encode(
        `event: reset\ndata: ${JSON.stringify({ reason: "Events since Last-Event-ID are no longer kept; reload, then keep listening." })}\n\n`,
      ),
    );
  stream.schedule(admission.user);
  return new Response(body, {
    headers: {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache, no-transform",
      "x-accel-buffering": "no",
    },
  });
}

/** The stream's filter and where it resumes, checked as a list checks its query. */
function subscription(
  ctx: EndpointContext,
  rules: ListRules,
): { where: Condition | undefined; lastEventId: string | undefined } {
  // The one answer every list gives an unknown parameter, naming it (`filters[status]` included).
  for (const name of Object.keys(ctx.query))
    if (!isFilterParameter(name) && name !== "lastEventId") throw unknownParameter(name, ["lastEventId"]);
  const where = parseListFilter(ctx.query, rules, ctx.where);
  // `filter[author.name]` names a related record's field (a `via` field): refused like a related condition.
  if (
    where &&
    (namesOtherRecords(where) ||
      [...fieldsNamed(where)].some((f) => rules.filterable.get(f)?.via !== undefined))
  )
    throw new APIError(
      "BAD_REQUEST",
      "Event streams cannot filter on related records; filter on this resource's fields.",
    );
  const lastEventId = ctx.headers.get("last-event-id") ?? ctx.query.lastEventId ?? undefined;
  if (lastEventId !== undefined && lastEventId !== "" && !EVENT_ID.test(lastEventId))
    throw new APIError("BAD_REQUEST", "Last-Event-ID must be the id of an event this stream sent.");
  return { where, lastEventId };
}

interface Subscriber {
  identify: Identify | undefined;
  admission: Admission;
  where: Condition | undefined;
  filterFields: ListRules["filterable"];
  /** Gives back the place the stream held (per user, per address). */
  release: () => void;
}

/** One subscriber's stream: what she may see of each change, batched, until it ends. */
class EventStream implements Stream {
  readonly resource: string;
  private open = true;
  private controller!: ReadableStreamDefaultController<Uint8Array>;
  private timer: NodeJS.Timeout | undefined;
  // Events that need the database (a row rule on related records) keep their order through this.
  private pending: Promise<void> = Promise.resolve();
  // What the caller may see: changed when her access is asked again.
  private scope: Condition | undefined;
  private hidden: ReadonlySet<string>;
  /** The fields the stream's filter names: a filter on a field that becomes hidden ends it. */
  private readonly named: ReadonlySet<string> | undefined;
  // Bytes waiting for the next flush (the hub flushes every stream at most every `flushEvery` ms).
  private waiting: Uint8Array[] = [];
  private waitingBytes = 0;
  private url = "";
  private headers = new Headers();

  constructor(
    private readonly rt: ResourceRuntime,
    private readonly hub: RealtimeHub,
    private readonly subscriber: Subscriber,
  ) {
    this.resource = rt.resource.name;
    this.scope = subscriber.admission.scope;
    this.hidden = hiddenSomewhere(subscriber.admission.hidden);
    this.named = subscriber.where ? fieldsNamed(subscriber.where) : undefined;
  }

  /** The response body; `url` and `headers` identify the caller again when her access is rechecked. */
  body(url: string, headers: Headers): ReadableStream<Uint8Array> {
    this.url = url;
    this.headers = headers;
    return new ReadableStream<Uint8Array>(
      {
        start: (c) => {
          this.controller = c;
          c.enqueue(encoder.encode("retry: 3000\n: connected\n\n"));
        },
        cancel: () => this.close(),
      },
      new ByteLengthQueuingStrategy({ highWaterMark: 16 * 1024 }),
    );
  }

  /** An event's frame, counted as sent (metrics()). */
  send(bytes: Uint8Array): void {
    if (this.write(bytes)) this.hub.eventSent();
  }

  write(bytes: Uint8Array): boolean {
    if (!this.open) return false;
    this.waiting.push(bytes);
    this.waitingBytes += bytes.byteLength;
    // A burst goes out (and counts against the slow-client limit) without waiting for the timer.
    if (this.waitingBytes >= FLUSH_AT) this.flush();
    else this.hub.pending(this);
    return this.open;
  }

  flush(): void {
    if (!this.open || this.waiting.length === 0) return;
    this.controller.enqueue(this.waiting.length === 1 ? this.waiting[0]! : Buffer.concat(this.waiting));
    this.waiting = [];
    this.waitingBytes = 0;
    // The client reads too slowly: what waits for it must not grow without bound.
    if ((this.controller.desiredSize ?? 0) < -this.hub.settings.maxQueued) {
      this.hub.dropped++;
      this.end("dropped", "This client read events too slowly; reconnect with Last-Event-ID.");
    }
  }

  end(event: string, reason: string): void {
    if (!this.open) return;
    this.flush();
    if (!this.open) return;
    this.controller.enqueue(encoder.encode(`event: ${event}\ndata: ${JSON.stringify({ reason })}\n\n`));
    this.close();
    try {
      this.controller.close();
    } catch {
      // The stream was already cancelled.
    }
  }

  offer(event: ChangeEvent, frame: Frame): void {
    if (!this.open) return;
    const record = event.record;
    if (!record) {
      // A delete too large for the bus: only a subscriber who sees every row may hear of it.
      if (!this.scope && !this.subscriber.where) this.send(frame(this.hidden));
      return;
    }
    const seen = this.visible(record);
    if (seen !== undefined) {
      if (seen) this.send(frame(this.hidden));
      return;
    }
    // The row rule names related records: the database decides (a deleted record cannot be asked).
    if (event.type === "delete") return;
    const { rt } = this;
    this.pending = this.pending
      .then(async () => {
        if (this.open && (await rt.store.findById(rt.db, event.recordId, this.scope)))
          this.send(frame(this.hidden));
      })
      .catch((error) => rt.log("crudkit: a realtime event could not be checked", error));
  }

  /** Asks again after a while, or when the caller's credentials expire, whichever is first. */
  schedule(user: User | null): void {
    if (!this.open) return;
    const expiry = expiryOf(user);
    const wait = Math.min(
      this.hub.settings.recheck * 1000,
      expiry === undefined ? Infinity : expiry - Date.now(),
    );
    // Credentials past their expiry may still pass for a moment (a clock tolerance): ask each second.
    this.timer = setTimeout(() => void this.recheck(), wait > 0 ? wait : 1000);
    this.timer.unref();
  }

  private visible(record: Record<string, unknown>): boolean | undefined {
    const { where, filterFields } = this.subscriber;
    if (where && !matchesWhere(where, record, filterFields, this.hub.likeFolds)) return false;
    return this.scope ? matchesWhere(this.scope, record, this.rt.ruleFields, this.hub.likeFolds) : true;
  }

  /** Asks the caller's identity and list rule again; a caller who lost access is told, then cut off. */
  private async recheck(): Promise<void> {
    const { rt, headers } = this;
    const { identify } = this.subscriber;
    try {
      const user = identify ? await identify(new Request(this.url, { headers })) : null;
      const again = await decide(rt, { user, headers, operation: "list", resource: rt.resource.name });
      this.scope = again.scope;
      this.hidden = hiddenSomewhere(again.hidden);
      // A filter on a field now hidden would keep telling its value apart (a prefix at a time).
      if (this.named && [...this.named].some((f) => this.hidden.has(f)))
        return this.end(
          "expired",
          "A field this stream filters on is no longer visible to you; reconnect without it.",
        );
      this.schedule(user);
    } catch (error) {
      const status = error instanceof APIError ? error.status : 500;
      if (status >= 500) rt.log("crudkit: an event stream's access could not be checked", error);
      this.end("expired", "Your access to this stream ended; sign in again, then reconnect.");
    }
  }

  private close(): void {
    if (!this.open) return;
    this.open = false;
    this.subscriber.release();
    clearTimeout(this.timer);
    this.hub.detach(this);
  }
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
