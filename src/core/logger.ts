// The structured logger crudkit writes to: pino's calling convention (`logger.info(fields, msg)`),
// so `pino()` (or any logger with the same methods) plugs in as it is. Without one, JSON lines
// in pino's shape go to stderr through a sink that never blocks (line-sink.ts); `pretty` gives
// one readable line per event instead, for development.

import type { RequestObservers } from "./answered-requests.ts";
import type { RequestRecord } from "./http-handler.ts";
import { type LineSink, lineSink } from "./line-sink.ts";
import { requestLineWriter } from "./request-line.ts";

/** What crudkit needs of a logger: pino's methods (pino itself fits). */
export interface Logger {
  info(fields: object, message?: string): void;
  warn(fields: object, message?: string): void;
  error(fields: object, message?: string): void;
}

export interface JsonLoggerOptions {
  /** Where the lines go. @default stderr, never blocking */
  sink?: LineSink;
  /** One readable line per event instead of JSON. @default false */
  pretty?: boolean;
}

const LEVELS = { info: 30, warn: 40, error: 50 } as const;
type Level = keyof typeof LEVELS;

/**
 * A logger writing JSON lines as pino does (`level`, `time`, `msg`, then the fields; an error
 * under `err` as `{ type, message, stack }`).
 *
 * @example
 * const logger = jsonLogger({ pretty: process.env.LOG_FORMAT === "pretty" });
 * logger.info({ route: "/api/product/:id", status: 200 }, "request");
 */
export function jsonLogger(options: JsonLoggerOptions = {}): Logger & { flush(): Promise<void> } {
  const sink = options.sink ?? lineSink();
  const line = options.pretty ? prettyLine : jsonLine;
  const at = (level: Level) => (fields: object, message?: string) => sink.write(line(level, fields, message));
  // The apps whose request lines wait for the turn's end (answered-requests.ts) tell them first: a
  // flush writes every request answered before it, with no timer (a test's fake ones included).
  const settlers = new Set<() => void>();
  const flush = () => {
    for (const settle of settlers) settle();
    return sink.flush();
  };
  const logger = { info: at("info"), warn: at("warn"), error: at("error"), flush };
  if (!options.pretty) {
    const generic = (record: RequestRecord) => sink.write(jsonLine("info", record, "request"));
    // A sink that makes lines together waits for its next write anyway: its lines can be told later.
    const batched = sink.writeWith !== undefined && sink.writeLater !== undefined;
    const write = batched ? requestLineWriter(sink as Required<LineSink>, generic) : generic;
    ownLines.set(logger, { info: logger.info, write, later: batched, settlers });
  }
  return logger;
}

/**
 * The loggers jsonLogger made, and how each writes a request's line itself (request-line.ts). Kept
 * apart, not on the logger: a copy of it (`{ ...logger, info }`) or one whose `info` was replaced
 * is not ours any more, and gets `info` for its request lines as any other logger does.
 */
const ownLines = new WeakMap<
  object,
  {
    info: Logger["info"];
    write: (record: RequestRecord) => void;
    later: boolean;
    settlers: Set<() => void>;
  }
>();

/** How `logger` writes a request's line: its own way when jsonLogger made it as it is, else `info`. */
export function requestLineOf(logger: Logger): (record: RequestRecord) => void {
  return requestLog(logger).observe;
}

/**
 * `logger`'s request log as an observer of requests: told later when jsonLogger made it on a sink
 * that makes lines together (they wait for its next write anyway, answered-requests.ts); any other
 * logger (pino, yours) gets each request's line as it is answered.
 */
export function requestLog(logger: Logger): RequestObservers {
  const own = ownLines.get(logger);
  if (own && own.info === logger.info)
    return { observe: own.write, later: own.later, settledBy: (settle) => void own.settlers.add(settle) };
  return { observe: (record) => logger.info(record, "request"), later: false };
}

function jsonLine(level: Level, fields: object, message: string | undefined): string {
  // The common line (a request's): its fields' JSON spliced after the head, no copy made.
  if (!("err" in fields)) {
    const head = `{"level":${LEVELS[level]},"time":${Date.now()}${message === undefined ? "" : `,"msg":${JSON.stringify(message)}`}`;
    const rest = safeStringify(fields);
    return rest.length > 2 && rest.startsWith("{") ? `${head},${rest.slice(1)}\n` : `${head}}\n`;
  }
  const out: Record<string, unknown> = { level: LEVELS[level], time: Date.now() };
  if (message !== undefined) out.msg = message;
  for (const [key, value] of Object.entries(fields))
    out[key] = key === "err" ? serializedError(value) : value;
  return `${safeStringify(out)}\n`;
}

function prettyLine(level: Level, fields: object, message: string | undefined): string {
  const { err, ...rest } = fields as Record<string, unknown>;
  const time = new Date().toISOString().slice(11, 23);
  const pairs = Object.entries(rest)
    .filter(([, value]) => value !== undefined)
    .map(([key, value]) => `${key}=${typeof value === "string" ? value : safeStringify(value)}`)
    .join(" ");
  const cause = err === undefined ? "" : `\n${serializedError(err).stack ?? serializedError(err).message}`;
  return `${time} ${level.toUpperCase().padEnd(5)} ${message ?? ""}${pairs ? ` ${pairs}` : ""}${cause}\n`;
}

/** An error as pino serializes it; anything else thrown as its text. */
function serializedError(error: unknown): { type: string; message: string; stack?: string } {
  if (error instanceof Error)
    return { type: error.name, message: error.message, ...(error.stack ? { stack: error.stack } : {}) };
  return { type: typeof error, message: String(error) };
}

/** JSON of a line's fields: a BigInt as its digits, a cycle as "[Circular]"; never throws. */
function safeStringify(value: unknown): string {
  // The plain way first: a replacer function costs a call per key, on every request's line.
  try {
    return JSON.stringify(value);
  } catch {}
  const seen = new WeakSet<object>();
  try {
    return JSON.stringify(value, (_key, item: unknown) => {
      if (typeof item === "bigint") return item.toString();
      if (typeof item === "object" && item !== null) {
        if (seen.has(item)) return "[Circular]";
        seen.add(item);
      }
      return item;
    });
  } catch {
    return JSON.stringify(String(value));
  }
}
