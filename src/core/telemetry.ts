// What an app reports about its own work, for whoever listens (the metrics() plugin): statements
// run, and counts and levels from the plugins (cache hits, refused requests, open event streams,
// the webhook backlog). Requests reach a listener through the plugin's `observe` instead (the
// handler's record of each). With no listener a report costs one check of a boolean.

/** The kind of a statement, from its first word: a closed set, so a metric label stays bounded. */
export type StatementKind =
  | "select"
  | "insert"
  | "update"
  | "delete"
  | "begin"
  | "commit"
  | "rollback"
  | "other";

export interface StatementRecord {
  kind: StatementKind;
  durationMs: number;
  /** It failed (any error, a timeout included). */
  failed: boolean;
  /** The server stopped it at the statement timeout. */
  timedOut: boolean;
}

/** Things that happen, counted. */
export type TelemetryCount =
  | "cache.hit"
  | "cache.miss"
  | "rateLimit.refused"
  | "idempotency.replayed"
  | "realtime.eventSent"
  | "webhooks.delivered"
  | "webhooks.failed"
  | "webhooks.dead";

/** Levels read when a listener asks (at a scrape). */
export type TelemetryLevel =
  | "database.poolInUse"
  | "database.poolIdle"
  | "database.poolWaiting"
  | "database.readerQueue"
  | "realtime.streams"
  | "webhooks.backlog";

export interface TelemetryListener {
  statement?(record: StatementRecord): void;
  count?(name: TelemetryCount, by: number): void;
}

export interface Telemetry {
  /** Someone listens: worth timing a statement for. */
  readonly listening: boolean;
  /** The app starts spans (`crudkit({ tracing })`): plugins working outside a request ask this. */
  readonly tracing: boolean;
  statement(record: StatementRecord): void;
  count(name: TelemetryCount, by?: number): void;
  /** A plugin or the database says how to read one of its levels (the last one given wins). */
  level(name: TelemetryLevel, read: () => number | Promise<number>): void;
  /** The levels known, each read now; one that fails to read is left out. */
  readLevels(): Promise<Partial<Record<TelemetryLevel, number>>>;
  /** Adds a listener; the function returned removes it. */
  listen(listener: TelemetryListener): () => void;
}

/** One app's telemetry. */
export function createTelemetry(options: { tracing: boolean } = { tracing: true }): Telemetry {
  let listeners: TelemetryListener[] = [];
  const levels = new Map<TelemetryLevel, () => number | Promise<number>>();
  const telemetry: Telemetry = {
    listening: false,
    tracing: options.tracing,
    statement(record) {
      for (const listener of listeners) listener.statement?.(record);
    },
    count(name, by = 1) {
      for (const listener of listeners) listener.count?.(name, by);
    },
    level(name, read) {
      levels.set(name, read);
    },
    async readLevels() {
      const read: Partial<Record<TelemetryLevel, number>> = {};
      await Promise.all(
        [...levels].map(async ([name, level]) => {
          try {
            const value = await withDeadline(level(), LEVEL_DEADLINE_MS);
            if (Number.isFinite(value)) read[name] = value;
          } catch {
            // A level that cannot be read now (Redis away) is missing from this scrape, no more.
          }
        }),
      );
      return read;
    },
    listen(listener) {
      listeners = [...listeners, listener];
      (telemetry as { listening: boolean }).listening = true;
      return () => {
        listeners = listeners.filter((each) => each !== listener);
        (telemetry as { listening: boolean }).listening = listeners.length > 0;
      };
    },
  };
  return telemetry;
}

/** A level that takes longer (a database going away) is left out of the scrape. */
const LEVEL_DEADLINE_MS = 1000;

function withDeadline<T>(value: T | Promise<T>, ms: number): Promise<T> {
  if (!(value instanceof Promise)) return Promise.resolve(value);
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error("late")), ms);
    timer.unref();
  });
  value.catch(() => {});
  return Promise.race([value, late]).finally(() => clearTimeout(timer));
}

const KINDS = new Set<string>(["select", "insert", "update", "delete", "begin", "commit", "rollback"]);

/** Kinds of the statements seen: crudkit's statements are a few hundred texts, run again and again. */
const kinds = new Map<string, StatementKind>();

/** A statement's kind from its text (`with … select` reads as other: its first word decides). */
export function statementKind(sql: string): StatementKind {
  let kind = kinds.get(sql);
  if (kind === undefined) {
    const word = /^\s*([a-z]+)/i.exec(sql)?.[1]?.toLowerCase() ?? "";
    kind = word === "start" ? "begin" : KINDS.has(word) ? (word as StatementKind) : "other";
    // Texts made with values in them (DDL, a raw statement) must not grow this for ever.
    if (kinds.size >= 2000) kinds.clear();
    kinds.set(sql, kind);
  }
  return kind;
}
