// Builds the admin page (src/admin/ui/) into dist/admin/: one script and one style sheet, minified,
// with their content's hash in their names, and manifest.json naming them for the server
// (src/admin/assets.ts). Beside each compressible file (js, css, svg, html, json) it writes
// `<file>.br` (brotli, quality 11) and `<file>.gz` (gzip, level 9), listed in the manifest's
// `compressed`, which the server sends to a client that takes them: compressed once, here, at the
// highest settings, never per request. `npm run build`, `npm start` and `npm test` run it; it
// prints the sizes.
//   --check: fail when the page's first load passes its budget (60 KB gzip), as `npm run size` does.

import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { fileURLToPath } from "node:url";
import { brotliCompressSync, constants, gzipSync } from "node:zlib";
import { build } from "esbuild";

const root = fileURLToPath(new URL("..", import.meta.url));
const out = join(root, "dist", "admin");
/** What the first page load transfers, script and style sheet, gzip: PocketBase's is 209 KB. */
export const ADMIN_BUDGET = 60 * 1024;

/** The extensions worth compressing (as src/admin/precompressed.ts's COMPRESSIBLE_TYPES). */
const COMPRESSIBLE = /\.(?:js|css|svg|html|json)$/;

/** One built file's size in bytes: as it is, and in each version written beside it. */
export interface BuiltSize {
  file: string;
  plain: number;
  br?: number;
  gz?: number;
}

/**
 * Writes `<file>.br` and `<file>.gz` beside a compressible file, each only when smaller than the
 * file itself; returns the versions written and the sizes.
 */
function writeCompressed(file: string): { written: ("br" | "gz")[]; size: BuiltSize } {
  const plain = readFileSync(join(out, file));
  const size: BuiltSize = { file, plain: plain.byteLength };
  if (!COMPRESSIBLE.test(file)) return { written: [], size };
  const versions = {
    br: brotliCompressSync(plain, {
      params: {
        [constants.BROTLI_PARAM_QUALITY]: constants.BROTLI_MAX_QUALITY,
        [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
        [constants.BROTLI_PARAM_SIZE_HINT]: plain.byteLength,
      },
    }),
    gz: gzipSync(plain, { level: constants.Z_BEST_COMPRESSION }),
  };
  const written: ("br" | "gz")[] = [];
  for (const suffix of ["br", "gz"] as const) {
    const bytes = versions[suffix];
    if (bytes.byteLength >= plain.byteLength) continue;
    writeFileSync(join(out, `${file}.${suffix}`), bytes);
    size[suffix] = bytes.byteLength;
    written.push(suffix);
  }
  return { written, size };
}

export async function buildAdmin(): Promise<{ files: string[]; gzipped: number; sizes: BuiltSize[] }> {
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  const result = await build({
    entryPoints: [join(root, "src/admin/ui/main.ts"), join(root, "src/admin/ui/admin.css")],
    bundle: true,
    minify: true,
    format: "esm",
    target: "es2022",
    outdir: out,
    entryNames: "[name]-[hash]",
    metafile: true,
    legalComments: "none",
    logLevel: "warning",
  });
  const files = Object.keys(result.metafile.outputs).map((path) => basename(path));
  const script = files.find((f) => f.endsWith(".js"));
  const style = files.find((f) => f.endsWith(".css"));
  if (!script || !style) throw new Error("the admin build made no script or no style sheet");
  const compressed: Record<string, ("br" | "gz")[]> = {};
  const sizes: BuiltSize[] = [];
  for (const file of files) {
    const { written, size } = writeCompressed(file);
    if (written.length > 0) compressed[file] = written;
    sizes.push(size);
  }
  // `files` stays the list of names a request may ask for: the versions are reached through it.
  writeFileSync(
    join(out, "manifest.json"),
    `${JSON.stringify({ script, style, files, compressed }, null, 2)}\n`,
  );
  // What a browser that takes only gzip transfers (one that takes brotli gets less).
  const gzipped = sizes.reduce((sum, s) => sum + (s.gz ?? s.plain), 0);
  return { files, gzipped, sizes };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { files, gzipped, sizes } = await buildAdmin();
  console.log(`admin page: ${files.join(", ")}: ${gzipped} B gzip (budget ${ADMIN_BUDGET} B)`);
  for (const { file, plain, br, gz } of sizes)
    console.log(`  ${file}: ${plain} B plain, ${br ?? "-"} B br, ${gz ?? "-"} B gz`);
  if (process.argv.includes("--check") && gzipped > ADMIN_BUDGET) {
    console.error("the admin page's first load is over its budget");
    process.exitCode = 1;
  }
}
