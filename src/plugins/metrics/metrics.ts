// `metrics()`: Prometheus metrics on prom-client, at `<basePath>/metrics` or on a host and port of
// their own. Never public: the series name every route, and their counts say what the app is
// used for and how hard (a 404 count shows which ids are being probed). A bearer token (a
// scraper's) or the admin role reads them.

import { createHash, timingSafeEqual } from "node:crypto";
import { createServer, type Server } from "node:http";
import { createRequire } from "node:module";
import type * as Prom from "prom-client";
import { checkOptionKeys, optionKeys } from "../../core/option-keys.ts";
import {
  APIError,
  type CrudkitPlugin,
  type Endpoint,
  type EndpointContext,
  type PluginContext,
  type User,
} from "../../kit/index.ts";
import { createSeries, type Series } from "./series.ts";

export interface MetricsOptions {
  /**
   * Tokens a scraper sends as `Authorization: Bearer <token>` (Prometheus's `authorization`
   * setting). Give several to rotate one.
   */
  tokens?: string | readonly string[];
  /** Roles whose users may read the metrics with their own credentials. @default ["admin"] */
  roles?: readonly string[];
  /**
   * Serves the metrics on a host and port of their own (`GET /metrics` there) instead of under
   * the app's basePath: a port the public never reaches. The token and role rules still apply;
   * with `public: true` on it they do not (for a port only the scraper can reach).
   */
  listen?: { port: number; host?: string; public?: boolean };
  /** The process's series (CPU, memory, event-loop delay), under prom-client's names. @default true */
  processMetrics?: boolean;
}

const METRICS_OPTION_KEYS = optionKeys<MetricsOptions>()("tokens roles listen processMetrics");

export interface MetricsPlugin extends CrudkitPlugin {
  /** The exposition text now, as a scrape would get it (for tests and custom routes). */
  text(): Promise<string>;
  /** The address `listen` serves on, once the app has started. */
  address(): { host: string; port: number } | undefined;
}

/**
 * Prometheus metrics: requests by route template, method and status, their latency, statement
 * latency, the connection pool, plugins' counts (cache, rate limits, idempotent replays, event
 * streams, webhooks) and the process. Needs `npm install prom-client`.
 *
 * @example
 * const app = crudkit({
 *   database: { provider: "sqlite", url: "file:./data/app.db" },
 *   resources: [],
 *   plugins: [metrics({ tokens: process.env.METRICS_TOKEN ? [process.env.METRICS_TOKEN] : [] })],
 * });
 * // curl -H "Authorization: Bearer $METRICS_TOKEN" http://127.0.0.1:3000/api/metrics
 */
export function metrics(options: MetricsOptions = {}): MetricsPlugin {
  checkOptionKeys(options, METRICS_OPTION_KEYS, "metrics()");
  const tokens = tokenDigests(options.tokens);
  const roles = new Set(options.roles ?? ["admin"]);
  const listen = checkedListen(options.listen);
  if (listen && !listen.public && tokens.length === 0)
    throw new Error(
      "metrics(): with listen, give tokens (the app's sign-in does not run there), or listen.public.",
    );
  // Loaded now: a missing prom-client fails the app's construction, not its first scrape.
  const prom = loadPromClient();
  let series: Series | undefined;
  let server: Server | undefined;

  const refusal = async (
    headers: Headers,
    user: () => Promise<User | null>,
  ): Promise<APIError | undefined> => {
    const bearer = /^Bearer\s+(\S+)\s*$/i.exec(headers.get("authorization") ?? "")?.[1];
    if (bearer !== undefined && tokens.some((digest) => sameDigest(digest, bearer))) return undefined;
    const caller = await user().catch(() => null);
    if (caller?.roles?.some((role) => roles.has(role))) return undefined;
    if (caller)
      return new APIError(
        "FORBIDDEN",
        "Access denied: reading metrics needs a metrics token or an allowed role.",
      );
    return new APIError(
      "UNAUTHORIZED",
      "Reading metrics needs a metrics token (Authorization: Bearer) or an allowed role.",
    );
  };

  const route: Endpoint<never, unknown, unknown, "/metrics"> = {
    method: "GET",
    path: "/metrics",
    // Metrics matter most while the database is away.
    ungated: true,
    doc: {
      summary: "Prometheus metrics (a metrics token or an allowed role)",
      tags: ["metrics"],
      response: { type: "string", description: "Prometheus text exposition format" },
    },
    async handler(ctx: EndpointContext) {
      const refused = await refusal(ctx.headers, () => ctx.getUser());
      if (refused) throw refused;
      return exposition(series);
    },
  };

  return {
    id: "metrics",
    // The series start with the app, not after its migrations: requests are counted, and the
    // metrics served, while the database is still out of reach.
    endpoints(app: PluginContext) {
      series = createSeries(prom, app, options.processMetrics !== false);
      return listen ? [] : [route];
    },
    // Read at a scrape, which settles the requests still waiting first.
    observeLater(record) {
      series?.request(record);
    },
    async init() {
      // Its own port opens with the app's startup (a CLI that loads the app opens none); a port
      // taken fails the startup, as the app's own would.
      if (!listen || !series) return;
      const apart = serverApart(listen, series, refusal);
      await new Promise<void>((resolve, reject) => {
        apart.once("error", reject);
        apart.listen(listen.port, listen.host, () => resolve());
      });
      server = apart;
    },
    async close() {
      series?.close();
      if (server?.listening) await new Promise<void>((resolve) => server!.close(() => resolve()));
    },
    text: () => (series ? series.text() : Promise.resolve("")),
    address() {
      const bound = server?.address();
      return bound && typeof bound === "object" ? { host: bound.address, port: bound.port } : undefined;
    },
  };
}

