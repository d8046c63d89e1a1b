#!/usr/bin/env node
// The `crudkit` command: the built CLI when present, otherwise the TypeScript source through jiti
// (inside this repository, before `npm run build`).

import { existsSync } from "node:fs";

const built = new URL("../dist/cli/main.mjs", import.meta.url);
if (existsSync(built)) {
  await import(built.href);
} else {
  const { createJiti } = await import("jiti");
  await createJiti(import.meta.url).import("../src/cli/main.ts");
}
