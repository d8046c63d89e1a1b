// Serving a crudkit app on Node through @hono/node-server's listener, which avoids building full
// Web objects per request (DESIGN §4 has the measurements).

import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { getRequestListener } from "@hono/node-server";

/** The part of an app serving needs. */
export interface Servable {
  handler: (request: Request, info?: { ip?: string }) => Promise<Response>;
  ready?: Promise<void>;
}

export type NodeListener = (incoming: IncomingMessage, outgoing: ServerResponse) => Promise<void>;

/** A listener for `http.createServer(toNodeListener(app))`. */
export function toNodeListener(app: Servable): NodeListener {
  return getRequestListener((request, env) =>
    app.handler(request, { ip: env.incoming.socket.remoteAddress }),
  ) as NodeListener;
}

export interface ServeOptions {
  /** @default 3000 */
  port?: number;
  /** @default "127.0.0.1" */
  hostname?: string;
}

export interface RunningServer {
  server: Server;
  /** The address the server listens on, for example `http://127.0.0.1:3000`. */
  url: string;
  close(): Promise<void>;
}

/** Waits for the app to be ready, then listens. Port 0 picks a free port. */
export async function serve(app: Servable, options: ServeOptions = {}): Promise<RunningServer> {
  await app.ready;
  const server = createServer(toNodeListener(app));
  const hostname = options.hostname ?? "127.0.0.1";
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 3000, hostname, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const host = hostname.includes(":") ? `[${hostname}]` : hostname;
  return {
    server,
    url: `http://${host}:${port}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}
