// serve(): a crudkit app on a Node HTTP server with safe limits for slow and stuck clients, and a
// close() that lets in-flight requests finish before the app's plugins and database close.

import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { answerClientError } from "./client-error.ts";
import { coalescingResponse } from "./coalescing-response.ts";
import { type ListenerOptions, type Servable, toNodeListener } from "./listener.ts";

export interface ServeOptions extends ListenerOptions {
  /** @default 3000 */
  port?: number;
  /** @default "127.0.0.1" */
  hostname?: string;
  /** Milliseconds a client has to send a request's headers (slow-header clients are cut off). @default 10000 */
  headersTimeout?: number;
  /** Milliseconds a client has to send a whole request, body included. @default 120000 */
  requestTimeout?: number;
  /** Milliseconds a connection may send and receive nothing, mid-body included, before it is closed. @default 30000 */
  idleTimeout?: number;
  /** Milliseconds an idle keep-alive connection stays open between requests. @default 5000 */
  keepAliveTimeout?: number;
  /** Largest request head (request line and headers), in bytes; larger is a 431. @default 16384 */
  maxHeaderSize?: number;
  /** Most open connections; more are refused as they arrive. @default 1024 */
  maxConnections?: number;
  /** Milliseconds `close()` waits for in-flight requests before cutting them off. @default 10000 */
  shutdownGrace?: number;
  /**
   * Writes the complete answers of one event-loop turn together at the end of that turn (all but
   * the turn's first, which goes out at once), instead of one by one between the work on the
   * others: much less CPU per request under load, nothing added for a lone request. Streamed
   * answers always go out as they are written. @default true
   */
  coalesceWrites?: boolean;
  /**
   * When the database cannot be reached at startup: `true` listens anyway (health/live 200,
   * everything else 503 with `Retry-After`), retries with backoff (up to 10 s apart, one log line
   * per attempt) and serves once it answers; `false` rejects at once with a
   * `DatabaseUnreachableError`. A startup that fails otherwise (a migration) is never retried: it
   * rejects, or once listening, closes the server and sets a non-zero `process.exitCode`.
   * @default true
   */
  waitForDatabase?: boolean;
  /** Where the startup retries are reported. @default console.error */
  log?: (line: string) => void;
}

export interface RunningServer {
  server: Server;
  /** The address the server listens on, for example `http://127.0.0.1:3000`. */
  url: string;
  /**
   * Stops accepting connections, lets in-flight requests finish (within `shutdownGrace`), closes
   * every connection, then closes the app (plugins, database).
   */
  close(): Promise<void>;
}

const DEFAULTS = {
  headersTimeout: 10_000,
  requestTimeout: 120_000,
  idleTimeout: 30_000,
  keepAliveTimeout: 5_000,
  maxHeaderSize: 16 * 1024,
  maxConnections: 1024,
  shutdownGrace: 10_000,
  coalesceWrites: true,
  waitForDatabase: true,
} satisfies ServeOptions;

const FIRST_RETRY_MS = 500;
const LONGEST_RETRY_MS = 10_000;

const DRAIN_SWEEP_MS = 25;

/**
 * Waits for the app to be ready, then listens. Port 0 picks a free port.
 *
 * @example
 * const running = await serve(app, { port: 3000 });
 * process.on("SIGTERM", () => running.close().then(() => process.exit(0)));
 */
export async function serve(app: Servable, options: ServeOptions = {}): Promise<RunningServer> {
  const limits = { ...DEFAULTS, ...definedOnly(options) };
  const log = options.log ?? ((line: string) => console.error(line));
  let unreachable: Error | undefined;
  try {
    await app.ready;
  } catch (error) {
    if (!isUnreachable(error) || !limits.waitForDatabase || !app.retryStartup) throw error;
    unreachable = error;
  }
  app.reserveConnections?.(limits.maxConnections);
  const server = createServer(
    {
      headersTimeout: limits.headersTimeout,
      requestTimeout: limits.requestTimeout,
      keepAliveTimeout: limits.keepAliveTimeout,
      maxHeaderSize: limits.maxHeaderSize,
      // Timeouts are enforced when connections are checked: often enough for a 1-second resolution.
      connectionsCheckingInterval: Math.min(1000, limits.headersTimeout),
      ...(limits.coalesceWrites ? { ServerResponse: coalescingResponse() } : {}),
    },
    toNodeListener(app, { compress: options.compress }),
  );
  server.timeout = limits.idleTimeout;
  server.maxConnections = limits.maxConnections;
  server.on("clientError", answerClientError);
  const hostname = options.hostname ?? "127.0.0.1";
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 3000, hostname, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const host = hostname.includes(":") ? `[${hostname}]` : hostname;

  let closed: Promise<void> | undefined;
  const close = async () => {
    const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
    await app.endStreams?.();
    // Connections close as soon as they have no request in flight, checked often, so nothing is
    // counted per request; the server's close callback fires when the last one has gone.
    server.closeIdleConnections();
    const sweep = setInterval(() => server.closeIdleConnections(), DRAIN_SWEEP_MS);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      stopped,
      new Promise((resolve) => (timer = setTimeout(resolve, limits.shutdownGrace))),
    ]);
    clearInterval(sweep);
    clearTimeout(timer);
    server.closeAllConnections();
    await stopped;
    await app.close?.();
  };
  const running: RunningServer = {
    server,
    url: `http://${host}:${port}`,
    close: () => {
      closed ??= close();
      return closed;
    },
  };
  if (unreachable) void retryStartup(app, unreachable, log, running, () => closed !== undefined);
  return running;
}

function isUnreachable(error: unknown): error is Error {
  return (error as { code?: unknown } | null)?.code === "DATABASE_UNREACHABLE";
}

/**
 * Listening while the database is down: tries startup again with exponential backoff until it
 * serves, the server is closed, or startup fails for another reason (then it closes the server
 * and the process exits non-zero once nothing else keeps it up).
 */
async function retryStartup(
  app: Servable,
  first: Error,
  log: (line: string) => void,
  running: RunningServer,
  stopped: () => boolean,
): Promise<void> {
  let delay = FIRST_RETRY_MS;
  let failure: Error = first;
  for (let attempt = 1; !stopped(); attempt++) {
    log(`${failure.message} Retrying in ${delay / 1000} s (attempt ${attempt}); serving 503 until then.`);
    await new Promise((resolve) => setTimeout(resolve, delay).unref());
    if (stopped()) return;
    try {
      await app.retryStartup!();
      log("crudkit: the database answers; startup finished, serving requests.");
      return;
    } catch (error) {
      if (!isUnreachable(error)) {
        log(`crudkit: startup failed: ${error instanceof Error ? error.message : String(error)}`);
        process.exitCode = 1;
        await running.close();
        return;
      }
      failure = error;
      delay = Math.min(delay * 2, LONGEST_RETRY_MS);
    }
  }
}

function definedOnly<T extends object>(options: T): Partial<T> {
  return Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined)) as Partial<T>;
}
