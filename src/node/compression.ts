// Compressed answers for serve() and the Node adapters (`compress`): negotiated from
// Accept-Encoding (brotli at a low quality, else gzip), for JSON and text above a threshold, with
// `Vary: Accept-Encoding`. A page of 100 records shrinks 5-10 times. Never for event streams
// (each event must go out as it happens), already-compressed types, or an answer that says
// `Cache-Control: no-transform` (how a route turns it off). A body already in memory (every JSON
// answer) is compressed in one go; a streamed one (a text download) is compressed as it streams.

import { Readable } from "node:stream";
import { brotliCompressSync, constants, createBrotliCompress, createGzip, gzipSync } from "node:zlib";

export interface CompressOptions {
  /** Smallest body compressed, in bytes: below it the bytes saved do not pay for the work. @default 1024 */
  threshold?: number;
  /** Brotli quality, 0-11: low is fast, as an answer made per request needs. @default 4 */
  brotliQuality?: number;
  /** Gzip level, 1-9. @default 5 */
  gzipLevel?: number;
}

type Encoding = "br" | "gzip";

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
    brotliQuality: given.brotliQuality ?? 4,
    gzipLevel: given.gzipLevel ?? 5,
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
  if (!compressible(response, request.method === "HEAD")) return response;
  const stated = response.headers.get("content-length");
  if (stated !== null && Number(stated) < options.threshold) return response;
  const encoding = chosenEncoding(request.headers.get("accept-encoding"));
  const headers = new Headers(response.headers);
  headers.append("vary", "Accept-Encoding");
  if (request.method === "HEAD") {
    if (encoding) {
      headers.set("content-encoding", encoding);
      headers.delete("content-length");
    }
    return new Response(null, { status: response.status, statusText: response.statusText, headers });
  }
  if (stated !== null) {
    // A stream of known length: compressed as it goes, its length unknown until the end.
    if (!encoding) return new Response(response.body, { status: response.status, headers });
    headers.set("content-encoding", encoding);
    headers.delete("content-length");
    const zipper =
      encoding === "br"
        ? createBrotliCompress(brotliParams(options))
        : createGzip({ level: options.gzipLevel });
    const source = Readable.fromWeb(response.body as import("node:stream/web").ReadableStream);
    return new Response(Readable.toWeb(source.pipe(zipper)) as ReadableStream, {
      status: response.status,
      headers,
    });
  }
  const body = Buffer.from(await response.arrayBuffer());
  // Too small to gain: as it was, without `Vary` (it is never compressed, whoever asks).
  if (body.byteLength < options.threshold)
    return new Response(body, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  if (!encoding) return new Response(body, { status: response.status, headers });
  const packed =
    encoding === "br"
      ? brotliCompressSync(body, brotliParams(options))
      : gzipSync(body, { level: options.gzipLevel });
  // No Content-Length: a HEAD, which never compresses, could not state the same one.
  headers.set("content-encoding", encoding);
  headers.delete("content-length");
  return new Response(packed, { status: response.status, headers });
}

function compressible(response: Response, head: boolean): boolean {
  if (
    (!head && !response.body) ||
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

/** Brotli when the client takes it, else gzip, else none; `q=0` refuses a coding, `*` stands for the rest. */
export function chosenEncoding(acceptEncoding: string | null): Encoding | undefined {
  if (!acceptEncoding) return undefined;
  const weights = new Map<string, number>();
  for (const part of acceptEncoding.split(",")) {
    const [name, ...params] = part.trim().toLowerCase().split(";");
    if (!name) continue;
    const q = params.map((p) => p.trim()).find((p) => p.startsWith("q="));
    const weight = q ? Number(q.slice(2)) : 1;
    weights.set(name, Number.isFinite(weight) ? weight : 0);
  }
  const weightOf = (coding: Encoding) => weights.get(coding) ?? weights.get("*") ?? 0;
  const br = weightOf("br");
  const gzip = weightOf("gzip");
  if (br > 0 && br >= gzip) return "br";
  if (gzip > 0) return "gzip";
  return undefined;
}
