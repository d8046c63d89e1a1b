// The example's web side: `/` serves public/index.html, `/client.js` the browser bundle of
// crudkit-api/client, and `/uploads/<name>` the upload directory as static files (the spec leaves
// that to the host; it is unprotected, as docs/plugins/upload.md explains). Everything else goes to the API.

import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { readFile, stat } from "node:fs/promises";
import { extname, join } from "node:path";
import { Readable } from "node:stream";
import { assertPlainName, type ConnectionInfo } from "crudkit-api";
import { bundleClient } from "../scripts/bundle-client.ts";

const STATIC_TYPES: Record<string, string> = {
  ".png": "image/png",
  ".jpg": "image/jpeg",
  ".jpeg": "image/jpeg",
  ".gif": "image/gif",
  ".webp": "image/webp",
  ".pdf": "application/pdf",
  ".txt": "text/plain; charset=utf-8",
};

export async function withSite(
  app: {
    handler: (request: Request, info?: ConnectionInfo) => Promise<Response>;
    ready: Promise<void>;
    retryStartup(): Promise<void>;
    reserveConnections(maxConnections: number): void;
    endStreams(): Promise<void>;
    close(): Promise<void>;
  },
  uploadDir: string,
) {
  const page = await readFile(new URL("./public/index.html", import.meta.url), "utf8");
  const { code } = await bundleClient();
  const pageHeaders = { "content-type": "text/html; charset=utf-8", ...securityHeaders(page) };
  const scriptHeaders = { "content-type": "text/javascript; charset=utf-8", ...securityHeaders("") };
  return {
    ready: app.ready,
    retryStartup: () => app.retryStartup(),
    reserveConnections: (maxConnections: number) => app.reserveConnections(maxConnections),
    endStreams: () => app.endStreams(),
    // serve().close() closes the app once requests have drained.
    close: () => app.close(),
    handler(request: Request, info?: ConnectionInfo): Promise<Response> {
      // A slice, not new URL(): this runs in front of every API request the benchmark sends.
      const url = request.url;
      const path = url.slice(url.indexOf("/", url.indexOf("://") + 3));
      if (path === "/") return Promise.resolve(new Response(page, { headers: pageHeaders }));
      if (path === "/client.js") {
        return Promise.resolve(new Response(code, { headers: scriptHeaders }));
      }
      if (path.startsWith("/uploads/") && request.method === "GET")
        return staticUpload(uploadDir, path.slice("/uploads/".length));
      return app.handler(request, info);
    },
  };
}

/**
 * What the page's answers carry: a Content-Security-Policy that runs only this origin's scripts
 * and the page's own inline script and style (by their hashes), loads nothing from elsewhere and
 * may not be framed; `nosniff`; no referrer.
 */
function securityHeaders(page: string): Record<string, string> {
  const hashes = (tag: string) =>
    [...page.matchAll(new RegExp(`<${tag}[^>]*>([\\s\\S]*?)</${tag}>`, "g"))]
      .map((m) => `'sha256-${createHash("sha256").update(m[1]!).digest("base64")}'`)
      .join(" ");
  return {
    "content-security-policy": [
      "default-src 'self'",
      `script-src 'self' ${hashes("script")}`.trim(),
      `style-src 'self' ${hashes("style")}`.trim(),
      "img-src 'self' data: blob:",
      "object-src 'none'",
      "base-uri 'none'",
      "form-action 'self'",
      "frame-ancestors 'none'",
    ].join("; "),
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
  };
}

/** A stored file, streamed, with `nosniff` so a browser never runs it as something else. */
async function staticUpload(uploadDir: string, encodedName: string): Promise<Response> {
  const notFound = () =>
    new Response('{"code":"NOT_FOUND","message":"No such file."}', {
      status: 404,
      headers: { "content-type": "application/json" },
    });
  let name: string;
  try {
    name = decodeURIComponent(encodedName);
    assertPlainName(name);
  } catch {
    return notFound();
  }
  const file = join(uploadDir, name);
  const info = await stat(file).catch(() => undefined);
  if (!info?.isFile() || name.startsWith(".")) return notFound();
  return new Response(Readable.toWeb(createReadStream(file)) as ReadableStream, {
    headers: {
      "content-type": STATIC_TYPES[extname(name).toLowerCase()] ?? "application/octet-stream",
      "content-length": String(info.size),
      "x-content-type-options": "nosniff",
    },
  });
}
