// Requests' log lines, written as bytes straight into the sink's buffer (line-sink.ts), together,
// just before the sink writes: the one line every request writes. Each is byte for byte the line
// `jsonLine(info, record, "request")` writes (logger.ts; a test compares the two on hostile texts),
// made without a text. Made as a text per request, then encoded into the buffer, the lines kept
// 0.91 of the throughput of no log on a read by id; made this way, 0.94 (the example app served
// twice by one process, with and without its request log, over HTTP; 6 rounds, 3 runs each). What
// a route and its answer fix is escaped and encoded once and kept (RouteBytes): the method,
// template and status together; the resource, operation and code; each user id; and the level
// with the time of the last millisecond. When a request is answered, its line waits as those kept
// parts, its numbers and its request id's bytes (a sane token, request-id.ts), in arrays kept from
// batch to batch (WaitingLines): its fields are read once, when the log is told of the request (at
// the end of the event loop's turn it was answered in, answered-requests.ts; its `time` is then). A
// record that does not fit waits as itself, and is read again and escaped as JSON when its line
// is made. So a line is six copies of kept bytes, two numbers written digit by digit, and the
// id's bytes. A request's line thus goes out after lines logged while it waited (each has its
// time).

import type { RequestRecord } from "./http-handler.ts";
import type { LineSink } from "./line-sink.ts";

/**
 * Writes each record's line into `sink`. A record whose fields are not of their types (one made in
 * code: an id that is a number, a user id that is an object) goes to `generic` instead, which
 * writes it as `info(record, "request")` would.
 */
export function requestLineWriter(
  sink: Required<LineSink>,
  generic: (record: RequestRecord) => void,
): (record: RequestRecord) => void {
  const parts = new RouteBytes();
  const line: KeptLine = { ...noParts(), ids: EMPTY, slot: 0, idLength: 0 };
  const oddLine: OddLine = { ...noParts(), text: "" };
  // The lines since the sink last wrote, made together just before it writes again. Each waits
  // as its kept parts and numbers (WaitingLines), not as its record: a record kept up to 50 ms
  // outlived the young generation's collections, which copied it and then moved it to the old
  // one (about 0.5 µs a request more collecting, measured with --trace-gc at 10,000 requests/s).
  const waiting = new WaitingLines();
  const drain = () => {
    const count = waiting.count;
    waiting.count = 0;
    for (let i = 0; i < count; i++) {
      // A line that cannot be made (a field that throws, in a record made in code; a sink of
      // your own that throws) is lost, not the others'.
      try {
        const odd = waiting.odd[i];
        if (odd === undefined) {
          waiting.take(i, line);
          sink.writeWith(lineMost(line) + line.idLength, fillLine, line);
        } else {
          waiting.odd[i] = undefined;
          write(odd, waiting.times[i]!);
        }
      } catch {}
    }
  };
  /**
   * A record's line the slow way: any field of any type, an id that needs escaping. Its fields are
   * read again here, when the line is made.
   */
  const write = (record: RequestRecord, time: number) => {
    // Each field read once: what is checked is what is written.
    const { method, route, status, durationMs, requestId, bytes, userId, resource, operation, code } = record;
    if (
      typeof method !== "string" ||
      typeof route !== "string" ||
      typeof status !== "number" ||
      typeof durationMs !== "number" ||
      typeof requestId !== "string" ||
      (bytes !== undefined && typeof bytes !== "number") ||
      (userId !== undefined && typeof userId !== "string") ||
      (resource !== undefined && typeof resource !== "string") ||
      (operation !== undefined && typeof operation !== "string") ||
      (code !== undefined && typeof code !== "string")
    )
      return generic(record);
    const odd = oddLine;
    odd.start = lineStart(time);
    odd.head = parts.head(route, method, status);
    odd.durationMs = durationMs;
    odd.text = requestId;
    odd.bytes = bytes;
    odd.user = userId === undefined ? EMPTY : parts.user(userId);
    odd.end = parts.end(resource, operation, code);
    // A request id's character escaped as JSON is 6 bytes at most (`\u0000`).
    sink.writeWith(lineMost(odd) + requestId.length * 6, fillOddLine, odd);
  };
  /** Keeps `record`'s line in the next slot, its fields read first: a getter runs before any slot changes. */
  const keep = (record: RequestRecord) => {
    // Each field read once: what is checked is what is kept.
    const { method, route, status, durationMs, requestId, bytes, userId, resource, operation, code } = record;
    const fits =
      typeof method === "string" &&
      typeof route === "string" &&
      typeof status === "number" &&
      typeof durationMs === "number" &&
      typeof requestId === "string" &&
      (bytes === undefined || (typeof bytes === "number" && Number.isSafeInteger(bytes) && bytes >= 0)) &&
      (userId === undefined || typeof userId === "string") &&
      (resource === undefined || typeof resource === "string") &&
      (operation === undefined || typeof operation === "string") &&
      (code === undefined || typeof code === "string");
    const i = waiting.reserve(Date.now());
    if (!fits || !waiting.keepId(i, requestId)) {
      waiting.odd[i] = record;
      return;
    }
    waiting.heads[i] = parts.head(route, method, status);
    waiting.durations[i] = durationMs;
    waiting.bytes[i] = bytes ?? -1;
    waiting.users[i] = userId === undefined ? EMPTY : parts.user(userId);
    waiting.ends[i] = parts.end(resource, operation, code);
  };
  return (record) => {
    if (waiting.count === 0) sink.writeLater(drain);
    try {
      keep(record);
    } catch {
      // A field that throws: its line is made from the record at the write, and is lost there.
      waiting.odd[waiting.reserve(Date.now())] = record;
    }
    // A sink that cannot write (a stalled reader) does not keep lines without end: past this
    // many they are made, which its cap bounds.
    if (waiting.count >= MAX_WAITING) drain();
  };
}

