// A project directory for a CLI test: under the repository (test/.cli-work), so an app.config.ts
// there imports crudkit-api from this repository, with a runner that starts the CLI from source
// (bin/crudkit.mjs would run a stale build when dist/ exists). Removed when the file's tests end.

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll } from "vitest";

const root = new URL("..", import.meta.url).pathname;
const work = join(root, "test/.cli-work");
const made: string[] = [];
afterAll(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** The runner's file name in each project: `node <dir>/run-cli.mjs <command…>`. */
export const CLI_RUNNER = "run-cli.mjs";

/** A new project directory, named from `prefix`, with the CLI runner in it. */
export function cliWorkDir(prefix: string): string {
  mkdirSync(work, { recursive: true });
  const dir = mkdtempSync(join(work, `${prefix}-`));
  made.push(dir);
  writeFileSync(
    join(dir, CLI_RUNNER),
    `import { createJiti } from "jiti";\nawait createJiti(import.meta.url).import(${JSON.stringify(join(root, "src/cli/main.ts"))});\n`,
  );
  return dir;
}
