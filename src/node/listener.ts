// A Node request listener for a crudkit app, through @hono/node-server's listener, which avoids
// building full Web objects per request (DESIGN §4 has the measurements).

import type { IncomingMessage, ServerResponse } from "node:http";
import { getRequestListener } from "@hono/node-server";
import { APIError } from "../core/errors.ts";
import { errorResponse, keepAnswerTexts } from "../core/respond.ts";
import { type CompressOptions, compressed, compressionOf } from "./compression.ts";

/** The part of an app serving needs. */
export interface Servable {
  handler: (request: Request, info?: { ip?: string }) => Promise<Response>;
  ready?: Promise<void>;
  /** Keeps some of the server's connections for ordinary requests: event streams get the rest. */
  reserveConnections?: (maxConnections: number) => void;
  /** Startup again after the database could not be reached (crudkit apps have it). */
  retryStartup?: () => Promise<void>;
  /** Closes the app's plugins and database; `serve().close()` calls it once requests have drained. */
  close?: () => Promise<void>;
  /** Ends long-lived answers (event streams) so connections can drain; `serve().close()` calls it first. */
  endStreams?: () => Promise<void>;
}

export type NodeListener = (incoming: IncomingMessage, outgoing: ServerResponse) => Promise<void>;

const MALFORMED = new APIError("BAD_REQUEST", "The request's URL or Host header is malformed.");

/**
 * A Node request listener for a crudkit app (for `http.createServer`, or a framework that takes
 * one); `serve()` adds timeouts and graceful shutdown on top. `compress` compresses answers.
 *
 * @example
 * http.createServer(toNodeListener(app)).listen(3000);
 */
export interface ListenerOptions {
  /**
   * Compress JSON and text answers for clients that accept it (brotli, gzip), with
   * `Vary: Accept-Encoding`. Off by default (docs/http.md, "Compression", has the measured cost);
   * a route opts out with `Cache-Control: no-transform`. @default false
   */
  compress?: boolean | CompressOptions;
}

export function toNodeListener(app: Servable, options: ListenerOptions = {}): NodeListener {
  const compression = compressionOf(options.compress);
  // Compression reads a JSON answer's text, not its body (see answerText).
  if (compression) keepAnswerTexts();
  const handle = compression
    ? async (request: Request, ip: string | undefined) =>
        compressed(request, await app.handler(request, { ip }), compression)
    : (request: Request, ip: string | undefined) => app.handler(request, { ip });
  return getRequestListener((request, env) => handle(request, env.incoming.socket.remoteAddress), {
    // The adapter refuses a request it cannot turn into a URL (a bad Host, a backslash in the
    // path) before crudkit sees it; without this it answers 400 with an empty body.
    errorHandler: () => errorResponse(MALFORMED),
  }) as NodeListener;
}
