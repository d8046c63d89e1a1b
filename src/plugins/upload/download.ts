// The download response: streamed from storage, never read whole; ETag and If-None-Match (304);
// Range (206, or 416 when unsatisfiable); an attachment with a safe RFC 6266 filename; nosniff.

import { APIError } from "../../core/errors.ts";
import type { ByteRange, StorageAdapter } from "../../storage/adapter.ts";

export interface DownloadTarget {
  id: string;
  path: string;
  originalName: string;
  mimeType: string;
  size: number;
}

export async function downloadResponse(
  storage: StorageAdapter,
  file: DownloadTarget,
  headers: Headers,
  method = "GET",
): Promise<Response> {
  const etag = `"${file.id}-${file.size}"`;
  const common: Record<string, string> = {
    etag,
    "accept-ranges": "bytes",
    "x-content-type-options": "nosniff",
    "content-disposition": contentDisposition(file.originalName),
    "cache-control": "private, no-cache",
  };
  if (matches(headers.get("if-none-match"), etag))
    return new Response(null, { status: 304, headers: common });
  const range = parseRange(headers.get("range"), file.size);
  if (range === "unsatisfiable") {
    throw new APIError(
      "RANGE_NOT_SATISFIABLE",
      `The requested range is outside the file's ${file.size} bytes.`,
      {
        headers: { "content-range": `bytes */${file.size}` },
      },
    );
  }
  const length = range ? range.end - range.start + 1 : file.size;
  // HEAD: the headers a GET would send, without reading the file from storage.
  const stream = method === "HEAD" ? null : await open(storage, file.path, range);
  return new Response(stream, {
    status: range ? 206 : 200,
    headers: {
      ...common,
      "content-type": file.mimeType,
      "content-length": String(length),
      ...(range ? { "content-range": `bytes ${range.start}-${range.end}/${file.size}` } : {}),
    },
  });
}

async function open(
  storage: StorageAdapter,
  path: string,
  range: ByteRange | undefined,
): Promise<ReadableStream<Uint8Array>> {
  if (storage.read) {
    const read = await storage.read(path, range);
    if (!read) throw new APIError("NOT_FOUND", "The file's content is missing from storage.");
    return read.body;
  }
  // An adapter without streaming: the contract's retrieve, sliced.
  const bytes = await storage.retrieve(path);
  const part = range ? bytes.subarray(range.start, range.end + 1) : bytes;
  return new Blob([Uint8Array.from(part)]).stream() as ReadableStream<Uint8Array>;
}

/** `bytes=0-99`, `bytes=100-`, `bytes=-50`. Several ranges or a malformed header: the whole file. */
export function parseRange(header: string | null, size: number): ByteRange | undefined | "unsatisfiable" {
  if (!header) return undefined;
  const match = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!match || (match[1] === "" && match[2] === "")) return undefined;
  let start: number;
  let end: number;
  if (match[1] === "") {
    const suffix = Number(match[2]);
    if (suffix === 0) return "unsatisfiable";
    start = Math.max(0, size - suffix);
    end = size - 1;
  } else {
    start = Number(match[1]);
    end = match[2] === "" ? size - 1 : Math.min(Number(match[2]), size - 1);
    if (match[2] !== "" && Number(match[2]) < start) return undefined;
  }
  if (start >= size || size === 0) return "unsatisfiable";
  return { start, end };
}

function matches(ifNoneMatch: string | null, etag: string): boolean {
  if (!ifNoneMatch) return false;
  return ifNoneMatch.split(",").some((tag) => {
    const t = tag.trim();
    return t === "*" || t === etag || t === `W/${etag}`;
  });
}

/** An ASCII fallback and the exact name, UTF-8 encoded (RFC 6266, RFC 8187). */
export function contentDisposition(uploadedName: string): string {
  // Only the base name: whatever path the uploader's name carried is not the server's business.
  const name = uploadedName.split(/[/\\]/).pop() || "download";
  const ascii = name.replace(/[^\x20-\x7e]|["\\]/g, "_").slice(0, 200) || "download";
  const exact = encodeURIComponent(name).replace(
    /['()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
  return `attachment; filename="${ascii}"; filename*=UTF-8''${exact}`;
}
