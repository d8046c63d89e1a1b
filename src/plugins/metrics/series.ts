// The series metrics() serves, on a prom-client registry of the app's own (two apps in one process
// never share a series). Every label comes from a closed set or a route template, so the number
// of series is fixed by the app's routes, whatever the requests: an id, an unknown path or a made-
// up method adds none.

import { performance } from "node:perf_hooks";
import type * as Prom from "prom-client";
import type {
  PluginContext,
  RequestRecord,
  StatementRecord,
  Telemetry,
  TelemetryCount,
} from "../../kit/index.ts";
import { processSeries } from "./process-series.ts";
import { type Exposed, Reading, Spread, type SpreadEntry, Tally, type TallyEntry } from "./tallies.ts";

/** Seconds: a read by id takes about a millisecond, a slow list a second or more. */
const HTTP_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const STATEMENT_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 5];

const METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);

/** A Prometheus counter and the label values each telemetry count increments. */
const COUNTS: Record<TelemetryCount, readonly [series: string, label?: string]> = {
  "cache.hit": ["cache", "hit"],
  "cache.miss": ["cache", "miss"],
  "rateLimit.refused": ["rateLimited"],
  "idempotency.replayed": ["replayed"],
  "realtime.eventSent": ["eventsSent"],
  "webhooks.delivered": ["webhooks", "delivered"],
  "webhooks.failed": ["webhooks", "failed"],
  "webhooks.dead": ["webhooks", "dead"],
};

export interface Series {
  registry: Prom.Registry;
  /** The exposition text, with the levels read now. */
  text(): Promise<string>;
  /** Counts one answered request. */
  request(record: RequestRecord): void;
  /** Stops listening to the app's telemetry and the event loop. */
  close(): void;
}

/** Makes the series on a fresh registry and feeds them from `telemetry`. */
export function createSeries(
  prom: typeof Prom,
  app: Pick<PluginContext, "telemetry" | "settleRequests">,
  defaults: boolean,
): Series {
  const { telemetry } = app;
  const registry = new prom.Registry();
  const requests = new Tally(
    "crudkit_http_requests_total",
    "HTTP requests answered, by method, route template and status.",
  );
  const durations = new Spread(
    "crudkit_http_request_duration_seconds",
    "Time from a request's arrival to its answer's headers, by method and route template.",
    HTTP_BUCKETS,
  );
  const statements = new Spread(
    "crudkit_db_statement_duration_seconds",
    "Time the database took per statement, by its kind (select, insert, update, delete, …).",
    STATEMENT_BUCKETS,
  );
  const statementErrors = new Tally(
    "crudkit_db_statement_errors_total",
    "Statements that failed, by kind (timeouts included).",
  );
  const timeouts = new Tally(
    "crudkit_db_statement_timeouts_total",
    "Statements the database stopped at the statement timeout.",
  );
  const counters: Record<string, Tally> = {
    cache: new Tally(
      "crudkit_cache_requests_total",
      "Reads and lists cache() answered from its store (hit) or from the database (miss).",
    ),
    rateLimited: new Tally("crudkit_rate_limit_refusals_total", "Requests rateLimit() refused with 429."),
    replayed: new Tally(
      "crudkit_idempotent_replays_total",
      "Retries idempotency() answered with the first answer again.",
    ),
    eventsSent: new Tally(
      "crudkit_realtime_events_sent_total",
      "Change events sent to event-stream subscribers.",
    ),
    webhooks: new Tally(
      "crudkit_webhook_deliveries_total",
      "Webhook delivery attempts by result: delivered (2xx), failed (to be retried), dead (no retry left).",
    ),
  };
  for (const tally of [
    requests,
    durations,
    statements,
    statementErrors,
    timeouts,
    ...Object.values(counters),
  ])
    registry.registerMetric(tally as unknown as Prom.Metric);
  // A series with no label shows from the first scrape, at 0.
  timeouts.entry("", () => ({}));
  for (const name of ["rateLimited", "replayed", "eventsSent"]) counters[name]!.entry("", () => ({}));
  const levels = levelGauges(registry, telemetry);
  eventLoopGauge(prom, registry);
  const processes = defaults ? processSeries(prom, registry) : undefined;

  // Each statement kind's entries, made once.
  const byKind = new Map<string, { time: SpreadEntry; failed: TallyEntry }>();
  const stop = telemetry.listen({
    statement(record: StatementRecord) {
      let kind = byKind.get(record.kind);
      if (!kind) {
        const labels = () => ({ operation: record.kind });
        kind = {
          time: statements.entry(record.kind, labels),
          failed: statementErrors.entry(record.kind, labels),
        };
        byKind.set(record.kind, kind);
      }
      statements.observe(kind.time, record.durationMs / 1000);
      if (record.failed) kind.failed.value++;
      if (record.timedOut) timeouts.entry("", () => ({})).value++;
    },
    count(name, by) {
      const [series, label] = COUNTS[name];
      const labels: Record<string, string> = label ? { result: label } : {};
      counters[series]!.entry(label ?? "", () => labels).value += by;
    },
  });
  return {
    registry,
    async text() {
      // Requests answered this turn and not yet counted (answered-requests.ts) are counted first.
      app.settleRequests();
      await levels.read();
      return registry.metrics();
    },
    request: requestCounter(requests, durations),
    close() {
      stop();
      processes?.close();
    },
  };
}

