// JSON responses: every answer but a download goes through here, so every body is JSON.

import type { APIError } from "./errors.ts";
import { noneMatchHolds, Versioned } from "./etag.ts";

const JSON_HEADERS = { "content-type": "application/json" } as const;
/** An answer for one identified caller: hers alone, no shared cache (a proxy, a CDN) keeps it. */
export const PRIVATE = "private, no-store";
const PRIVATE_JSON_HEADERS = { "content-type": "application/json", "cache-control": PRIVATE } as const;

/**
 * `privately`: the answer is for an identified caller (`Cache-Control: private, no-store`). Set
 * here, as the response is built: adding it afterwards would make the host build real Headers.
 */
export function jsonResponse(body: unknown, status = 200, privately = false, vary?: string): Response {
  if (body instanceof Versioned)
    return versionedResponse(
      JSON.stringify(body.data),
      body.etag,
      status,
      undefined,
      undefined,
      privately,
      vary,
    );
  return new Response(JSON.stringify(body), {
    status,
    headers: privately ? PRIVATE_JSON_HEADERS : vary ? publicJsonHeaders(vary) : JSON_HEADERS,
  });
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
  privately = false,
  vary?: string,
): Response {
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
  return new Response(json, { status, headers: all });
}

/**
 * `caller`: the answer depends on who asked: private for an identified caller, `Vary` on the
 * credential headers for an anonymous one (a 404 may be a record outside her rows).
 */
export function errorResponse(
  error: APIError,
  caller?: { privately: boolean; vary?: string | undefined },
): Response {
  const base = caller?.privately
    ? PRIVATE_JSON_HEADERS
    : caller?.vary
      ? publicJsonHeaders(caller.vary)
      : JSON_HEADERS;
  const headers = error.headers ? { ...error.headers, ...base } : base;
  return new Response(JSON.stringify(error.toJSON()), { status: error.status, headers });
}
