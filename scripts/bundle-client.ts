// Bundles crudkit-api/client for browsers, minified, the way an app's bundler would. Used by
// `npm run size`, by the example server (which serves it at /client.js) and by the tests.

import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { build } from "esbuild";

export interface ClientBundle {
  code: string;
  /** Bytes minified, and minified + gzip. */
  minified: number;
  gzipped: number;
  /** Every source file that went into the bundle, relative to the repository. */
  inputs: string[];
}

export async function bundleClient(): Promise<ClientBundle> {
  const entry = fileURLToPath(new URL("../src/client/index.ts", import.meta.url));
  const result = await build({
    entryPoints: [entry],
    bundle: true,
    minify: true,
    format: "esm",
    platform: "browser",
    target: "es2022",
    write: false,
    metafile: true,
    logLevel: "silent",
  });
  const code = result.outputFiles[0]!.text;
  return {
    code,
    minified: Buffer.byteLength(code),
    gzipped: gzipSync(code, { level: 9 }).length,
    inputs: Object.keys(result.metafile.inputs),
  };
}
