// The house plan (ARCHITECTURE.md): the folders of src/ form layers, and value imports only go
// down. The folder graph has no cycle, and Biome refuses an import that goes up: a deliberate one,
// written into a folder for the length of the test, fails `biome lint`.

import { execFileSync } from "node:child_process";
import { rmSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { expect, it } from "vitest";
// @ts-expect-error: a plain .mjs script without types
import { cycles, folderGraph } from "../scripts/folder-graph.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));

it("the folder graph of value imports in src/ has no cycle, and app/ is imported only by the entry points", () => {
  const edges = folderGraph() as Map<string, Map<string, string[]>>;
  expect(cycles(edges)).toEqual([]);
  const intoApp = [...edges].filter(([, targets]) => targets.has("app")).map(([from]) => from);
  expect(intoApp.sort()).toEqual([".", "cli"]);
  // The kernel imports nothing above it.
  expect([...(edges.get("core")?.keys() ?? [])]).toEqual([]);
});

/** Runs `biome lint` on files written for the time of the run (path → text; the first is linted). */
function lint(
  path: string,
  text: string,
  others: Record<string, string> = {},
): { ok: boolean; output: string } {
  const files = { [path]: text, ...others };
  for (const [name, content] of Object.entries(files)) writeFileSync(`${root}${name}`, content);
  try {
    const output = execFileSync("npx", ["biome", "lint", path], {
      cwd: root,
      encoding: "utf8",
      stdio: "pipe",
    });
    return { ok: true, output };
  } catch (error) {
    const { stdout = "", stderr = "" } = error as { stdout?: string; stderr?: string };
    return { ok: false, output: `${stdout}${stderr}` };
  } finally {
    for (const name of Object.keys(files)) rmSync(`${root}${name}`, { force: true });
  }
}

it("lint fails on an import that goes up a layer, and passes the same code one layer up", () => {
  const upward = lint(
    "src/db/layer-fixture.tmp.ts",
    'import { canRead } from "../resource/can.ts";\n\nexport const read = canRead;\n',
  );
  expect(upward.ok).toBe(false);
  expect(upward.output).toContain("noRestrictedImports");
  expect(upward.output).toContain("src/db/ sits below resource/");

  const down = lint(
    "src/realtime/layer-fixture.tmp.ts",
    'import { canRead } from "../resource/can.ts";\n\nexport const read = canRead;\n',
  );
  expect(down.output).not.toContain("noRestrictedImports");
  expect(down.ok).toBe(true);
}, 30_000);

it("lint fails on a file-level import cycle", () => {
  const cycle = lint(
    "src/query/cycle-a.tmp.ts",
    'import { b } from "./cycle-b.tmp.ts";\n\nexport const a = () => b();\n',
    { "src/query/cycle-b.tmp.ts": 'import { a } from "./cycle-a.tmp.ts";\n\nexport const b = () => a();\n' },
  );
  expect(cycle.ok).toBe(false);
  expect(cycle.output).toContain("noImportCycles");
}, 30_000);

it("lint fails on an engine's folder opened outside db/ (the profile is the way in), and passes inside it", () => {
  const outside = lint(
    "src/resource/engine-fixture.tmp.ts",
    'import { sqliteProfile } from "../db/engines/sqlite/profile.ts";\n\nexport const profile = sqliteProfile;\n',
  );
  expect(outside.ok).toBe(false);
  expect(outside.output).toContain("Only src/db/ opens an engine's folder");

  const inside = lint(
    "src/db/engine-fixture.tmp.ts",
    'import { sqliteProfile } from "./engines/sqlite/profile.ts";\n\nexport const profile = sqliteProfile;\n',
  );
  expect(inside.ok).toBe(true);
}, 30_000);

it("realtime is a plugin: crudkit() only adds it for the `realtime` option and shows its hub as app.realtime", async () => {
  const { readFileSync } = await import("node:fs");
  const app = readFileSync(`${root}src/app/app.ts`, "utf8");
  const fromRealtime = [...app.matchAll(/^import (type )?\{([^}]*)\} from "\.\.\/realtime\/([^"]+)";$/gm)];
  // Values: only the plugin's factory; the rest are types of the option and of app.realtime.
  expect(fromRealtime.filter(([, type]) => !type).map(([, , names]) => names?.trim())).toEqual([
    "realtimePlugin",
  ]);
  for (const gone of [
    "publishing(",
    "negotiated(",
    "eventsEndpoint(",
    "openStream(",
    "new RealtimeHub",
    "hub.start",
  ])
    expect(app).not.toContain(gone);
});
