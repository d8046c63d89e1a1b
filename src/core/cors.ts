// CORS: browsers on other origins may call the API when the app says so. A preflight (OPTIONS
// with Origin and Access-Control-Request-Method) answers 204 before any routing; every other
// answer, errors included, carries the headers for an allowed origin. A refused origin gets no
// CORS header at all, so the browser keeps the answer from the page.

import { ConfigError } from "./errors.ts";

export interface CorsOptions {
  /**
   * Origins allowed to call the API: `"*"` (any, without credentials), one origin, a list, or a
   * function of the request's `Origin`.
   * @example origin: ["https://app.example.com", "http://localhost:5173"]
   */
  origin: "*" | string | readonly string[] | ((origin: string) => boolean);
  /** Let the browser send cookies and `Authorization` (`Access-Control-Allow-Credentials`). @default false */
  credentials?: boolean;
  /** Seconds a browser may keep a preflight's answer. @default 600 */
  maxAge?: number;
  /**
   * Response headers a page may read beyond the simple ones (`crudkit-position`: a write's place
   * in the primary's log, which a page sends back to read its writes from replicas).
   * @default ["x-cache", "x-request-id", "crudkit-position"]
   */
  exposeHeaders?: readonly string[];
  /** Request headers a page may send. @default the ones the preflight asks for */
  allowHeaders?: readonly string[];
  /** @default ["GET", "POST", "PATCH", "DELETE"] */
  methods?: readonly string[];
}

export interface Cors {
  /** The answer to a preflight, or undefined for any other request. */
  preflight(request: Request): Response | undefined;
  /** The response with the CORS headers its request's origin gets. */
  decorate(request: Request, response: Response): Response;
  /** Whether an origin may call with credentials (cookies): `credentials: true` and listed. */
  allowsCredentials(origin: string): boolean;
}

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

export function createCors(options: CorsOptions): Cors {
  const allowed = originRule(options.origin);
  const credentials = options.credentials === true;
  if (options.origin === "*" && credentials)
    throw new ConfigError('cors: origin "*" cannot go with credentials; list the origins instead.');
  const maxAge = options.maxAge ?? 600;
  if (!Number.isInteger(maxAge) || maxAge < 0) throw new ConfigError("cors: maxAge must be whole seconds.");
  const expose = headerList(
    "exposeHeaders",
    options.exposeHeaders ?? ["x-cache", "x-request-id", "crudkit-position"],
  );
  const allowHeaders = options.allowHeaders ? headerList("allowHeaders", options.allowHeaders) : undefined;
  const methods = headerList("methods", options.methods ?? ["GET", "POST", "PATCH", "DELETE"]);
  const any = options.origin === "*";

  /** The allowed origin to echo, "*", or undefined when the request's origin is refused. */
  const granted = (request: Request): string | undefined => {
    const origin = request.headers.get("origin");
    if (origin === null) return undefined;
    if (any) return "*";
    return allowed(origin) ? origin : undefined;
  };
  const common = (headers: Headers, origin: string) => {
    headers.set("access-control-allow-origin", origin);
    if (credentials) headers.set("access-control-allow-credentials", "true");
  };

  return {
    preflight(request) {
      if (request.method !== "OPTIONS") return undefined;
      const asked = request.headers.get("access-control-request-method");
      if (asked === null || request.headers.get("origin") === null) return undefined;
      const headers = new Headers();
      if (!any) headers.set("vary", "Origin");
      const origin = granted(request);
      if (origin) {
        common(headers, origin);
        headers.set("access-control-allow-methods", methods);
        const requested = request.headers.get("access-control-request-headers");
        const allow = allowHeaders ?? (requested && isHeaderList(requested) ? requested : "");
        if (allow) headers.set("access-control-allow-headers", allow);
        // An echoed list differs per request: caches must key the answer on what was asked.
        if (!allowHeaders) headers.append("vary", "Access-Control-Request-Headers");
        headers.set("access-control-max-age", String(maxAge));
      }
      return new Response(null, { status: 204, headers });
    },
    allowsCredentials: (origin) => credentials && allowed(origin),
    decorate(request, response) {
      // Vary: Origin on every answer, also to a request without one: a shared cache that kept a
      // no-Origin answer would hand it to a browser, without the headers it needs.
      if (!any) {
        try {
          response.headers.append("vary", "Origin");
        } catch {
          // Immutable headers (Response.redirect, a fetch() passed on): left as they are.
          return response;
        }
      }
      if (request.headers.get("origin") === null) return response;
      const origin = granted(request);
      if (!origin) return response;
      common(response.headers, origin);
      if (expose) response.headers.set("access-control-expose-headers", expose);
      return response;
    },
  };
}

function originRule(origin: CorsOptions["origin"]): (origin: string) => boolean {
  if (typeof origin === "function") return (o) => origin(o) === true;
  if (origin === "*") return () => true;
  const list = typeof origin === "string" ? [origin] : origin;
  if (!Array.isArray(list) || list.some((o) => typeof o !== "string" || !/^https?:\/\/[^/\s]+$/.test(o)))
    throw new ConfigError(
      'cors: origin takes "*", origins such as "https://app.example.com" (no path), or a function.',
    );
  // Exactly as listed: browsers send the origin serialized (lower-case scheme and host), so a
  // listed origin with capitals is a mistake, which an exact comparison shows instead of hiding.
  const set = new Set(list);
  return (o) => set.has(o);
}

function headerList(option: string, names: readonly string[]): string {
  if (!Array.isArray(names) || names.some((n) => typeof n !== "string" || !TOKEN.test(n)))
    throw new ConfigError(`cors: ${option} takes header or method names.`);
  return names.join(", ");
}

/** `content-type, x-api-key`: what a preflight may ask for, echoed only when it is that. */
function isHeaderList(value: string): boolean {
  return value.length <= 1000 && value.split(",").every((part) => TOKEN.test(part.trim()));
}
