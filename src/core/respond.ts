// JSON responses: every answer but a download goes through here, so every body is JSON.

import type { APIError } from "./errors.ts";
import { noneMatchHolds, Versioned } from "./etag.ts";

const JSON_HEADERS = { "content-type": "application/json" } as const;
/** An answer for one identified caller: hers alone, no shared cache (a proxy, a CDN) keeps it. */
export const PRIVATE = "private, no-store";
const PRIVATE_JSON_HEADERS = { "content-type": "application/json", "cache-control": PRIVATE } as const;

/**
 * Who the answer is for and how it goes out, decided as it is built: adding headers or dropping
 * the body afterwards would make the host build a real Response.
 */
export interface AnswerFor {
  /** For an identified caller: `Cache-Control: private, no-store`. */
  privately?: boolean;
  /** For an anonymous caller of an app that identifies callers: `Vary` on the credential headers. */
  vary?: string | undefined;
  /** A HEAD: the headers with the body's `Content-Length`, and no body. */
  head?: boolean;
}

const FOR_ANYONE: AnswerFor = {};

export function jsonResponse(body: unknown, status = 200, answer: AnswerFor = FOR_ANYONE): Response {
  if (body instanceof Versioned)
    return versionedResponse(JSON.stringify(body.data), body.etag, status, undefined, undefined, answer);
  const headers = answer.privately
    ? PRIVATE_JSON_HEADERS
    : answer.vary
      ? publicJsonHeaders(answer.vary)
      : JSON_HEADERS;
  return bodied(JSON.stringify(body), status, headers, answer.head);
}

const PUBLIC_JSON_HEADERS = new Map<string, Readonly<Record<string, string>>>();

/**
 * JSON headers with `Vary` (the credential headers an anonymous answer depends on), one object per
 * value: an app has one, and a literal per answer would cost a spread each time.
 */
function publicJsonHeaders(vary: string): Readonly<Record<string, string>> {
  let headers = PUBLIC_JSON_HEADERS.get(vary);
  if (!headers) {
    headers = { ...JSON_HEADERS, vary };
    PUBLIC_JSON_HEADERS.set(vary, headers);
  }
  return headers;
}

/**
 * A record's JSON with its `ETag`; `ifNoneMatch` (a GET's `If-None-Match`) naming that version
 * turns it into a 304 with no body.
 */
export function versionedResponse(
  json: string,
  etag: string,
  status: number,
  ifNoneMatch?: string | null,
  headers?: Readonly<Record<string, string>>,
  answer: AnswerFor = FOR_ANYONE,
): Response {
  const { privately, vary } = answer;
  if (ifNoneMatch && status === 200 && noneMatchHolds(ifNoneMatch, etag))
    return new Response(null, {
      status: 304,
      headers: privately ? { etag, "cache-control": PRIVATE } : vary ? { etag, vary } : { etag },
    });
  if (vary && !privately) headers = headers ? { ...headers, vary } : { vary };
  // A literal when there is nothing to add: every read goes through here, and spreads cost.
  const all = headers
    ? privately
      ? { ...JSON_HEADERS, ...headers, etag, "cache-control": PRIVATE }
      : { ...JSON_HEADERS, ...headers, etag }
    : privately
      ? { "content-type": JSON_HEADERS["content-type"], etag, "cache-control": PRIVATE }
      : { "content-type": JSON_HEADERS["content-type"], etag };
  return bodied(json, status, all, answer.head);
}

/**
 * `answer`: the error depends on who asked too: private for an identified caller, `Vary` on the
 * credential headers for an anonymous one (a 404 may be a record outside her rows).
 */
export function errorResponse(
  error: APIError,
  answer: AnswerFor = FOR_ANYONE,
  /** The request's id: a 5xx carries it in its body, for the user to quote. */
  requestId?: string,
): Response {
  const base = answer.privately
    ? PRIVATE_JSON_HEADERS
    : answer.vary
      ? publicJsonHeaders(answer.vary)
      : JSON_HEADERS;
  const headers = error.headers ? { ...error.headers, ...base } : base;
  const body = requestId && error.status >= 500 ? { ...error.toJSON(), requestId } : error.toJSON();
  return bodied(JSON.stringify(body), error.status, headers, answer.head);
}

const encoder = new TextEncoder();

/** The JSON as the body, or for a HEAD its length alone (RFC 9110 §9.3.2). */
/**
 * The JSON text of answers made here, for the request log's `bytes` (an answer states no length:
 * the server sends it as it is, or compressed). Kept only once a handler observes its requests,
 * on the answer itself: a WeakMap entry per answer cost about 1.2 µs a request (set, and the
 * collector's work on its entries), measured in a CPU profile of `npm run bench -- --logs`.
 */
const TEXT = Symbol("crudkit.answerText");
type Kept = Response & { [TEXT]?: string };
let keepTexts = false;

/** Answers made from now on keep their text for `answerBytes` (the request log, metrics). */
export function keepAnswerTexts(): void {
  keepTexts = true;
}

/**
 * The JSON text of an answer made here, once `keepAnswerTexts()` was called; undefined for any
 * other. Compression reads it instead of the body: reading a body makes the server adapter's light
 * answer a full Fetch one, a stream and all (about 30 µs a request, measured).
 */
export function answerText(response: Response): string | undefined {
  return (response as Kept)[TEXT];
}

/** The bytes of an answer's body before any compression, when known. */
export function answerBytes(response: Response): number | undefined {
  // Ours first: reading a header of a Response is a trip through its Headers object.
  const text = (response as Kept)[TEXT];
  if (text !== undefined) return Buffer.byteLength(text);
  const stated = response.headers.get("content-length");
  return stated === null ? undefined : Number(stated);
}

function bodied(
  json: string,
  status: number,
  headers: Readonly<Record<string, string>>,
  head = false,
): Response {
  if (!head) {
    const response = new Response(json, { status, headers });
    if (keepTexts) (response as Kept)[TEXT] = json;
    return response;
  }
  const length = typeof Buffer === "undefined" ? encoder.encode(json).byteLength : Buffer.byteLength(json);
  return new Response(null, { status, headers: { ...headers, "content-length": String(length) } });
}
