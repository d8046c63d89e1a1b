// The Web-standard handler: route, run the endpoint, answer JSON. Every failure becomes the
// documented error body; nothing thrown reaches the caller as a stack or a driver message.

import type { AnsweredRequests, Seen } from "./answered-requests.ts";
import { type ContextDeps, HttpContext } from "./context.ts";
import type { Cors } from "./cors.ts";
import type { Endpoint } from "./endpoint.ts";
import { APIError, toAPIError } from "./errors.ts";
import { Versioned } from "./etag.ts";
import type { LogFields } from "./flood-guard.ts";
import type { User } from "./identity.ts";
import type { InFlight } from "./in-flight.ts";
import { listTag } from "./list-validator.ts";
import { minimalAnswer, prefersMinimal } from "./prefer.ts";
import { handledOnReplicas, POSITION_HEADER } from "./read-routing.ts";
import { requestIdOf } from "./request-id.ts";
import {
  type AnswerFor,
  errorResponse,
  jsonResponse,
  keepAnswerTexts,
  PRIVATE,
  versionedResponse,
} from "./respond.ts";
import type { EndpointRouter } from "./router.ts";
import { endRequestTrace, startRequestTrace, untraced, withinTrace } from "./tracing.ts";

/** What the host knows about a request beyond the Request itself. */
export interface ConnectionInfo {
  /** The client's address, recorded by the audit plugin. */
  ip?: string;
}

export type RequestHandler = (request: Request, info?: ConnectionInfo) => Promise<Response>;

export interface HandlerDeps {
  router: EndpointRouter;
  /** Cross-origin access for browsers, when the app allows any. */
  cors?: Cors | undefined;
  inFlight: InFlight;
  deps: ContextDeps;
  startup: StartupGate;
  log: (message: string, error: unknown, fields?: LogFields) => void;
  /** Pages of records get a weak ETag, and a matching `If-None-Match` is a 304 (`crudkit({ listETags })`). */
  listETags?: boolean;
  /** The credential headers an anonymous answer depends on, for its `Vary` (see credentialVary). */
  vary?: string | undefined;
  /** Spans for requests (core/tracing.ts), recorded once an OpenTelemetry SDK is registered. @default true */
  tracing?: boolean;
  /** Told of every request once it is answered: the request log, metrics (answered-requests.ts). */
  answered?: AnsweredRequests | undefined;
}

/**
 * What a request log line or a metric says about one request. Nothing from its body, query or
 * headers beyond the method: no value the caller sent, so no secret and no hidden field's value.
 */
export interface RequestRecord {
  method: string;
  /** The route's template (`/api/product/:id`, never the id); `unmatched` when no route took it. */
  route: string;
  status: number;
  /** From the request's arrival to its answer's headers (a streamed body may go on after). */
  durationMs: number;
  /** The answer's length, when it states one. */
  bytes?: number;
  requestId: string;
  /** The caller, when the request was identified. */
  userId?: string;
  resource?: string;
  operation?: string;
  /** The error code of an error answer (`NOT_FOUND`, `INTERNAL_ERROR`…). */
  code?: string;
}

export function createHttpHandler(handler: HandlerDeps): RequestHandler {
  const serve = answer(handler);
  const { cors } = handler;
  if (!cors) return serve;
  // A preflight is answered before routing (no route takes OPTIONS), and still names its request;
  // every answer gets the headers.
  return async (request, info) => {
    const preflight = cors.preflight(request);
    if (preflight) return identified(preflight, requestIdOf(request));
    return cors.decorate(request, await serve(request, info));
  };
}

/**
 * Until startup has finished: a promise of its end (requests wait, or answer 503 when it failed);
 * undefined once the app is open.
 */
export type StartupGate = () => Promise<void> | undefined;

