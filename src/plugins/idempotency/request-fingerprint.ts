// What makes two requests "the same" for an idempotency key: the method, the path and query, and
// the body's bytes, hashed. An HTTP body is hashed as the endpoint streams it (an upload is never
// held in memory for this); a retry's body is hashed and discarded, up to the first one's length.

import { createHash, type Hash } from "node:crypto";
import { canonicalJson } from "../../core/canonical-json.ts";
import { contextWith } from "../../core/context.ts";
import type { EndpointContext } from "../../core/endpoint.ts";
import { readJsonBody, throughBody } from "../../core/request-body.ts";

/** `<length>:<sha256>` of a request: comparable, and the length bounds how much of a retry is read. */
export type Fingerprint = string;

interface Limits {
  bodyLimit: number;
  jsonDepth: number;
}

/**
 * The context an endpoint runs with when its request is the first with a key: the same request,
 * its body hashed as the endpoint reads it. `fingerprint()` is undefined when the endpoint did not
 * read the body to its end (then its answer is not kept).
 */
export function observed(
  ctx: EndpointContext,
  limits: Limits,
): { ctx: EndpointContext; fingerprint(): Promise<Fingerprint | undefined> } {
  const request = ctx.request;
  if (!request) {
    // Server code passes an object: its canonical JSON is the body.
    return { ctx, fingerprint: async () => serverFingerprint(await ctx.readBody()) };
  }
  const hash = startHash(request);
  let length = 0;
  let ended = !request.body;
  const copy = throughBody(
    request,
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        hash.update(chunk);
        length += chunk.byteLength;
        controller.enqueue(chunk);
      },
      flush() {
        ended = true;
      },
    }),
  );
  let parsed: Promise<unknown> | undefined;
  return {
    ctx: contextWith(ctx, {
      request: copy,
      readBody: () => (parsed ??= readJsonBody(copy, limits.bodyLimit, limits.jsonDepth)),
    }),
    fingerprint: async () => (ended ? `${length}:${hash.digest("base64url")}` : undefined),
  };
}

/**
 * The fingerprint of a retry, reading its body only as far as the first request's length: a
 * longer body cannot be the same, and is not read further.
 */
export async function fingerprintOf(ctx: EndpointContext, first: Fingerprint): Promise<Fingerprint> {
  const request = ctx.request;
  if (!request) return serverFingerprint(await ctx.readBody());
  const limit = Number(first.slice(0, first.indexOf(":")));
  // The first came from server code: an HTTP request is another request.
  if (!Number.isFinite(limit)) return "http";
  const hash = startHash(request);
  let length = 0;
  if (request.body) {
    const reader = request.body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      length += value.byteLength;
      if (length > limit) {
        await reader.cancel().catch(() => {});
        return "longer";
      }
      hash.update(value);
    }
  }
  return `${length}:${hash.digest("base64url")}`;
}

function startHash(request: Request): Hash {
  const url = new URL(request.url);
  return createHash("sha256").update(`${request.method} ${url.pathname}${url.search}\n`);
}

function serverFingerprint(body: unknown): Fingerprint {
  const text = canonicalJson(body ?? null);
  return `server:${createHash("sha256").update(text).digest("base64url")}`;
}
