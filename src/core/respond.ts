// JSON responses: every answer but a download goes through here, so every body is JSON.

import type { APIError } from "./errors.ts";

const JSON_HEADERS = { "content-type": "application/json" } as const;

export function jsonResponse(body: unknown, status = 200): Response {
  return new Response(JSON.stringify(body), { status, headers: JSON_HEADERS });
}

export function errorResponse(error: APIError): Response {
  const headers = error.headers ? { ...error.headers, ...JSON_HEADERS } : JSON_HEADERS;
  return new Response(JSON.stringify(error.toJSON()), { status: error.status, headers });
}
