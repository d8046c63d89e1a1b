// The realtime hub of one app instance: takes committed changes to the bus, and hands every event
// the bus delivers to the event streams of its resource, each stream deciding for its subscriber
// whether she may see it. Keeps the last events for resuming with Last-Event-ID, sends heartbeats,
// and drops a stream whose client reads too slowly (a final `dropped` event, then the end).

import { APIError } from "../core/errors.ts";
import { uuidv7 } from "../core/id.ts";
import type { DialectProfile } from "../db/dialect.ts";
import { type ChangeEvent, type ChangeType, memoryBus, type RealtimeBus } from "./bus.ts";

export interface RealtimeOptions {
  /** How events reach every instance. @default memoryBus() (one instance) */
  bus?: RealtimeBus;
  /** Seconds between heartbeats on an idle stream. @default 15 */
  heartbeat?: number;
  /** Events kept for a reconnecting client's `Last-Event-ID`. @default 1000 */
  history?: number;
  /** Bytes a stream may have waiting for a slow client before it is dropped. @default 1048576 */
  maxQueued?: number;
  /** Seconds between re-checks of a subscriber's access (her credentials' expiry too). @default 300 */
  recheck?: number;
  /**
   * Streams open at once on this instance; more answer 503. `serve()` lowers it below its
   * `maxConnections`, keeping connections for ordinary requests. @default 10000
   */
  maxStreams?: number;
  /** Streams one user may hold open on this instance; more answer 429. @default 5 */
  maxStreamsPerUser?: number;
  /** Streams one address (an IPv6 /64) may hold open, signed in or not; more answer 429. @default 20 */
  maxStreamsPerAddress?: number;
  /**
   * Milliseconds events may wait to be sent together: one write per stream per window instead of
   * one per event, which is what lets one instance serve thousands of streams. @default 20
   */
  flushEvery?: number;
}

/** An event's SSE frame for a set of hidden fields, encoded once per set and shared by streams. */
export type Frame = (hidden: ReadonlySet<string>) => Uint8Array;

const encoder = new TextEncoder();
const HEARTBEAT = encoder.encode(": heartbeat\n\n");

/** One open event stream, as the hub sees it. */
export interface Stream {
  readonly resource: string;
  /** Sends the event if its subscriber may see it (in order with the others). */
  offer(event: ChangeEvent, frame: Frame): void;
  /** Raw SSE bytes (heartbeats); false once the stream is gone. */
  write(bytes: Uint8Array): boolean;
  /** Sends what was written since the last flush, as one chunk. */
  flush(): void;
  /** Ends the stream with a final control event. */
  end(event: string, reason: string): void;
}

export interface RealtimeStats {
  streams: number;
  /** Streams dropped for reading too slowly since the start. */
  dropped: number;
  bus: string;
}

export class RealtimeHub {
  /** Told of each event frame written to a stream (the plugin counts them for metrics()). */
  eventSent: () => void = () => {};
  readonly settings: Required<Omit<RealtimeOptions, "bus">>;
  readonly bus: RealtimeBus;
  #streams = new Map<string, Set<Stream>>();
  #count = 0;
  /** Streams held per user and per address (`user\0id`, `ip\0address`). */
  readonly #held = new Map<string, number>();
  #history: ChangeEvent[] = [];
  #heartbeat: NodeJS.Timeout | undefined;
  #started: Promise<void> | undefined;
  #deliveries: Promise<void> = Promise.resolve();
  #dirty = new Set<Stream>();
  #flushTimer: NodeJS.Timeout | undefined;
  dropped = 0;

