// `Prefer: return=minimal` (RFC 7240, as PostgREST honours it): a write the caller does not need
// echoed answers without its body. A sync job sending thousands of records saves the bytes and the
// serialization; the record's ETag still comes back, so the next conditional write can name it.
// Applied last, at the HTTP handler: what plugins keep of an answer (an idempotency key's first
// answer) is always the whole representation, whoever asked first and however.

import type { Endpoint } from "./endpoint.ts";
import { Versioned } from "./etag.ts";

/** Whether a `Prefer` header asks for `return=minimal` among its preferences. */
export function prefersMinimal(prefer: string | null): boolean {
  if (prefer === null) return false;
  for (const preference of prefer.split(",")) {
    const [name] = preference.split(";");
    // `return=minimal`, also spaced or quoted (`return="minimal"`, RFC 7240 allows both).
    if (name!.toLowerCase().replace(/[\s"]+/g, "") === "return=minimal") return true;
  }
  return false;
}

/**
 * The answer without a body: 201 with `Location` (the created record's URL) for a create, 204
 * otherwise; `Preference-Applied` says the preference was honoured. `result` is what the endpoint
 * (or a plugin around it) answered; an error, or anything but a success, is left to answer as it
 * is (undefined).
 */
export async function minimalAnswer(
  kind: NonNullable<Endpoint["minimal"]>,
  result: unknown,
  request: Request,
  privateHeaders: Readonly<Record<string, string>>,
): Promise<Response | undefined> {
  let data: unknown = result;
  let etag: string | null = null;
  if (result instanceof Response) {
    if (!result.ok) return undefined;
    etag = result.headers.get("etag");
    // A plugin's Response (a replayed first answer, a rate limit's headers): its record's id.
    data = kind === "created" ? await result.json().catch(() => undefined) : undefined;
    if (result.headers.get("idempotent-replayed") === "true")
      privateHeaders = { ...privateHeaders, "idempotent-replayed": "true" };
  } else if (result instanceof Versioned) {
    data = result.data;
    etag = result.etag;
  }
  const headers: Record<string, string> = { ...privateHeaders, "preference-applied": "return=minimal" };
  if (etag !== null) headers.etag = etag;
  const id = (data as { id?: unknown } | null | undefined)?.id;
  if (kind === "created" && typeof id === "string")
    headers.location = `${pathOf(request.url)}/${encodeURIComponent(id)}`;
  if (kind === "created")
    return new Response(null, { status: 201, headers: { ...headers, "content-length": "0" } });
  return new Response(null, { status: 204, headers });
}

function pathOf(url: string): string {
  const { pathname } = new URL(url);
  return pathname.replace(/\/+$/, "");
}
