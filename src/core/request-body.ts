// Reads a JSON request body without ever holding more than the limit in memory.

import { APIError } from "./errors.ts";
import { checkJsonTextDepth, checkJsonValue } from "./input-checks.ts";

/** Reads, parses and checks a JSON body: within `limit` bytes, nested at most `maxDepth` levels. */
export async function readJsonBody(request: Request, limit: number, maxDepth: number): Promise<unknown> {
  assertJsonBody(request);
  const text = await readText(request, limit);
  if (text.trim() === "") throw new APIError("BAD_REQUEST", "The request body is empty; send a JSON object.");
  checkJsonTextDepth(text, maxDepth);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new APIError("BAD_REQUEST", "The request body is not valid JSON.");
  }
  checkJsonValue(body, maxDepth);
  return body;
}

/**
 * 415 unless the request declares JSON. A body with no type is refused too: a browser sends one
 * from another site without a preflight (`fetch` with `mode: "no-cors"` and a Blob, or
 * `sendBeacon`), while `application/json` from another origin always needs the preflight CORS
 * answers.
 */
export function assertJsonBody(request: Request): void {
  const type = request.headers.get("content-type");
  if (type === null || !isJson(type)) {
    throw new APIError(
      "UNSUPPORTED_MEDIA_TYPE",
      "The request body must be JSON; send it with content-type: application/json.",
    );
  }
}

function isJson(contentType: string): boolean {
  const essence = contentType.split(";", 1)[0]!.trim().toLowerCase();
  return essence === "application/json" || (essence.startsWith("application/") && essence.endsWith("+json"));
}

async function readText(request: Request, limit: number): Promise<string> {
  const declared = request.headers.get("content-length");
  if (declared !== null) {
    const length = Number(declared);
    if (!Number.isSafeInteger(length) || length < 0)
      throw new APIError("BAD_REQUEST", "The content-length header is not a valid length.");
    if (length > limit) throw tooLarge(limit);
    // The HTTP parser delivers exactly the declared length, so reading it whole is bounded.
    const text = await request.text().catch((cause: unknown) => {
      throw interrupted(cause);
    });
    if (text.length > limit) throw tooLarge(limit);
    return text;
  }
  if (!request.body) return "";
  // Without a declared length (chunked), count as the bytes arrive and stop at the limit.
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read().catch((cause: unknown) => {
      throw interrupted(cause);
    });
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => {});
      throw tooLarge(limit);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks, size).toString("utf8");
}

/**
 * The client stopped sending: not a server or database failure. A body stream that failed with an
 * APIError of its own (a plugin refusing more bytes, say) keeps that error.
 */
export function interrupted(cause: unknown): APIError {
  if (cause instanceof APIError) return cause;
  return new APIError("BAD_REQUEST", "The request body ended before it was complete.", { cause });
}

function tooLarge(limit: number): APIError {
  return new APIError("PAYLOAD_TOO_LARGE", `The request body is larger than the limit of ${limit} bytes.`);
}

/** The request with its body passed through `transform` (a plugin counting or hashing the bytes). */
export function throughBody(request: Request, transform: TransformStream<Uint8Array, Uint8Array>): Request {
  if (!request.body) return request;
  return new Request(request.url, {
    method: request.method,
    headers: request.headers,
    body: request.body.pipeThrough(transform),
    duplex: "half",
  } as RequestInit);
}
