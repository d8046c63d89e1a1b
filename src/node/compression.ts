// Compressed answers for serve() and the Node adapters (`compress`): negotiated from
// Accept-Encoding (brotli at a low quality, else gzip), for JSON and text above a threshold, with
// `Vary: Accept-Encoding`. A page of 100 records shrinks 5-10 times. Never for event streams
// (each event must go out as it happens), already-compressed types, or an answer that says
// `Cache-Control: no-transform` (how a route turns it off). A body already in memory (every JSON
// answer) is compressed in one go; a streamed one (a text download) is compressed as it streams.

import { pipeline, Readable } from "node:stream";
import { brotliCompressSync, constants, createBrotliCompress, createGzip, gzipSync } from "node:zlib";
import { preferredCoding } from "../core/accept-encoding.ts";
import { answerText } from "../core/respond.ts";

export interface CompressOptions {
  /** Smallest body compressed, in bytes: below it the bytes saved do not pay for the work. @default 1024 */
  threshold?: number;
  /** Brotli quality, 0-11: low is fast, as an answer made per request needs. @default 2 */
  brotliQuality?: number;
  /** Gzip level, 1-9. @default 3 */
  gzipLevel?: number;
}

const BOTH = ["br", "gzip"] as const;

const TEXT_TYPES =
  /^(?:text\/(?!event-stream)|application\/(?:[\w.+-]*\+)?(?:json|xml|javascript)|image\/svg\+xml)/i;

/** The settings `compress: true` or an options object stand for; undefined when off. */
export function compressionOf(
  option: boolean | CompressOptions | undefined,
): Required<CompressOptions> | undefined {
  if (!option) return undefined;
  const given = option === true ? {} : option;
  return {
    threshold: given.threshold ?? 1024,
    brotliQuality: given.brotliQuality ?? 2,
    gzipLevel: given.gzipLevel ?? 3,
  };
}

/**
 * The answer compressed for the request, when it may be. HEAD answers (already without a body)
 * get the headers their GET would have.
 */
export async function compressed(
  request: Request,
  response: Response,
  options: Required<CompressOptions>,
): Promise<Response> {
  // A revalidation names what its 200 varies on (RFC 9110 §15.4.5): a cache refreshes its copy's
  // headers from it.
  if (response.status === 304) return withVary(response);
  const head = request.method === "HEAD";
  const text = head ? undefined : answerText(response);
  if (!compressible(response, head, text !== undefined)) return response;
  // A JSON answer made here, too small to gain: as it is, without `Vary` (never compressed).
  if (text !== undefined && Buffer.byteLength(text) < options.threshold) return response;
  const stated = response.headers.get("content-length");
  if (stated !== null && Number(stated) < options.threshold) return response;
  const encoding = preferredCoding(request.headers.get("accept-encoding"), BOTH);
  const headers = new Headers(response.headers);
  // Also on the identity copy: another client may be sent a compressed one, and a cache must
  // tell them apart.
  headers.append("vary", "Accept-Encoding");
  if (text !== undefined) {
    // A JSON answer made here: its text is at hand, no body to read.
    if (!encoding) return new Response(text, { status: response.status, headers });
    headers.set("content-encoding", encoding);
    return new Response(pack(Buffer.from(text), encoding, options), { status: response.status, headers });
  }
  if (!encoding) {
    if (head || stated !== null)
      return new Response(head ? null : response.body, { status: response.status, headers });
    const body = await response.arrayBuffer();
    return new Response(body, {
      status: response.status,
      headers: body.byteLength < options.threshold ? response.headers : headers,
    });
  }
  headers.set("content-encoding", encoding);
  // No Content-Length: known only once compressed, which a HEAD never is (RFC 9110 §9.3.2).
  headers.delete("content-length");
  if (head) return new Response(null, { status: response.status, statusText: response.statusText, headers });
  if (stated !== null) {
    // A stream of known length (a text download): compressed as it goes.
    const zipper =
      encoding === "br"
        ? createBrotliCompress(brotliParams(options))
        : createGzip({ level: options.gzipLevel });
    const source = Readable.fromWeb(response.body as import("node:stream/web").ReadableStream);
    // pipeline, not pipe: a storage error ends the answer instead of the process, and a client
    // that goes away closes the file.
    pipeline(source, zipper, () => {});
    // The bytes are no longer the stored file's: a range of them (Accept-Ranges, a strong ETag
    // for If-Range) would not continue this stream (RFC 9110 §8.8.3).
    headers.delete("accept-ranges");
    const etag = headers.get("etag");
    if (etag?.startsWith('"')) headers.set("etag", `W/${etag}`);
    return new Response(Readable.toWeb(zipper) as ReadableStream, { status: response.status, headers });
  }
  const body = Buffer.from(await response.arrayBuffer());
  // Too small to gain: as it was, without `Vary` (it is never compressed, whoever asks).
  if (body.byteLength < options.threshold)
    return new Response(body, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  return new Response(pack(body, encoding, options), { status: response.status, headers });
}

function pack(
  body: Buffer,
  encoding: (typeof BOTH)[number],
  options: Required<CompressOptions>,
): ReturnType<typeof gzipSync> {
  return encoding === "br"
    ? brotliCompressSync(body, brotliParams(options))
    : gzipSync(body, { level: options.gzipLevel });
}

function withVary(response: Response): Response {
  try {
    response.headers.append("vary", "Accept-Encoding");
  } catch {
    // Immutable headers: a Response.redirect, never a revalidation.
  }
  return response;
}

/** `known`: the body is a text made here (answerText); its presence needs no look at the body. */
function compressible(response: Response, head: boolean, known: boolean): boolean {
  if (
    (!head && !known && !response.body) ||
    response.status === 204 ||
    response.status === 304 ||
    response.status === 206
  )
    return false;
  const { headers } = response;
  if (headers.has("content-encoding")) return false;
  if (headers.get("cache-control")?.toLowerCase().includes("no-transform")) return false;
  return TEXT_TYPES.test(headers.get("content-type") ?? "");
}

function brotliParams(options: Required<CompressOptions>) {
  return {
    params: {
      [constants.BROTLI_PARAM_QUALITY]: options.brotliQuality,
      [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
    },
  };
}