  constructor(
    options: RealtimeOptions,
    /** Reads a record again, for an event that travelled without it. */
    private readonly reload: (resource: string, id: string) => Promise<Record<string, unknown> | undefined>,
    private readonly log: (message: string, error?: unknown) => void,
    /** How the database's LIKE compares text, so events are filtered as lists are. */
    readonly likeFolds: DialectProfile["likeFolds"] = "case",
  ) {
    this.bus = options.bus ?? memoryBus();
    this.settings = {
      heartbeat: positive(options.heartbeat ?? 15, "heartbeat"),
      history: Math.floor(positive(options.history ?? 1000, "history")),
      maxQueued: Math.floor(positive(options.maxQueued ?? 1024 * 1024, "maxQueued")),
      recheck: positive(options.recheck ?? 300, "recheck"),
      maxStreams: Math.floor(positive(options.maxStreams ?? 10_000, "maxStreams")),
      maxStreamsPerUser: Math.floor(positive(options.maxStreamsPerUser ?? 5, "maxStreamsPerUser")),
      maxStreamsPerAddress: Math.floor(positive(options.maxStreamsPerAddress ?? 20, "maxStreamsPerAddress")),
      flushEvery: positive(options.flushEvery ?? 20, "flushEvery"),
    };
  }

  /** Connects to the bus and starts the heartbeats (once). */
  start(): Promise<void> {
    this.#started ??= (async () => {
      await this.bus.start((event) => {
        // One after the other, so an event read again from the database keeps its place.
        this.#deliveries = this.#deliveries
          .then(() => this.#deliver(event))
          .catch((error) => {
            this.log("crudkit: a realtime event could not be delivered", error);
          });
      });
      this.#heartbeat = setInterval(() => this.#beat(), this.settings.heartbeat * 1000);
      this.#heartbeat.unref();
    })();
    // A bus that could not connect (the database or Redis still down at startup) is tried again
    // by the next start, not remembered as failed.
    const started = this.#started;
    started.catch(() => {
      if (this.#started === started) this.#started = undefined;
    });
    return started;
  }

  /** After a commit: the change goes to every instance. Never throws into the write. */
  async publish(type: ChangeType, resource: string, record: Record<string, unknown>): Promise<void> {
    const event: ChangeEvent = { id: uuidv7(), resource, type, record, recordId: String(record.id) };
    await this.bus
      .publish(event)
      .catch((error) => this.log("crudkit: a realtime event was not published", error));
  }