function answer(handler: HandlerDeps): RequestHandler {
  const { router, deps, startup, log, inFlight, cors, vary } = handler;
  const listETags = handler.listETags === true;
  const { answered } = handler;
  if (answered) keepAnswerTexts();
  const tracing = handler.tracing !== false;
  return async (request, info) => {
    inFlight.begin();
    try {
      const started = answered ? performance.now() : 0;
      const requestId = requestIdOf(request);
      const seen: Seen = {};
      const traced = tracing ? startRequestTrace(request) : undefined;
      const answering = traced
        ? withinTrace(traced, () => answerOne(request, info, requestId, seen))
        : tracing
          ? answerOne(request, info, requestId, seen)
          : untraced(() => answerOne(request, info, requestId, seen));
      const response = identified(await answering, requestId);
      if (seen.position) response.headers.set(POSITION_HEADER, seen.position);
      if (traced) {
        traced.span.setAttribute("crudkit.request_id", requestId);
        const { route, code } = seen;
        endRequestTrace(traced, { method: request.method, route, status: response.status, code });
      }
      answered?.answered(request, response, requestId, seen, performance.now() - started);
      return response;
    } finally {
      // Once its observers were told, or it waits with those to be: app.close() settles those
      // waiting when none is in flight.
      inFlight.end();
    }
  };

  async function answerOne(
    request: Request,
    info: ConnectionInfo | undefined,
    requestId: string,
    seen: Seen,
  ) {
    const head = request.method === "HEAD";
    let ctx: HttpContext | undefined;
    try {
      refuseCrossSiteWrite(request, cors);
      const { endpoint, params, pattern } = router.match(request.method, pathOf(request.url));
      seen.route = pattern;
      seen.endpoint = endpoint;
      if (!endpoint.ungated) {
        const starting = startup();
        if (starting) await starting;
      }
      ctx = new HttpContext(request, params, deps, info?.ip);
      seen.ctx = ctx;
      let result: unknown;
      if (deps.reads) {
        const handled = await handledOnReplicas(
          deps.reads,
          (routed) => endpoint.handler(routed),
          ctx,
          () => new HttpContext(request, params, deps, info?.ip),
        );
        ({ ctx, result } = handled);
        seen.ctx = ctx;
        seen.position = handled.position;
      } else result = await endpoint.handler(ctx);
      const answer: AnswerFor = { privately: ctx.identified, vary, head };
      if (endpoint.minimal && prefersMinimal(request.headers.get("prefer"))) {
        const headers = answer.privately ? PRIVATE_ONLY : NOTHING;
        const minimal = await minimalAnswer(endpoint.minimal, result, request, headers);
        if (minimal) return minimal;
      }
      if (listETags && endpoint.lists && isRead(request)) {
        const tagged = await taggedPage(result, request, await ctx.getUser(), answer);
        if (tagged) return tagged;
      }
      if (!(result instanceof Response)) return toResponse(endpoint, result, request, answer);
      // An answer for one user is hers: no shared cache (a proxy, a CDN) may keep or serve it.
      if (answer.privately && !result.headers.has("cache-control")) privateAnswer(result);
      else if (!answer.privately && vary) varyAnswer(result, vary);
      return head ? await withoutBody(result) : result;
    } catch (error) {
      const privately = ctx?.identified === true;
      const logged = (message: string, cause: unknown) => {
        try {
          log(message, cause, { requestId });
        } catch {
          // A log that throws does not stop the error answer.
        }
      };
      const apiError = toAPIError(error, logged, deps.driverErrors);
      seen.code = apiError.code;
      return errorResponse(apiError, { privately, vary, head }, requestId);
    }
  }
}

/** Every answer names its request (`X-Request-Id`), taken from the caller or made (request-id.ts). */
function identified(response: Response, requestId: string): Response {
  try {
    response.headers.set("x-request-id", requestId);
  } catch {
    // Immutable headers (Response.redirect): the answer goes without it.
  }
  return response;
}

function isRead(request: Request): boolean {
  return request.method === "GET" || request.method === "HEAD";
}

/**
 * A page of records with its weak ETag (see list-validator.ts), or a 304 when the caller's
 * `If-None-Match` names it. A page from the read cache arrives as a Response and is read back.
 */
async function taggedPage(
  result: unknown,
  request: Request,
  user: User | null,
  answer: AnswerFor,
): Promise<Response | undefined> {
  // Only a JSON page: the list's URL also streams events (`Accept: text/event-stream`), which is
  // answered as any other Response.
  if (
    result instanceof Response &&
    (result.status !== 200 || !result.headers.get("content-type")?.startsWith("application/json"))
  )
    return undefined;
  const json = result instanceof Response ? await result.text() : JSON.stringify(result);
  const query = request.url.indexOf("?");
  const search = query === -1 ? "" : request.url.slice(query);
  const etag = listTag(json, user, search);
  // A cached page keeps what the cache said about it (`X-Cache`).
  const kept: Record<string, string> | undefined = result instanceof Response ? {} : undefined;
  if (result instanceof Response)
    for (const [name, value] of result.headers)
      if (name !== "content-type" && name !== "content-length") kept![name] = value;
  return versionedResponse(json, etag, 200, request.headers.get("if-none-match"), kept, answer);
}

