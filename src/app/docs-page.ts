// The API reference page: Scalar's standalone bundle, served from its npm package (no CDN), reading
// the app's own OpenAPI document. Opt-in (`crudkit({ docs: true })`), since the bundle is an
// optional dependency of several megabytes. The package's file has no build step of ours, so it is
// compressed (brotli 11, gzip 9) the first time it is asked and kept in memory, all three versions,
// for the process; each request gets the one its Accept-Encoding takes (src/admin/precompressed.ts).

import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { compressedOnce } from "../admin/precompressed.ts";
import type { Endpoint } from "../core/endpoint.ts";
import { ConfigError } from "../core/errors.ts";

const PACKAGE = "@scalar/api-reference";

/** The page's own scripts only; Scalar styles itself inline, and calls nothing but this API. */
const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'self'";

/**
 * The page works offline and talks to this API only: none of the hosted Scalar services' controls
 * (Ask AI, MCP, the developer toolbar with Share and Deploy, "Open API Client"), no telemetry, no
 * fonts from a CDN, and requests sent straight to the API (no proxy).
 */
const SCALAR_CONFIGURATION = {
  withDefaultFonts: false,
  hideClientButton: true,
  telemetry: false,
  agent: { disabled: true },
  mcp: { disabled: true },
  showDeveloperTools: "never",
  showToolbar: "never",
  // Its services' addresses, which the page would otherwise call for the features turned off
  // above: pointed nowhere, so nothing can reach them.
  externalUrls: { dashboardUrl: "", registryUrl: "", proxyUrl: "", apiBaseUrl: "" },
};

/** `GET <basePath>/docs` and the script it loads, `GET <basePath>/docs/scalar.js`. */
export function docsEndpoints(basePath: string, from = import.meta.url): Endpoint[] {
  const script = standaloneBundle(from);
  // Scalar reads its configuration from this element; no inline script runs (see CSP).
  // The document's `servers` names the origin the API saw (a proxy may have rewritten it); the
  // page sends its requests to its own origin, which the browser reached and its CSP allows.
  const configuration = JSON.stringify({
    ...SCALAR_CONFIGURATION,
    servers: [{ url: basePath || "/" }],
  }).replace(/'/g, "&#39;");
  const html = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>API reference</title>
  </head>
  <body>
    <script id="api-reference" data-url="${basePath}/openapi.json" data-configuration='${configuration}'></script>
    <script src="${basePath}/docs/scalar.js"></script>
  </body>
</html>
`;
  // Compressed when it is over 1 KiB (a long basePath or configuration), else sent as it is.
  const page = compressedOnce(async () => Buffer.from(html), {
    "content-type": "text/html; charset=utf-8",
    "content-security-policy": CSP,
    "x-content-type-options": "nosniff",
  });
  const bundle = compressedOnce(() => readFile(script), {
    "content-type": "text/javascript; charset=utf-8",
    "cache-control": "public, max-age=86400",
    "x-content-type-options": "nosniff",
  });
  return [
    {
      method: "GET",
      path: "/docs",
      doc: {
        summary: "The API reference page (HTML)",
        tags: ["meta"],
        public: true,
        unlisted: true,
        response: { type: "string" },
      },
      handler: async (ctx) => page(ctx.headers.get("accept-encoding")),
    },
    {
      method: "GET",
      path: "/docs/scalar.js",
      doc: {
        summary: "The reference page's script",
        tags: ["meta"],
        public: true,
        unlisted: true,
        response: "binary",
      },
      handler: async (ctx) => bundle(ctx.headers.get("accept-encoding")),
    },
  ];
}

function standaloneBundle(from: string): string {
  let entry: string;
  try {
    entry = createRequire(from).resolve(PACKAGE);
  } catch {
    throw new ConfigError(`docs: true serves the reference page from ${PACKAGE}: npm install ${PACKAGE}`);
  }
  // The package exports no path to its browser bundle; it sits beside its entry, under dist/.
  let dir = dirname(entry);
  while (!existsSync(join(dir, "browser", "standalone.js")) && dirname(dir) !== dir) dir = dirname(dir);
  const bundle = join(dir, "browser", "standalone.js");
  if (!existsSync(bundle)) throw new ConfigError(`docs: ${PACKAGE} has no browser/standalone.js; update it.`);
  return bundle;
}
