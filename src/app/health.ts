// GET /health (readiness: the database and every plugin's service answer) and GET /health/live
// (liveness: the process serves requests). Open to everyone, so they say only "ok" or
// "unavailable" per check: no versions, hosts, timings or driver messages.

import { type Kysely, sql } from "kysely";
import type { Endpoint } from "../core/endpoint.ts";
import { withTimeout } from "../core/with-timeout.ts";
import type { ReplicaSet } from "../db/replica-set.ts";

/** One dependency readiness waits on, for example `database` or `cache`. */
export interface HealthCheck {
  name: string;
  /**
   * Resolves when the dependency answers (with `"degraded"` when it works but needs attention);
   * rejects (or outlasts the timeout) when it does not.
   */
  check(): Promise<unknown>;
}

/** `degraded`: it serves, but something needs an operator (a webhook backlog, say). */
export type HealthStatus = "ok" | "degraded" | "unavailable";

export interface HealthReport {
  status: HealthStatus;
  checks: Record<string, HealthStatus>;
}

const CHECK_TIMEOUT_MS = 2000;
const UNCACHED = { "content-type": "application/json", "cache-control": "no-store" } as const;

export function databaseCheck(db: Kysely<any>): HealthCheck {
  return { name: "database", check: () => sql`select 1`.execute(db) };
}

/**
 * Read replicas: degraded while one is skipped (down, erroring or past maxLag), since its reads go
 * to the primary; never unavailable, since no request fails for it. Which replica, and why, is in
 * the log.
 */
export function replicasCheck(replicas: ReplicaSet): HealthCheck {
  return {
    name: "replicas",
    check: async () => (replicas.states().every((replica) => replica.status === "ok") ? "ok" : "degraded"),
  };
}

/** `log` reports a failed check server-side; the answer only says "unavailable". */
const HEALTH = {
  type: "object",
  properties: {
    status: { type: "string", enum: ["ok", "degraded", "unavailable"] },
    checks: { type: "object" },
  },
  required: ["status"],
};

export function healthEndpoints(
  checks: readonly HealthCheck[],
  log: (message: string, error: unknown) => void,
  /** Whether startup (migrations, plugin init) has finished; until then readiness is 503. */
  started: () => boolean,
): Endpoint[] {
  return [
    {
      method: "GET",
      path: "/health",
      doc: {
        summary: "Readiness: the database and plugin services",
        tags: ["health"],
        public: true,
        response: HEALTH,
        otherAnswers: { 503: HEALTH },
      },
      ungated: true,
      async handler() {
        const report = await readiness(checks, log);
        if (!started()) {
          report.status = "unavailable";
          report.checks.startup = "unavailable";
        }
        return new Response(JSON.stringify(report), {
          status: report.status === "unavailable" ? 503 : 200,
          headers: UNCACHED,
        });
      },
    },
    {
      method: "GET",
      path: "/health/live",
      doc: { summary: "Liveness", tags: ["health"], public: true, response: HEALTH },
      ungated: true,
      async handler() {
        return new Response('{"status":"ok"}', { headers: UNCACHED });
      },
    },
  ];
}

async function readiness(
  checks: readonly HealthCheck[],
  log: (message: string, error: unknown) => void,
): Promise<HealthReport> {
  const results = await Promise.all(
    checks.map(async ({ name, check }) => {
      try {
        const answer = await withTimeout(check(), CHECK_TIMEOUT_MS);
        return [name, answer === "degraded" ? "degraded" : "ok"] as const;
      } catch (error) {
        log(`crudkit: health check "${name}" failed`, error);
        return [name, "unavailable"] as const;
      }
    }),
  );
  // Degraded still serves: readiness stays 200, so a load balancer keeps the instance.
  const statuses = results.map(([, result]) => result);
  return {
    status: statuses.includes("unavailable")
      ? "unavailable"
      : statuses.includes("degraded")
        ? "degraded"
        : "ok",
    checks: Object.fromEntries(results),
  };
}
