// The example's web side: `/` serves public/index.html, `/client.js` the browser bundle of
// crudkit-api/client, and `/uploads/<name>` the upload directory as static files (the spec leaves
// that to the host; it is unprotected, as the README explains). Everything else goes to the API.

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
    close(): Promise<void>;
  },
  uploadDir: string,
) {
  const page = await readFile(new URL("./public/index.html", import.meta.url), "utf8");
  const { code } = await bundleClient();
  return {
    ready: app.ready,
    retryStartup: () => app.retryStartup(),
    // serve().close() closes the app once requests have drained.
    close: () => app.close(),
    handler(request: Request, info?: ConnectionInfo): Promise<Response> {
      // A slice, not new URL(): this runs in front of every API request the benchmark sends.
      const url = request.url;
      const path = url.slice(url.indexOf("/", url.indexOf("://") + 3));
      if (path === "/")
        return Promise.resolve(
          new Response(page, { headers: { "content-type": "text/html; charset=utf-8" } }),
        );
      if (path === "/client.js") {
        return Promise.resolve(
          new Response(code, { headers: { "content-type": "text/javascript; charset=utf-8" } }),
        );
      }
      if (path.startsWith("/uploads/") && request.method === "GET")
        return staticUpload(uploadDir, path.slice("/uploads/".length));
      return app.handler(request, info);
    },
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
