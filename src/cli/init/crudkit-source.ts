// Where the project gets crudkit-api: from npm (`^<this version>`, the default), or, until it is
// published there, from a tarball (`npm pack`) or a checkout given to --from. Either way the
// tarball is copied into the project's vendor/ and named as a `file:` dependency, so the project
// installs anywhere, from its own files.

import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join, resolve } from "node:path";
import { CliError } from "../load-config.ts";
import { childEnv } from "./install.ts";

export interface CrudkitSource {
  /** The dependency as package.json takes it. */
  dependency: string;
  /** The tarball to write into the project, when there is one. */
  vendored?: { path: string; content: Uint8Array };
}

/** Checks --from before anything is asked or written (exit 2 when it names nothing usable). */
export function checkFrom(from: string | undefined, cwd: string): string | undefined {
  if (from === undefined) return undefined;
  if (from.includes("\0")) throw new CliError("--from contains a NUL byte.", 2);
  const path = resolve(cwd, from);
  if (!existsSync(path))
    throw new CliError(
      `--from ${from}: no such file or directory. Give a tarball made by npm pack, or a crudkit-api checkout.`,
      2,
    );
  if (statSync(path).isDirectory()) {
    const manifest = join(path, "package.json");
    const name = existsSync(manifest) ? packageName(readFileSync(manifest, "utf8")) : undefined;
    if (name !== "crudkit-api")
      throw new CliError(
        `--from ${from}: the directory is not a crudkit-api checkout (no package.json named crudkit-api).`,
        2,
      );
  } else if (!isGzip(readFileSync(path))) {
    throw new CliError(`--from ${from}: not a gzipped tarball (make one with npm pack).`, 2);
  }
  return path;
}

const isGzip = (content: Uint8Array) => content[0] === 0x1f && content[1] === 0x8b;

/** The dependency for the project; packs a checkout first (npm pack builds it: this can take a while). */
export function crudkitSource(
  from: string | undefined,
  version: string,
  print: (line: string) => void,
): CrudkitSource {
  if (from === undefined) return { dependency: `^${version}` };
  const { name, content } = statSync(from).isDirectory()
    ? packCheckout(from, print)
    : { name: tarballName(from), content: readFileSync(from) };
  if (!isGzip(content)) throw new CliError(`npm pack in ${from} made no gzipped tarball.`);
  return { dependency: `file:vendor/${name}`, vendored: { path: `vendor/${name}`, content } };
}

/** The tarball's own name when it is a plain file name, since it ends up in a `file:` spec. */
function tarballName(path: string): string {
  const name = basename(path);
  return /^[\w.-]+\.(tgz|tar\.gz)$/.test(name) && !name.startsWith(".") ? name : "crudkit-api.tgz";
}

function packCheckout(dir: string, print: (line: string) => void): { name: string; content: Buffer } {
  print(`packing crudkit-api from ${dir} (npm pack: builds it first)…`);
  const out = mkdtempSync(join(tmpdir(), "crudkit-init-pack-"));
  try {
    const result = spawnSync("npm", ["pack", "--silent", "--pack-destination", out], {
      cwd: dir,
      encoding: "utf8",
      env: childEnv(process.env),
      stdio: ["ignore", "pipe", "inherit"],
      shell: process.platform === "win32",
    });
    const packed = readdirSync(out).find((name) => name.endsWith(".tgz"));
    if (result.status !== 0 || !packed)
      throw new CliError(
        `npm pack failed in ${dir}: run npm install there first (the build needs its dev dependencies). Nothing was written.`,
      );
    return { name: tarballName(packed), content: readFileSync(join(out, packed)) };
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

/** The `name` of a package.json's text; undefined when it is not JSON. */
function packageName(text: string): unknown {
  try {
    return JSON.parse(text)?.name;
  } catch {
    return undefined;
  }
}