/** Lines kept before they are made. */
const MAX_WAITING = 4096;
/** The longest request id kept as bytes: a sane token's (request-id.ts). */
const KEPT_ID = 128;

/**
 * Lines waiting for the sink's next write, slot by slot: their time, kept parts and numbers, and
 * their request id's bytes, in arrays kept from batch to batch. A line of a record that does not
 * fit waits as the record: a field of another type or one that throws, an id to escape or longer
 * than 128 characters, bytes that are not a non-negative integer (records made in code).
 */
class WaitingLines {
  count = 0;
  times = new Float64Array(FIRST_SLOTS);
  durations = new Float64Array(FIRST_SLOTS);
  /** -1: the record gave none. */
  bytes = new Float64Array(FIRST_SLOTS);
  ids = Buffer.alloc(FIRST_SLOTS * KEPT_ID);
  idLengths = new Uint8Array(FIRST_SLOTS);
  heads: Buffer[] = [];
  users: Buffer[] = [];
  ends: Buffer[] = [];
  odd: (RequestRecord | undefined)[] = [];

  /** The next slot, for a line of `time`, the arrays grown when full. */
  reserve(time: number): number {
    const i = this.count++;
    if (i === this.times.length) {
      const size = Math.min(MAX_WAITING, i * 2);
      this.times = grown(this.times, new Float64Array(size));
      this.durations = grown(this.durations, new Float64Array(size));
      this.bytes = grown(this.bytes, new Float64Array(size));
      this.ids = grown(this.ids, Buffer.alloc(size * KEPT_ID));
      this.idLengths = grown(this.idLengths, new Uint8Array(size));
    }
    this.odd[i] = undefined;
    this.times[i] = time;
    return i;
  }

  /** Keeps `id`'s bytes in slot `i` when it is a sane token; false when it must wait as text. */
  keepId(i: number, id: string): boolean {
    if (id.length > KEPT_ID) return false;
    const { ids } = this;
    const from = i * KEPT_ID;
    for (let k = 0; k < id.length; k++) {
      const code = id.charCodeAt(k);
      if (code < 0x20 || code > 0x7e || code === 0x22 || code === 0x5c) return false;
      ids[from + k] = code;
    }
    this.idLengths[i] = id.length;
    return true;
  }

  /** Slot `i`'s line into `line`; the slot lets go of its parts. */
  take(i: number, line: KeptLine): void {
    line.start = lineStart(this.times[i]!);
    line.head = this.heads[i]!;
    line.durationMs = this.durations[i]!;
    line.ids = this.ids;
    line.slot = i;
    line.idLength = this.idLengths[i]!;
    const bytes = this.bytes[i]!;
    line.bytes = bytes < 0 ? undefined : bytes;
    line.user = this.users[i]!;
    line.end = this.ends[i]!;
    // Parts made for one line (past RouteBytes' budgets, a user let go) are not kept for long.
    this.heads[i] = this.users[i] = this.ends[i] = EMPTY;
  }
}

/** Slots at first: a batch of 50 ms at 5,000 requests a second. */
const FIRST_SLOTS = 256;

function grown<T extends Float64Array | Uint8Array>(from: T, into: T): T {
  into.set(from);
  return into;
}

