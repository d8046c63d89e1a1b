// Finds crudkit.config.{ts,mts,js,mjs} and loads it without a build step (jiti), returning the
// app it exports as default or as `app`.

import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { createJiti } from "jiti";
import { type AppInternals, internalsOf } from "../app/internals.ts";

export const CONFIG_NAMES = [
  "crudkit.config.ts",
  "crudkit.config.mts",
  "crudkit.config.js",
  "crudkit.config.mjs",
];

/** A problem the user can fix, shown without a stack; `exitCode` says which kind. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
  }
}

export interface LoadedApp {
  path: string;
  app: { close(): Promise<void>; ready: Promise<void> };
  internals: AppInternals;
}

export async function loadConfig(explicit: string | undefined, cwd = process.cwd()): Promise<LoadedApp> {
  const path = explicit
    ? resolve(cwd, explicit)
    : CONFIG_NAMES.map((name) => resolve(cwd, name)).find((p) => existsSync(p));
  if (!path)
    throw new CliError(
      `No crudkit config found in ${cwd}: create one of ${CONFIG_NAMES.join(", ")}, or pass --config PATH.`,
    );
  if (!existsSync(path)) throw new CliError(`The config file ${path} does not exist.`);
  let module: Record<string, unknown>;
  try {
    module = (await jitiFor(path).import(path)) as Record<string, unknown>;
  } catch (error) {
    throw new CliError(`Could not load ${path}: ${(error as Error).message}`);
  }
  for (const candidate of [module.default, module.app]) {
    const internals = internalsOf(candidate);
    if (internals) return { path, app: candidate as LoadedApp["app"], internals };
  }
  throw new CliError(
    `${path} does not export a crudkit app: export it as default or as "app" (export const app = crudkit({ … })).`,
  );
}

/** Run from source (this repository), configs importing "crudkit" get the source too. */
function jitiFor(path: string) {
  const here = fileURLToPath(import.meta.url);
  if (!here.endsWith(".ts")) return createJiti(path);
  const src = resolve(here, "../..");
  return createJiti(path, {
    alias: {
      "crudkit-api/client": resolve(src, "client/index.ts"),
      "crudkit-api/node": resolve(src, "node/index.ts"),
      "crudkit-api/plugins": resolve(src, "plugins/index.ts"),
      "crudkit-api/storage/s3": resolve(src, "storage/s3/index.ts"),
      "crudkit-api": resolve(src, "index.ts"),
    },
  });
}
