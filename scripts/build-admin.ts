// Builds the admin page (src/admin/ui/) into dist/admin/: one script and one style sheet, minified,
// with their content's hash in their names, and manifest.json naming them for the server
// (src/admin/assets.ts). `npm run build`, `npm start` and `npm test` run it; it prints the sizes.
//   --check: fail when the page's first load passes its budget (60 KB gzip), as `npm run size` does.

import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { build } from "esbuild";

const root = fileURLToPath(new URL("..", import.meta.url));
const out = join(root, "dist", "admin");
/** What the first page load transfers, script and style sheet, gzip: PocketBase's is 209 KB. */
export const ADMIN_BUDGET = 60 * 1024;

export async function buildAdmin(): Promise<{ files: string[]; gzipped: number }> {
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
  writeFileSync(join(out, "manifest.json"), `${JSON.stringify({ script, style, files }, null, 2)}\n`);
  const gzipped = files.reduce((sum, f) => sum + gzipSync(readFileSync(join(out, f))).length, 0);
  return { files, gzipped };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { files, gzipped } = await buildAdmin();
  console.log(`admin page: ${files.join(", ")}: ${gzipped} B gzip (budget ${ADMIN_BUDGET} B)`);
  if (process.argv.includes("--check") && gzipped > ADMIN_BUDGET) {
    console.error("the admin page's first load is over its budget");
    process.exitCode = 1;
  }
}
