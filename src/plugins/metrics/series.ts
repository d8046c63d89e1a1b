// The series metrics() serves, on a prom-client registry of the app's own (two apps in one process
// never share a series). Every label comes from a closed set or a route template, so the number
// of series is fixed by the app's routes, whatever the requests: an id, an unknown path or a made-
// up method adds none.

import { performance } from "node:perf_hooks";
import type * as Prom from "prom-client";
import type { RequestRecord, StatementRecord, Telemetry, TelemetryCount } from "../../kit/index.ts";

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
export function createSeries(prom: typeof Prom, telemetry: Telemetry, defaults: boolean): Series {
  const registry = new prom.Registry();
  const registers = [registry];
  const requests = new prom.Counter({
    name: "crudkit_http_requests_total",
    help: "HTTP requests answered, by method, route template and status.",
    labelNames: ["method", "route", "status"],
    registers,
  });
  const durations = new prom.Histogram({
    name: "crudkit_http_request_duration_seconds",
    help: "Time from a request's arrival to its answer's headers, by method and route template.",
    labelNames: ["method", "route"],
    buckets: HTTP_BUCKETS,
    registers,
  });
  const statements = new prom.Histogram({
    name: "crudkit_db_statement_duration_seconds",
    help: "Time the database took per statement, by its kind (select, insert, update, delete, …).",
    labelNames: ["operation"],
    buckets: STATEMENT_BUCKETS,
    registers,
  });
  const statementErrors = new prom.Counter({
    name: "crudkit_db_statement_errors_total",
    help: "Statements that failed, by kind (timeouts included).",
    labelNames: ["operation"],
    registers,
  });
  const timeouts = new prom.Counter({
    name: "crudkit_db_statement_timeouts_total",
    help: "Statements the database stopped at the statement timeout.",
    registers,
  });
  const counters: Record<string, Prom.Counter> = {
    cache: new prom.Counter({
      name: "crudkit_cache_requests_total",
      help: "Reads and lists cache() answered from its store (hit) or from the database (miss).",
      labelNames: ["result"],
      registers,
    }),
    rateLimited: new prom.Counter({
      name: "crudkit_rate_limit_refusals_total",
      help: "Requests rateLimit() refused with 429.",
      registers,
    }),
    replayed: new prom.Counter({
      name: "crudkit_idempotent_replays_total",
      help: "Retries idempotency() answered with the first answer again.",
      registers,
    }),
    eventsSent: new prom.Counter({
      name: "crudkit_realtime_events_sent_total",
      help: "Change events sent to event-stream subscribers.",
      registers,
    }),
    webhooks: new prom.Counter({
      name: "crudkit_webhook_deliveries_total",
      help: "Webhook delivery attempts by result: delivered (2xx), failed (to be retried), dead (no retry left).",
      labelNames: ["result"],
      registers,
    }),
  };
  const levels = levelGauges(prom, registry, telemetry);
  eventLoopGauge(prom, registry);
  if (defaults) prom.collectDefaultMetrics({ register: registry });

  // A labelled child per (method, route, status), made once: prom-client would otherwise hash
  // the labels on every request.
  const children = new Map<string, { count: Prom.Counter.Internal; time: Prom.Histogram.Internal<string> }>();
  const stop = telemetry.listen({
    statement(record: StatementRecord) {
      statements.labels(record.kind).observe(record.durationMs / 1000);
      if (record.failed) statementErrors.labels(record.kind).inc();
      if (record.timedOut) timeouts.inc();
    },
    count(name, by) {
      const [series, label] = COUNTS[name];
      const counter = counters[series]!;
      if (label) counter.labels(label).inc(by);
      else counter.inc(by);
    },
  });
  return {
    registry,
    async text() {
      await levels.read();
      return registry.metrics();
    },
    request(record) {
      const method = METHODS.has(record.method) ? record.method : "other";
      const key = `${method} ${record.status} ${record.route}`;
      let child = children.get(key);
      if (!child) {
        child = {
          count: requests.labels(method, record.route, String(record.status)),
          time: durations.labels(method, record.route),
        };
        children.set(key, child);
      }
      child.count.inc();
      child.time.observe(record.durationMs / 1000);
    },
    close() {
      stop();
    },
  };
}

/** Levels read at each scrape: the pool, the reader threads, event streams, the webhook backlog. */
function levelGauges(
  prom: typeof Prom,
  registry: Prom.Registry,
  telemetry: Telemetry,
): { read(): Promise<void> } {
  const registers = [registry];
  // Read once per scrape, before the registry collects (it collects its gauges side by side).
  let levels: Awaited<ReturnType<Telemetry["readLevels"]>> = {};
  new prom.Gauge({
    name: "crudkit_db_pool_connections",
    help: "Database pool connections by state: in_use, idle, and waiting (requests queued for one).",
    labelNames: ["state"],
    registers,
    collect() {
      this.reset();
      const {
        "database.poolInUse": inUse,
        "database.poolIdle": idle,
        "database.poolWaiting": waiting,
      } = levels;
      if (inUse !== undefined) this.labels("in_use").set(inUse);
      if (idle !== undefined) this.labels("idle").set(idle);
      if (waiting !== undefined) this.labels("waiting").set(waiting);
    },
  });
  const gauge = (name: string, help: string, level: keyof typeof levels) =>
    new prom.Gauge({
      name,
      help,
      registers,
      collect() {
        const value = levels[level];
        if (value !== undefined) this.set(value);
      },
    });
  gauge(
    "crudkit_sqlite_reader_queue",
    "SQLite reads sent to the reader threads and not answered yet.",
    "database.readerQueue",
  );
  gauge("crudkit_realtime_streams", "Event streams (Server-Sent Events) open now.", "realtime.streams");
  gauge(
    "crudkit_webhook_backlog",
    "Webhook events waiting to be delivered (pending and failed, not dead).",
    "webhooks.backlog",
  );
  return {
    async read() {
      levels = await telemetry.readLevels();
    },
  };
}

/** Event-loop utilisation since the last scrape (0 to 1); prom-client's defaults give its delay. */
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
