// serve(): a crudkit app on a Node HTTP server with safe limits for slow and stuck clients, and a
// close() that lets in-flight requests finish before the app's plugins and database close.

import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { answerClientError } from "./client-error.ts";
import { coalescingResponse } from "./coalescing-response.ts";
import { type Servable, toNodeListener } from "./listener.ts";

export interface ServeOptions {
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
} satisfies ServeOptions;

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
  await app.ready;
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
    toNodeListener(app),
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
  return {
    server,
    url: `http://${host}:${port}`,
    close: () => {
      closed ??= close();
      return closed;
    },
  };
}

function definedOnly<T extends object>(options: T): Partial<T> {
  return Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined)) as Partial<T>;
}
