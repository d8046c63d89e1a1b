// Express (4 or 5): a crudkit app as a request handler, mounted under a path. Express strips the
// mount path from `req.url`; crudkit routes the full path (`/api/products` under its basePath),
// so the handler puts the original URL back. Bodies stream to crudkit as they arrive, unless a
// body parser mounted before it has read them (then what it parsed is handed over).

import type { IncomingMessage, ServerResponse } from "node:http";
import { type ListenerOptions, type Servable, toNodeListener } from "./listener.ts";

/** What the handler reads of Express's request: Node's, plus what Express and body parsers add. */
type ExpressRequest = IncomingMessage & { originalUrl?: string; body?: unknown; rawBody?: Buffer };

/**
 * An Express handler for a crudkit app. Mount it at the app's basePath, before any body parser.
 *
 * @example
 * import express from "express";
 * const server = express();
 * server.use("/api", toExpressHandler(app, { compress: true })); // app's basePath is "/api" (the default)
 * server.listen(3000);
 */
export function toExpressHandler(
  app: Servable,
  options: ListenerOptions = {},
): (req: IncomingMessage, res: ServerResponse) => void {
  const listener = toNodeListener(app, options);
  return (incoming, res) => {
    const req = incoming as ExpressRequest;
    if (typeof req.originalUrl === "string") req.url = req.originalUrl;
    // express.json() (or another parser) already read the stream: crudkit gets its result.
    if (req.readableEnded && req.body !== undefined && !Buffer.isBuffer(req.rawBody))
      req.rawBody = Buffer.from(typeof req.body === "string" ? req.body : JSON.stringify(req.body));
    void listener(req, res);
  };
}
