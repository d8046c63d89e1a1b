// The admin's built files (dist/admin/, made by scripts/build-admin.ts when the package is built):
// found from this module's place in the package, listed by their manifest, and served by name only
// from that list, with hashed names cached for good. Each compressible file has its `.br` and `.gz`
// beside it (the manifest's `compressed`), sent to a client whose Accept-Encoding takes them.

import { existsSync, readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { APIError, ConfigError } from "../core/errors.ts";
import { COMPRESSIBLE_TYPES, type Coding, encodedResponse, preferredCoding } from "./precompressed.ts";

/** What scripts/build-admin.ts writes to dist/admin/manifest.json. */
export interface AdminManifest {
  /** The page's script and style sheet, by their hashed names. */
  script: string;
  style: string;
  /** Every file the page may ask for. */
  files: readonly string[];
  /**
   * The compressed versions the build wrote beside a file (`<file>.br`, `<file>.gz`), by the
   * file's name. Absent from a manifest written before there were any: every file is sent plain.
   */
  compressed?: Readonly<Record<string, readonly ("br" | "gz")[]>>;
}

/** A version's file suffix, by its coding. */
const SUFFIX: Readonly<Record<Coding, "br" | "gz">> = { br: "br", gzip: "gz" };

/** The built files: their manifest, and each one's bytes on request. */
export interface AdminAssets {
  manifest: AdminManifest;
  /**
   * The file `name` (one the build made), compressed when `headers` (the request's) has an
   * Accept-Encoding that takes a version the build wrote.
   */
  serve(name: string, headers?: Headers): Promise<Response>;
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
    async serve(name, requestHeaders) {
      // Only names the build made: nothing else on the disk is reachable from here.
      if (!known.has(name)) throw new APIError("NOT_FOUND", "No such admin file.");
      const type = COMPRESSIBLE_TYPES[name.slice(name.lastIndexOf(".") + 1)];
      const headers = {
        "content-type": type ?? "application/octet-stream",
        // Hashed names: a new build makes new names, so a browser may keep these for good.
        "cache-control": "public, max-age=31536000, immutable",
        "x-content-type-options": "nosniff",
      };
      if (!type) {
        const body = await readFile(join(dir, name));
        return new Response(body, { headers: { ...headers, "content-length": String(body.byteLength) } });
      }
      const written = manifest.compressed?.[name] ?? [];
      const offered = (["br", "gzip"] as const).filter((coding) => written.includes(SUFFIX[coding]));
      const coding = preferredCoding(requestHeaders?.get("accept-encoding") ?? null, offered);
      // A version the manifest lists but the disk lost (a partial copy): the plain file instead.
      const version =
        coding && (await readFile(join(dir, `${name}.${SUFFIX[coding]}`)).catch(() => undefined));
      if (coding && version) return encodedResponse(version, coding, headers);
      return encodedResponse(await readFile(join(dir, name)), undefined, headers);
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
