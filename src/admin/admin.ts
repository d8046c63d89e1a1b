// admin(): the admin page, a pure client of the app's public API served from the package's own
// built files. It signs in with the caller's own credentials, learns the resources from the
// OpenAPI document and what she may do from `GET /admin/permissions` (her rules, through
// app.can()), and calls the same endpoints any client calls: it can do nothing the API would
// refuse her.

import type { CrudkitPlugin, PluginContext } from "../core/plugin.ts";
import { adminAssets } from "./assets.ts";
import { recordPermissions, resourcePermissions } from "./permissions.ts";

export interface AdminOptions {
  /** Where the page is, under the app's basePath. @default "/admin" */
  path?: string;
  /** The page's title. @default "crudkit admin" */
  title?: string;
  /**
   * The page's language: `en` or `ar` (Arabic, right to left). Without it, the browser's first
   * language there is a catalog for, else English.
   */
  locale?: "en" | "ar";
}

/** Scripts and styles of this origin only, no inline code, nothing sent elsewhere. */
export const ADMIN_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; connect-src 'self'; " +
  "base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

const escapeAttribute = (text: string) =>
  text.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

/**
 * The admin page at `<basePath>/admin`: `crudkit({ admin: true })` (or `admin: { path, title }`) adds it.
 *
 * @example
 * const app = crudkit({ database, resources: [product], admin: { title: "Shop" } });
 * // open http://localhost:3000/api/admin and sign in with an API key
 */
export function admin(options: AdminOptions = {}): CrudkitPlugin {
  const path = `/${(options.path ?? "/admin").replace(/^\/+|\/+$/g, "")}`;
  const title = options.title ?? "crudkit admin";
  const assets = adminAssets();
  return {
    id: "admin",
    endpoints: (app: PluginContext) => {
      const base = `${app.basePath}${path}`;
      const config = escapeAttribute(
        JSON.stringify({ basePath: app.basePath, adminPath: base, title, locale: options.locale }),
      );
      const page = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <meta name="crudkit-admin" content="${config}" />
    <title>${escapeAttribute(title)}</title>
    <link rel="stylesheet" href="${escapeAttribute(`${base}/assets/${assets.manifest.style}`)}" />
    <script type="module" src="${escapeAttribute(`${base}/assets/${assets.manifest.script}`)}"></script>
  </head>
  <body>
    <div id="admin"></div>
    <noscript>The admin page needs JavaScript.</noscript>
  </body>
</html>
`;
      const meta = { tags: ["admin"], public: true, unlisted: true } as const;
      return [
        {
          method: "GET",
          path,
          doc: { summary: "The admin page (HTML)", ...meta, response: { type: "string" } },
          handler: async () =>
            new Response(page, {
              headers: {
                "content-type": "text/html; charset=utf-8",
                "content-security-policy": ADMIN_CSP,
                "cache-control": "no-cache",
                "x-content-type-options": "nosniff",
                "referrer-policy": "same-origin",
              },
            }),
        },
        {
          method: "GET",
          path: `${path}/assets/:file`,
          doc: { summary: "The admin page's scripts and styles", ...meta, response: "binary" },
          handler: async (ctx) => assets.serve(ctx.params.file ?? "", ctx.headers),
        },
        {
          method: "GET",
          path: `${path}/permissions`,
          doc: {
            summary: "What the caller may do: per resource, or on one record (resource, id, fields)",
            tags: ["admin"],
            query: {
              resource: { type: "string" },
              id: { type: "string", maxLength: 255 },
              fields: { type: "string", description: "Field names, separated by commas" },
            },
            response: { type: "object" },
          },
          handler: async (ctx) =>
            ctx.query.resource === undefined && Object.keys(ctx.query).length === 0
              ? { resources: await resourcePermissions(app, ctx) }
              : recordPermissions(app, ctx),
        },
      ];
    },
  };
}