  /**
   * Adds a stream. With `lastEventId`, the events after it that are still kept are offered first;
   * false when that event is no longer kept (the client must reload what it shows).
   */
  attach(stream: Stream, lastEventId: string | undefined): boolean {
    const set = this.#streams.get(stream.resource) ?? new Set<Stream>();
    this.#streams.set(stream.resource, set);
    set.add(stream);
    this.#count++;
    if (lastEventId === undefined) return true;
    const at = this.#history.findIndex((e) => e.id === lastEventId);
    if (at === -1) return false;
    for (const event of this.#history.slice(at + 1))
      if (event.resource === stream.resource) stream.offer(event, frames(event));
    return true;
  }

  detach(stream: Stream): void {
    if (this.#streams.get(stream.resource)?.delete(stream)) this.#count--;
    this.#dirty.delete(stream);
  }

  /** A stream has bytes waiting: they go out with the next flush, at most `flushEvery` ms away. */
  pending(stream: Stream): void {
    this.#dirty.add(stream);
    this.#flushTimer ??= setTimeout(() => {
      this.#flushTimer = undefined;
      const dirty = [...this.#dirty];
      this.#dirty.clear();
      for (const each of dirty) each.flush();
    }, this.settings.flushEvery);
  }

  get full(): boolean {
    return this.#count >= this.settings.maxStreams;
  }

  /**
   * Takes a place for a stream of `user` from `address`, or answers 429 when either already holds
   * its most; the returned function gives the place back (once).
   */
  holdPlace(user: string | undefined, address: string | undefined): () => void {
    // An unknown address (a host that passes none) is not one bucket for everyone: only the user counts.
    const held: [key: string, limit: number, whose: string][] = [];
    if (address !== undefined)
      held.push([`ip\0${address}`, this.settings.maxStreamsPerAddress, "from your address"]);
    if (user !== undefined) held.push([`user\0${user}`, this.settings.maxStreamsPerUser, "for you"]);
    for (const [key, limit, whose] of held)
      if ((this.#held.get(key) ?? 0) >= limit)
        throw new APIError(
          "RATE_LIMITED",
          `Too many event streams are open ${whose}; close one, then retry.`,
          {
            headers: { "retry-after": "5" },
          },
        );
    const keys = held.map(([key]) => key);
    for (const key of keys) this.#held.set(key, (this.#held.get(key) ?? 0) + 1);
    let given = false;
    return () => {
      if (given) return;
      given = true;
      for (const key of keys) {
        const left = (this.#held.get(key) ?? 1) - 1;
        if (left <= 0) this.#held.delete(key);
        else this.#held.set(key, left);
      }
    };
  }

  /** Keeps `reserved` of a server's connections for ordinary requests: streams get the rest at most. */
  reserveConnections(maxConnections: number, reserved: number): void {
    if (!Number.isFinite(maxConnections) || maxConnections <= 0) return;
    this.settings.maxStreams = Math.max(1, Math.min(this.settings.maxStreams, maxConnections - reserved));
  }

  stats(): RealtimeStats {
    return { streams: this.#count, dropped: this.dropped, bus: this.bus.kind };
  }

  /** Ends every open stream with a final `close` event; clients reconnect (and resume). */
  endStreams(): void {
    for (const set of this.#streams.values())
      for (const stream of [...set]) stream.end("close", "The server is shutting down; reconnect shortly.");
    this.#streams.clear();
    this.#count = 0;
  }

  /** Ends the streams, the heartbeats and the bus connection. */
  async close(): Promise<void> {
    clearInterval(this.#heartbeat);
    clearTimeout(this.#flushTimer);
    this.endStreams();
    if (this.#started) await this.bus.close();
  }

  async #deliver(event: ChangeEvent): Promise<void> {
    if (!event.record && event.type !== "delete") {
      // Too large for the bus: read it again (it may be gone, or changed again: then a later event follows).
      const record = await this.reload(event.resource, event.recordId);
      if (!record) return;
      event = { ...event, record };
    }
    this.#history.push(event);
    if (this.#history.length > this.settings.history)
      this.#history.splice(0, this.#history.length - this.settings.history);
    const set = this.#streams.get(event.resource);
    if (!set || set.size === 0) return;
    const frame = frames(event);
    for (const stream of [...set]) stream.offer(event, frame);
  }

  #beat(): void {
    for (const set of this.#streams.values())
      for (const stream of [...set]) {
        stream.write(HEARTBEAT);
        stream.flush();
      }
  }
}

/** The SSE frame of an event for each set of hidden fields, made once per set. */
function frames(event: ChangeEvent): Frame {
  const made = new Map<string, Uint8Array>();
  return (hidden) => {
    const key = hiddenKey(hidden);
    let text = made.get(key);
    if (text === undefined) {
      const source = event.record ?? { id: event.recordId };
      const record: Record<string, unknown> = {};
      for (const name of Object.keys(source)) if (!hidden.has(name)) record[name] = source[name];
      const data = JSON.stringify({ type: event.type, resource: event.resource, record });
      text = encoder.encode(`id: ${event.id}\nevent: ${event.type}\ndata: ${data}\n\n`);
      made.set(key, text);
    }
    return text;
  };
}

/** A set of hidden fields as text, made once per set (each stream keeps its set until a re-check). */
const hiddenKeys = new WeakMap<ReadonlySet<string>, string>();
function hiddenKey(hidden: ReadonlySet<string>): string {
  if (hidden.size === 0) return "";
  const known = hiddenKeys.get(hidden);
  if (known !== undefined) return known;
  const key = [...hidden].sort().join("\0");
  hiddenKeys.set(hidden, key);
  return key;
}

function positive(value: number, name: string): number {
  if (!(Number.isFinite(value) && value > 0)) throw new Error(`realtime: ${name} must be a positive number.`);
  return value;
}
