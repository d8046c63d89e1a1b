// Request ids: one per request, to find its lines in the logs and for a user to quote from a 5xx.
// A caller's (or a proxy's) `X-Request-Id` is kept when it is a sane token, so one id follows the
// request through every service; anything else (too long, spaces, control characters, an
// attempt to forge log lines) is replaced by a new one.

import { randomUUID } from "node:crypto";

const SANE = /^[A-Za-z0-9._-]{1,128}$/;

/**
 * The request's id: its `X-Request-Id` when that is at most 128 characters of `[A-Za-z0-9._-]`,
 * else a new UUID.
 *
 * @example
 * requestIdOf(new Request("http://localhost/api/product", { headers: { "x-request-id": "abc-123" } })); // "abc-123"
 */
export function requestIdOf(request: Request): string {
  const given = request.headers.get("x-request-id");
  return given !== null && SANE.test(given) ? given : randomUUID();
}
