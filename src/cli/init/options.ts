// `crudkit init`'s choices, checked before anything is asked or written: the database, the
// plugins, the target directory and where crudkit-api comes from.

import { isAbsolute, resolve, sep } from "node:path";
import { CliError } from "../load-config.ts";

export const DATABASES = ["sqlite", "postgres", "mysql"] as const;
export type DatabaseChoice = (typeof DATABASES)[number];

/** The plugins init offers, in the order they are offered, with the line that says what each does. */
export const PLUGINS = {
  audit: "an audit log: who changed what, written in the change's own transaction",
  cache: "a read cache in memory, per caller, emptied by every write",
  "rate-limit": "at most 100 requests a minute per caller and operation",
  idempotency: "an Idempotency-Key header makes a retried create answer as the first did",
} as const;
export type PluginChoice = keyof typeof PLUGINS;
export const PLUGIN_NAMES = Object.keys(PLUGINS) as PluginChoice[];

/** What the command line gave, as commander parsed it. */
export interface InitFlags {
  yes?: boolean;
  database?: string;
  plugins?: string;
  force?: boolean;
  /** false with --no-install. */
  install?: boolean;
  from?: string;
}

export interface InitChoices {
  database: DatabaseChoice;
  plugins: PluginChoice[];
}

/** Usage mistakes exit 2, as commander's own do not: scripts can tell them from a refusal (1). */
const usage = (message: string) => new CliError(message, 2);

export function parseDatabase(value: string): DatabaseChoice {
  const name = value.trim().toLowerCase();
  if ((DATABASES as readonly string[]).includes(name)) return name as DatabaseChoice;
  const hint = name === "mariadb" ? ' (MariaDB is "mysql")' : name === "postgresql" ? ' ("postgres")' : "";
  throw usage(`--database must be one of ${DATABASES.join(", ")}, not ${JSON.stringify(value)}${hint}.`);
}

/** A comma-separated list of plugin names; "" and "none" are no plugin. Unknown names are refused. */
export function parsePlugins(value: string): PluginChoice[] {
  const names = value
    .split(",")
    .map((name) => name.trim().toLowerCase())
    .filter((name) => name !== "" && name !== "none");
  const unknown = names.filter((name) => !(name in PLUGINS));
  if (unknown.length > 0)
    throw usage(
      `--plugins: unknown plugin ${unknown.map((n) => JSON.stringify(n)).join(", ")}: choose from ${PLUGIN_NAMES.join(", ")} (comma-separated), or none.`,
    );
  return PLUGIN_NAMES.filter((name) => names.includes(name));
}

/** Longest file name most file systems take, in bytes. */
const MAX_NAME_BYTES = 255;

/**
 * The directory to write, absolute. Refuses what no file system would take (a NUL byte, a name
 * over 255 bytes) before anything is written, so the refusal is a sentence rather than an errno.
 */
export function targetDirectory(dir: string, cwd: string): string {
  if (dir.includes("\0")) throw usage("The directory name contains a NUL byte.");
  if (dir.trim() === "") throw usage("The directory name is empty: leave it out for this directory.");
  const path = isAbsolute(dir) ? resolve(dir) : resolve(cwd, dir);
  const long = path.split(sep).find((part) => Buffer.byteLength(part) > MAX_NAME_BYTES);
  if (long !== undefined)
    throw usage(
      `The directory name ${JSON.stringify(`${long.slice(0, 40)}…`)} is ${Buffer.byteLength(long)} bytes long: file systems take at most ${MAX_NAME_BYTES}.`,
    );
  return path;
}