/**
 * The values and parts of a line: `start` (level and time), `head` (message, method, route,
 * status, and the duration's name), the duration, the request id, the bytes, `user` (the user id's
 * field, or nothing) and `end` (resource, operation, code, the closing brace). One object for
 * every kept line and one for every other, filled anew for each: six copies of kept bytes and
 * three numbers or texts between.
 */
interface LineParts {
  start: Buffer;
  head: Buffer;
  durationMs: number;
  bytes: number | undefined;
  user: Buffer;
  end: Buffer;
}

/** A line whose request id waits as bytes, in slot `slot` of `ids`. */
interface KeptLine extends LineParts {
  ids: Buffer;
  slot: number;
  idLength: number;
}

/** A line made from its record: its request id a text, escaped when it must be. */
interface OddLine extends LineParts {
  text: string;
}

function noParts(): LineParts {
  return { start: EMPTY, head: EMPTY, durationMs: 0, bytes: undefined, user: EMPTY, end: EMPTY };
}

const EMPTY: Buffer = Buffer.alloc(0);
const REQUEST_ID = Buffer.from(',"requestId":"');
const ID_END_BYTES = Buffer.from('","bytes":');
const NULL = "null";
/**
 * Bytes of every line besides its kept parts and its request id, at most: two numbers of 25
 * characters at most each (`-0.0000012345678901234567`), the request id's opening and closing
 * texts.
 */
const FIXED_MOST = REQUEST_ID.length + ID_END_BYTES.length + 2 * 25;

/** A line's length at most, its request id aside. */
function lineMost(line: LineParts): number {
  return line.start.length + line.head.length + line.user.length + line.end.length + FIXED_MOST;
}

function fillLine(into: Buffer, start: number, line: KeptLine): number {
  const at = fillHead(into, start, line);
  const { ids, idLength } = line;
  const from = line.slot * KEPT_ID;
  // A loop, for 20 to 40 bytes: no call into the runtime, no view made.
  for (let i = 0; i < idLength; i++) into[at + i] = ids[from + i]!;
  return fillTail(into, at + idLength, line);
}

function fillOddLine(into: Buffer, start: number, line: OddLine): number {
  return fillTail(into, writeRequestId(into, fillHead(into, start, line), line.text), line);
}

/** The line up to its request id's opening quote. */
function fillHead(into: Buffer, start: number, line: LineParts): number {
  let at = copy(into, start, line.start);
  at = copy(into, at, line.head);
  at = writeMilliseconds(into, at, line.durationMs);
  return copy(into, at, REQUEST_ID);
}

/** The line from its request id's closing quote. */
function fillTail(into: Buffer, start: number, line: LineParts): number {
  let at = start;
  if (line.bytes === undefined)
    into[at++] = 0x22; // "
  else {
    at = copy(into, at, ID_END_BYTES);
    at = writeAscii(into, at, Number.isFinite(line.bytes) ? String(line.bytes) : NULL);
  }
  return copy(into, copy(into, at, line.user), line.end);
}

let lastTime = Number.NaN;
let lastStart = EMPTY;

/** `{"level":30,"time":…` for a time: a request of the same millisecond as the last one reuses it. */
function lineStart(now: number): Buffer {
  if (now !== lastTime) {
    lastTime = now;
    lastStart = Buffer.from(`{"level":30,"time":${Number.isFinite(now) ? now : NULL}`);
  }
  return lastStart;
}

/**
 * Copies a kept part with `set`: a copy of memory, where a loop over its bytes made the line cost
 * about twice as much (0.54 µs against 0.27 µs a line, measured alone).
 */
function copy(into: Buffer, at: number, part: Buffer): number {
  into.set(part, at);
  return at + part.length;
}

/** Writes a text of ASCII characters only (digits, as String() writes numbers). */
function writeAscii(into: Buffer, at: number, text: string): number {
  for (let i = 0; i < text.length; i++) into[at + i] = text.charCodeAt(i);
  return at + text.length;
}

/**
 * The request id, without its closing quote. A sane token's characters need no escape; an id that
 * has others (a record made in code) is written as JSON.stringify escapes it.
 */
function writeRequestId(into: Buffer, start: number, id: string): number {
  let at = start;
  for (let i = 0; i < id.length; i++) {
    const code = id.charCodeAt(i);
    if (code < 0x20 || code > 0x7e || code === 0x22 || code === 0x5c) {
      // From the opening quote on, the whole id as JSON text, its closing quote left out.
      const text = JSON.stringify(id);
      return start - 1 + into.write(text, start - 1, "utf8") - 1;
    }
    into[at++] = code;
  }
  return at;
}

