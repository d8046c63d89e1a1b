// The admin's built files (dist/admin/, made by scripts/build-admin.ts when the package is built):
// found from this module's place in the package, listed by their manifest, and served by name only
// from that list, with hashed names cached for good.

import { existsSync, readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { APIError, ConfigError } from "../core/errors.ts";

/** What scripts/build-admin.ts writes to dist/admin/manifest.json. */
export interface AdminManifest {
  /** The page's script and style sheet, by their hashed names. */
  script: string;
  style: string;
  /** Every file the page may ask for. */
  files: readonly string[];
}

const TYPES: Readonly<Record<string, string>> = {
  js: "text/javascript; charset=utf-8",
  css: "text/css; charset=utf-8",
  svg: "image/svg+xml",
};

/** The built files: their manifest, and each one's bytes on request. */
export interface AdminAssets {
  manifest: AdminManifest;
  serve(name: string): Promise<Response>;
}

/**
 * The admin's files in the package this module belongs to. Throws a ConfigError naming the
 * command when they are not built (a checkout that never ran `npm run build`).
 */
export function adminAssets(from = import.meta.url): AdminAssets {
  const dir = join(packageRoot(fileURLToPath(from)), "dist", "admin");
  const manifestPath = join(dir, "manifest.json");
  if (!existsSync(manifestPath))
    throw new ConfigError(
      "admin: the admin page's files are not built (dist/admin/manifest.json is missing): run npm run build.",
    );
  const manifest = JSON.parse(readFileSync(manifestPath, "utf8")) as AdminManifest;
  const known = new Set(manifest.files);
  return {
    manifest,
    async serve(name) {
      // Only names the build made: nothing else on the disk is reachable from here.
      if (!known.has(name)) throw new APIError("NOT_FOUND", "No such admin file.");
      const body = await readFile(join(dir, name));
      return new Response(body, {
        headers: {
          "content-type": TYPES[name.slice(name.lastIndexOf(".") + 1)] ?? "application/octet-stream",
          // Hashed names: a new build makes new names, so a browser may keep these for good.
          "cache-control": "public, max-age=31536000, immutable",
          "x-content-type-options": "nosniff",
        },
      });
    },
  };
}

/** The nearest directory above `file` whose package.json names this package. */
function packageRoot(file: string): string {
  for (let dir = dirname(file); ; dir = dirname(dir)) {
    const manifest = join(dir, "package.json");
    if (
      existsSync(manifest) &&
      (JSON.parse(readFileSync(manifest, "utf8")) as { name?: string }).name === "crudkit-api"
    )
      return dir;
    if (dirname(dir) === dir)
      throw new ConfigError("admin: cannot find the crudkit-api package around its own files.");
  }
}