/** `Vary` on an anonymous answer built as a Response (a cached page, a download), unless private. */
function varyAnswer(response: Response, vary: string): void {
  try {
    const cacheControl = response.headers.get("cache-control");
    if (cacheControl?.includes("private") || cacheControl?.includes("no-store")) return;
    response.headers.append("vary", vary);
  } catch {
    // Immutable headers (Response.redirect): nothing a cache keeps per caller.
  }
}

function privateAnswer(response: Response): void {
  try {
    response.headers.set("cache-control", PRIVATE);
  } catch {
    // A Response with immutable headers (Response.redirect): it carries no record.
  }
}

/**
 * HEAD: the GET answer's status and headers, `Content-Length` included, and no body. A body with
 * no length yet (JSON) is measured; a streamed one that states its length (a download, which
 * skips storage for HEAD) or never ends (an event stream) is cancelled unread.
 */
async function withoutBody(response: Response): Promise<Response> {
  if (!response.body) return response;
  const headers = new Headers(response.headers);
  // An event stream never ends: its HEAD is the headers alone.
  if (headers.has("content-length") || headers.get("content-type")?.startsWith("text/event-stream"))
    await response.body.cancel();
  else headers.set("content-length", String((await response.arrayBuffer()).byteLength));
  return new Response(null, { status: response.status, statusText: response.statusText, headers });
}

const PRIVATE_ONLY = { "cache-control": PRIVATE } as const;
const NOTHING = {} as const;

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/**
 * A write that carries cookies from another site is refused (403) unless CORS lets that origin
 * call with credentials: cookies identify the victim, and the other site chose the request
 * (CSRF). Requests without cookies (API keys, bearer tokens) name their caller themselves, and a
 * browser never adds those for another site. `Sec-Fetch-Site` says where a request came from;
 * without it (older browsers), the `Origin` is compared with the request's own.
 */
function refuseCrossSiteWrite(request: Request, cors: Cors | undefined): void {
  const { headers } = request;
  if (SAFE_METHODS.has(request.method) || !headers.has("cookie")) return;
  const site = headers.get("sec-fetch-site");
  const origin = headers.get("origin");
  const crossSite =
    site === "cross-site" ||
    site === "same-site" ||
    origin === "null" ||
    (site === null && origin !== null && hostOf(origin) !== (headers.get("host") ?? hostOf(request.url)));
  if (!crossSite) return;
  if (origin !== null && origin !== "null" && cors?.allowsCredentials(origin)) return;
  throw new APIError(
    "FORBIDDEN",
    "A write with cookies from another site is refused; list that site in crudkit({ cors: { origin, credentials: true } }) to allow it.",
  );
}

/**
 * `host[:port]` of an origin or URL. Only the host is compared: behind a proxy that ends TLS the
 * request's own URL says `http:` while the browser's `Origin` says `https:`.
 */
function hostOf(url: string): string {
  const start = url.indexOf("://");
  const rest = start === -1 ? url : url.slice(start + 3);
  const end = rest.indexOf("/");
  return (end === -1 ? rest : rest.slice(0, end)).toLowerCase();
}

export function toResponse(
  endpoint: Endpoint,
  result: unknown,
  request?: Request,
  answer: AnswerFor = {},
): Response {
  if (result instanceof Response) return result;
  if (result instanceof Versioned) {
    const status = result.status ?? endpoint.status ?? 200;
    const ifNoneMatch =
      result.revalidates && (request?.method === "GET" || request?.method === "HEAD")
        ? request.headers.get("if-none-match")
        : null;
    return versionedResponse(
      JSON.stringify(result.data),
      result.etag,
      status,
      ifNoneMatch,
      undefined,
      answer,
    );
  }
  return jsonResponse(result, endpoint.status ?? 200, answer);
}

/** The path of an absolute URL, without its query, still URL-encoded. */
function pathOf(url: string): string {
  const start = url.indexOf("/", url.indexOf("://") + 3);
  if (start === -1) return "/";
  const end = url.indexOf("?", start);
  return end === -1 ? url.slice(start) : url.slice(start, end);
}