/** Counts a request and observes its latency, under its route's template, method and status. */
function requestCounter(requests: Tally, durations: Spread): (record: RequestRecord) => void {
  // Each route's entries by method, then its counts by status, made once.
  const byRoute = new Map<string, Map<string, RouteEntries>>();
  return (record) => {
    const method = METHODS.has(record.method) ? record.method : "other";
    // Found through the route's own text (a template, interned) and numbers: no key made per
    // request (two texts joined and hashed per series cost about 0.7 µs a request, measured).
    let methods = byRoute.get(record.route);
    if (!methods) {
      methods = new Map();
      byRoute.set(record.route, methods);
    }
    let entries = methods.get(method);
    if (!entries) {
      const route = record.route;
      entries = {
        time: durations.entry(`${method} ${route}`, () => ({ method, route })),
        byStatus: new Map(),
        requests: (status) =>
          requests.entry(`${method} ${route} ${status}`, () => ({ method, route, status: String(status) })),
      };
      methods.set(method, entries);
    }
    let count = entries.byStatus.get(record.status);
    if (!count) {
      count = entries.requests(record.status);
      entries.byStatus.set(record.status, count);
    }
    count.value++;
    durations.observe(entries.time, record.durationMs / 1000);
  };
}

/** A route's series for one method: its latency, and its request count per status. */
interface RouteEntries {
  time: SpreadEntry;
  byStatus: Map<number, TallyEntry>;
  requests(status: number): TallyEntry;
}

/** Levels read at each scrape: the pool, the reader threads, event streams, the webhook backlog. */
function levelGauges(registry: Prom.Registry, telemetry: Telemetry): { read(): Promise<void> } {
  // Read once per scrape, before the registry formats the series. A level nobody reports (no
  // pool on SQLite, no webhooks() in the app, Redis away now) has no sample, rather than a 0.
  let levels: Awaited<ReturnType<Telemetry["readLevels"]>> = {};
  const gauge = (name: string, help: string, values: () => Exposed["values"]) =>
    registry.registerMetric(new Reading(name, help, values) as unknown as Prom.Metric);
  const state = (label: string, level: keyof typeof levels) => {
    const value = levels[level];
    return value === undefined ? [] : [{ labels: { state: label }, value }];
  };
  const alone = (level: keyof typeof levels) => () => {
    const value = levels[level];
    return value === undefined ? [] : [{ labels: {}, value }];
  };
  gauge(
    "crudkit_db_pool_connections",
    "Database pool connections by state: in_use, idle, and waiting (requests queued for one).",
    () => [
      ...state("in_use", "database.poolInUse"),
      ...state("idle", "database.poolIdle"),
      ...state("waiting", "database.poolWaiting"),
    ],
  );
  gauge(
    "crudkit_sqlite_reader_queue",
    "SQLite reads sent to the reader threads and not answered yet.",
    alone("database.readerQueue"),
  );
  gauge(
    "crudkit_realtime_streams",
    "Event streams (Server-Sent Events) open now.",
    alone("realtime.streams"),
  );
  gauge(
    "crudkit_webhook_backlog",
    "Webhook events waiting to be delivered (pending and failed, not dead).",
    alone("webhooks.backlog"),
  );
  return {
    async read() {
      levels = await telemetry.readLevels();
    },
  };
}

/** Event-loop utilisation since the last scrape (0 to 1); process-series.ts gives its delay. */
function eventLoopGauge(prom: typeof Prom, registry: Prom.Registry): void {
  let last = performance.eventLoopUtilization();
  new prom.Gauge({
    name: "crudkit_event_loop_utilization",
    help: "Share of time the event loop was busy since the previous scrape (0 to 1).",
    registers: [registry],
    collect() {
      const now = performance.eventLoopUtilization();
      this.set(performance.eventLoopUtilization(now, last).utilization);
      last = now;
    },
  });
}
