// The app's telemetry (core/telemetry.ts) wired to its database: every statement timed for a
// listener and traced under the request's span (db/observed-statements.ts), and the pool's and
// reader threads' levels readable at a scrape.

import { SpanKind } from "@opentelemetry/api";
import { type AnsweredRequests, answeredRequests, type RequestObservers } from "../core/answered-requests.ts";
import type { RequestRecord } from "../core/http-handler.ts";
import type { CrudkitPlugin } from "../core/plugin.ts";
import { createTelemetry, statementKind, type Telemetry } from "../core/telemetry.ts";
import { endSpan, startChildSpan, tracing } from "../core/tracing.ts";
import type { Database } from "../db/database.ts";
import type { DialectName } from "../db/dialect.ts";
import type { StatementProbe } from "../db/observed-statements.ts";
import { poolLevels } from "../db/pool-levels.ts";

/** OpenTelemetry's names for the engines (`db.system`). */
const SYSTEMS: Record<DialectName, string> = { sqlite: "sqlite", postgres: "postgresql", mysql: "mysql" };

export interface AppTelemetry {
  telemetry: Telemetry;
  /** Given to openDatabase(); it learns the engine once the database is open (`bind`). */
  probe: StatementProbe;
  /** The database is open: its engine names statements' spans, its pool gives levels. */
  bind(database: Database): void;
}

export function appTelemetry(options: { tracing: boolean }): AppTelemetry {
  const telemetry = createTelemetry(options);
  let system = "other_sql";
  let timedOut: (error: unknown) => boolean = () => false;
  const probe: StatementProbe = {
    start(sql) {
      // Nothing is made for a statement nobody times or traces: this runs for every one.
      const traced = telemetry.tracing && tracing();
      if (!traced && !telemetry.listening) return undefined;
      const kind = statementKind(sql);
      const span = traced
        ? startChildSpan(`db ${kind}`, { "db.system": system, "db.statement": sql }, SpanKind.CLIENT)
        : undefined;
      const started = performance.now();
      return (error) => {
        if (telemetry.listening) {
          telemetry.statement({
            kind,
            durationMs: performance.now() - started,
            failed: error !== undefined,
            timedOut: error !== undefined && timedOut(error),
          });
        }
        if (span) endSpan(span, error);
      };
    },
  };
  return {
    telemetry,
    probe,
    bind(database) {
      system = SYSTEMS[database.dialect];
      timedOut = (error) => database.profile.errors.timedOut(error);
      const pool = () => poolLevels(database.kysely);
      if (database.dialect !== "sqlite") {
        // Before the pool's first connection there is no pool: no sample (NaN is left out).
        telemetry.level("database.poolInUse", () => pool()?.inUse ?? Number.NaN);
        telemetry.level("database.poolIdle", () => pool()?.idle ?? Number.NaN);
        telemetry.level("database.poolWaiting", () => pool()?.waiting ?? Number.NaN);
      }
      const { readers } = database;
      if (readers) telemetry.level("database.readerQueue", () => readers.queued());
    },
  };
}

/**
 * Where the handler tells of each request answered, when anything observes them (the request log,
 * plugins' `observe` and `observeLater`); a scrape and app.close() settle those still waiting.
 */
export function answeredRequestsOf(
  log: RequestObservers | undefined,
  plugins: readonly CrudkitPlugin[],
): AnsweredRequests | undefined {
  const observers = requestObservers(log, plugins);
  const answered = observers && answeredRequests(observers);
  if (answered && observers.later) log?.settledBy?.(answered.settle);
  return answered;
}

/**
 * One function telling every observer of requests (the request log, plugins), or none at all;
 * `later` when every one of them may be told at the end of the turn (`observeLater`).
 */
function requestObservers(
  log: RequestObservers | undefined,
  plugins: readonly CrudkitPlugin[],
): RequestObservers | undefined {
  const all = [log?.observe, ...plugins.flatMap((plugin) => [plugin.observe, plugin.observeLater])].filter(
    (each) => each !== undefined,
  );
  if (all.length === 0) return undefined;
  const later = (log === undefined || log.later) && plugins.every((plugin) => plugin.observe === undefined);
  const observe =
    all.length === 1
      ? all[0]!
      : (record: RequestRecord) => {
          for (const each of all) {
            try {
              each(record);
            } catch {
              // One observer failing does not keep the record from the others.
            }
          }
        };
  return { observe, later };
}
