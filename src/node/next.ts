// Next.js App Router: a crudkit app as route handlers, one per method, in a catch-all route under
// the app's basePath. Next hands each a Web `Request`, which is what `app.handler` takes; crudkit
// routes the full path, so the file sits where the basePath says.

import type { Servable } from "./listener.ts";

type RouteHandler = (request: Request) => Promise<Response>;

/**
 * Route handlers for `app/api/[...crudkit]/route.ts` (the app's basePath being `/api`).
 *
 * @example
 * // app/api/[...crudkit]/route.ts
 * import { toNextHandler } from "crudkit-api/node";
 * import { app } from "../../../crudkit.config";
 * export const { GET, POST, PATCH, PUT, DELETE, OPTIONS } = toNextHandler(app);
 */
export function toNextHandler(
  app: Servable,
): Record<"GET" | "HEAD" | "POST" | "PUT" | "PATCH" | "DELETE" | "OPTIONS", RouteHandler> {
  const handle: RouteHandler = (request) => app.handler(request);
  return {
    GET: handle,
    HEAD: handle,
    POST: handle,
    PUT: handle,
    PATCH: handle,
    DELETE: handle,
    OPTIONS: handle,
  };
}
