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
export function jsonResponse(body: unknown, status = 200, privately = false): Response {
  if (body instanceof Versioned)
    return versionedResponse(JSON.stringify(body.data), body.etag, status, undefined, undefined, privately);
  return new Response(JSON.stringify(body), {
    status,
    headers: privately ? PRIVATE_JSON_HEADERS : JSON_HEADERS,
  });
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
): Response {
  if (ifNoneMatch && status === 200 && noneMatchHolds(ifNoneMatch, etag))
    return new Response(null, {
      status: 304,
      headers: privately ? { etag, "cache-control": PRIVATE } : { etag },
    });
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

export function errorResponse(error: APIError): Response {
  const headers = error.headers ? { ...error.headers, ...JSON_HEADERS } : JSON_HEADERS;
  return new Response(JSON.stringify(error.toJSON()), { status: error.status, headers });
}