async function exposition(series: Series | undefined): Promise<Response> {
  if (!series) throw new APIError("SERVICE_UNAVAILABLE", "Metrics are starting; try again shortly.");
  return new Response(await series.text(), {
    headers: { "content-type": series.registry.contentType, "cache-control": "no-store" },
  });
}

/** `GET /metrics` on its own server; anything else is a 404. */
function serverApart(
  listen: { port: number; host: string; public: boolean },
  series: Series,
  refusal: (headers: Headers, user: () => Promise<User | null>) => Promise<APIError | undefined>,
): Server {
  const server = createServer(async (request, response) => {
    try {
      const path = (request.url ?? "").split("?")[0];
      if (path !== "/metrics" || (request.method !== "GET" && request.method !== "HEAD")) {
        response.writeHead(404, { "content-type": "text/plain" }).end("Not found\n");
        return;
      }
      const headers = new Headers();
      if (typeof request.headers.authorization === "string")
        headers.set("authorization", request.headers.authorization);
      const refused = listen.public ? undefined : await refusal(headers, async () => null);
      if (refused) {
        response.writeHead(refused.status, { "content-type": "text/plain" }).end(`${refused.message}\n`);
        return;
      }
      const text = await series.text();
      response.writeHead(200, { "content-type": series.registry.contentType, "cache-control": "no-store" });
      response.end(request.method === "HEAD" ? undefined : text);
    } catch {
      if (!response.headersSent) response.writeHead(500, { "content-type": "text/plain" });
      response.end("Metrics could not be read.\n");
    }
  });
  server.unref();
  return server;
}

/** Tokens kept as digests, compared in constant time. */
function tokenDigests(given: MetricsOptions["tokens"]): Buffer[] {
  const list = typeof given === "string" ? [given] : (given ?? []);
  for (const token of list) {
    if (typeof token !== "string" || !/^\S{16,}$/.test(token))
      throw new Error("metrics(): each token must be at least 16 characters with no spaces.");
  }
  return list.map((token) => createHash("sha256").update(token).digest());
}

function sameDigest(digest: Buffer, token: string): boolean {
  return timingSafeEqual(digest, createHash("sha256").update(token).digest());
}

function checkedListen(
  listen: MetricsOptions["listen"],
): { port: number; host: string; public: boolean } | undefined {
  if (listen === undefined) return undefined;
  if (!Number.isInteger(listen.port) || listen.port < 0 || listen.port > 65535)
    throw new Error("metrics(): listen.port must be a port number (0 for any free port).");
  return { port: listen.port, host: listen.host ?? "127.0.0.1", public: listen.public === true };
}

/** prom-client, an optional peer dependency: loaded when metrics() is called, so only apps with it need it. */
function loadPromClient(): typeof Prom {
  try {
    return createRequire(import.meta.url)("prom-client") as typeof Prom;
  } catch (error) {
    throw new Error("metrics() needs prom-client: npm install prom-client", { cause: error });
  }
}
