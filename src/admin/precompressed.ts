// Static files served pre-compressed: the admin's built files (each with its `.br` and `.gz`,
// written by scripts/build-admin.ts) and the docs page's script (compressed once, in memory, the
// first time it is asked; src/app/docs-page.ts). The caller's Accept-Encoding picks brotli, else
// gzip, else the plain bytes; every answer says `Vary: Accept-Encoding` and its Content-Length (a
// HEAD keeps it), and one with a Content-Encoding is left alone by `serve({ compress })`.

import { promisify } from "node:util";
import { brotliCompress, constants, gzip } from "node:zlib";

import { type Coding, preferredCoding } from "../core/accept-encoding.ts";

export { type Coding, preferredCoding };

/** The file extensions worth compressing, and each one's type. */
export const COMPRESSIBLE_TYPES: Readonly<Record<string, string>> = {
  js: "text/javascript; charset=utf-8",
  css: "text/css; charset=utf-8",
  svg: "image/svg+xml",
  html: "text/html; charset=utf-8",
  json: "application/json",
};

/** The highest settings: done once per file, never per request. */
export const MAX_BROTLI = {
  params: {
    [constants.BROTLI_PARAM_QUALITY]: constants.BROTLI_MAX_QUALITY,
    [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
  },
} as const;
export const MAX_GZIP = { level: constants.Z_BEST_COMPRESSION } as const;

/** An answer of `bytes` in `coding` (none: the plain bytes), varying with Accept-Encoding. */
export function encodedResponse(
  bytes: Uint8Array,
  coding: Coding | undefined,
  headers: Readonly<Record<string, string>>,
): Response {
  const sent = new Headers(headers);
  sent.set("vary", "Accept-Encoding");
  if (coding) sent.set("content-encoding", coding);
  sent.set("content-length", String(bytes.byteLength));
  return new Response(bytes as Uint8Array<ArrayBuffer>, { headers: sent });
}

const brotliAsync = promisify(brotliCompress);
const gzipAsync = promisify(gzip);

/** A file's bytes, and those of its compressed versions once made. */
interface Versions {
  plain: Buffer;
  /** Undefined when the file is too small to compress; resolved to undefined if compressing failed. */
  br: Promise<Buffer | undefined> | undefined;
  gzip: Promise<Buffer | undefined> | undefined;
  /** Set as each version is done, so a request can take what is ready without waiting. */
  ready: Set<Coding>;
}

/**
 * A file compressed in memory, once, for the life of the process: `load` is called on the first
 * request, and the brotli and gzip versions are made then, off the main thread. Brotli at its
 * highest quality takes seconds on a file of megabytes: until it is done, a client that also takes
 * gzip gets gzip (made in a fraction of that), and one that takes only brotli waits for it. A file
 * below `threshold` bytes is always sent as it is, the same to everyone.
 */
export function compressedOnce(
  load: () => Promise<Buffer>,
  headers: Readonly<Record<string, string>>,
  threshold = 1024,
): (acceptEncoding: string | null) => Promise<Response> {
  let versions: Promise<Versions> | undefined;
  const make = async (): Promise<Versions> => {
    const plain = await load();
    if (plain.byteLength < threshold) return { plain, br: undefined, gzip: undefined, ready: new Set() };
    const ready = new Set<Coding>();
    // Settled either way: a version that could not be made is never sent, and never left unhandled.
    const done = (coding: Coding) => (made: Promise<Buffer>) =>
      made.then(
        (bytes) => {
          ready.add(coding);
          return bytes;
        },
        () => {
          ready.add(coding);
          return undefined;
        },
      );
    return {
      plain,
      br: done("br")(
        brotliAsync(plain, {
          ...MAX_BROTLI,
          params: { ...MAX_BROTLI.params, [constants.BROTLI_PARAM_SIZE_HINT]: plain.byteLength },
        }),
      ),
      gzip: done("gzip")(gzipAsync(plain, MAX_GZIP)),
      ready,
    };
  };
  return async (acceptEncoding) => {
    versions ??= make().catch((error: unknown) => {
      versions = undefined; // a failed read is tried again on the next request
      throw error;
    });
    const { plain, br, gzip: gz, ready } = await versions;
    if (!br || !gz) {
      const sent = new Headers(headers);
      sent.set("content-length", String(plain.byteLength));
      return new Response(plain as Uint8Array<ArrayBuffer>, { headers: sent });
    }
    let coding = preferredCoding(acceptEncoding, ["br", "gzip"]);
    // Brotli still being made: gzip now rather than a wait of seconds, when the client takes it.
    if (coding === "br" && !ready.has("br") && preferredCoding(acceptEncoding, ["gzip"])) coding = "gzip";
    const bytes = coding === "br" ? await br : coding === "gzip" ? await gz : plain;
    return bytes ? encodedResponse(bytes, coding, headers) : encodedResponse(plain, undefined, headers);
  };
}