/**
 * A duration rounded to the microsecond (as recordOf makes it), as JSON.stringify writes it, from
 * integers: the shortest digits of a fraction are its integer's, its zeros trimmed.
 */
function writeMilliseconds(into: Buffer, at: number, value: number): number {
  const micros = Math.round(value * 1000);
  // From 2^42 ms on, doubles are too far apart for three decimals to be the shortest form.
  if (!Number.isSafeInteger(micros) || micros < 0 || value >= 2 ** 42 || micros / 1000 !== value)
    return writeAscii(into, at, Number.isFinite(value) ? String(value) : NULL);
  const whole = Math.floor(micros / 1000);
  let fraction = micros - whole * 1000;
  at = writeAscii(into, at, String(whole));
  if (fraction === 0) return at;
  into[at++] = 0x2e; // .
  into[at++] = 0x30 + Math.floor(fraction / 100);
  fraction %= 100;
  if (fraction === 0) return at;
  into[at++] = 0x30 + Math.floor(fraction / 10);
  fraction %= 10;
  if (fraction === 0) return at;
  into[at++] = 0x30 + fraction;
  return at;
}

/**
 * The parts of request lines that repeat, escaped and encoded once: per route, method and status,
 * `,"msg":"request","method":…,"route":…,"status":…,"durationMs":`; per user, `,"userId":…`; per
 * resource, operation and code, the rest of the line. Routes are templates and methods and
 * statuses closed sets, but a Request or a record made in code may carry any: past MAX_HEADS
 * heads and MAX_TAILS ends, the rest are made each time. Users are many: the last MAX_USERS are
 * kept, the whole set let go when it is full.
 */
class RouteBytes {
  #heads = new Map<string, Map<string, Map<number, Buffer>>>();
  #headsKept = 0;
  #tails = new Map<string | undefined, Map<string | undefined, Map<string | undefined, Buffer>>>();
  #tailsKept = 0;
  #users = new Map<string, Buffer>();

  head(route: string, method: string, status: number): Buffer {
    const found = this.#heads.get(route)?.get(method)?.get(status);
    if (found !== undefined) return found;
    // JSON.stringify writes a status that is not finite as null, and -0 as 0 (as String does).
    const bytes = Buffer.from(
      `,"msg":"request","method":${JSON.stringify(method)},"route":${JSON.stringify(route)},"status":${Number.isFinite(status) ? String(status) : NULL},"durationMs":`,
    );
    if (this.#headsKept < MAX_HEADS) {
      this.#headsKept++;
      inner(inner(this.#heads, route), method).set(status, bytes);
    }
    return bytes;
  }

  user(userId: string): Buffer {
    let bytes = this.#users.get(userId);
    if (bytes === undefined) {
      if (this.#users.size >= MAX_USERS) this.#users.clear();
      bytes = Buffer.from(`,"userId":${JSON.stringify(userId)}`);
      this.#users.set(userId, bytes);
    }
    return bytes;
  }

  /** `,"resource":…,"operation":…,"code":…}` and a newline, each field when given. */
  end(resource: string | undefined, operation: string | undefined, code: string | undefined): Buffer {
    const found = this.#tails.get(resource)?.get(operation)?.get(code);
    if (found !== undefined) return found;
    let text = "";
    if (resource !== undefined) text += `,"resource":${JSON.stringify(resource)}`;
    if (operation !== undefined) text += `,"operation":${JSON.stringify(operation)}`;
    if (code !== undefined) text += `,"code":${JSON.stringify(code)}`;
    const bytes = Buffer.from(`${text}}\n`);
    if (this.#tailsKept < MAX_TAILS) {
      this.#tailsKept++;
      inner(inner(this.#tails, resource), operation).set(code, bytes);
    }
    return bytes;
  }
}

/**
 * Heads kept: about 100 bytes each. An app's routes times the statuses each answers (200, 304,
 * 404, 409, 422, …), with room for made-up methods on unmatched paths.
 */
const MAX_HEADS = 2048;
/** Ends kept: resources times operations times error codes. */
const MAX_TAILS = 1024;
/** User ids' fields kept. */
const MAX_USERS = 1024;

/** The map kept under `key` in `outer`, made when missing. */
function inner<K, V extends Map<unknown, unknown>>(outer: Map<K, V>, key: K): V {
  let found = outer.get(key);
  if (!found) {
    found = new Map() as V;
    outer.set(key, found);
  }
  return found;
}
