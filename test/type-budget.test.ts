// Issue 38: the typed client's check cost grows linearly with the app. Instantiations are
// deterministic, so they are pinned: a client program against a 100-resource app (bench/types.ts)
// stays within a budget set from the measurement (996,202 instantiations with TypeScript 5.9),
// with less than 25% headroom. The package is built into a temporary directory first, as a
// user's install has it (`dist/` types, skipLibCheck), not from this repository's `dist/`, which
// other tests read while this one runs.
// A call's type stays readable: the declaration TypeScript writes for a list result with an
// expansion is the record with its related record, not a chain of crudkit's aliases.

import { spawnSync } from "node:child_process";
import { copyFileSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { appSource, measureTypes, TSCONFIG, tsc, typesProject } from "../bench/types.ts";

const BUDGET_100 = 1_200_000;
const root = join(import.meta.dirname, "..");
let packageDir: string;

beforeAll(() => {
  packageDir = mkdtempSync(join(tmpdir(), "crudkit-types-package-"));
  copyFileSync(join(root, "package.json"), join(packageDir, "package.json"));
  symlinkSync(join(root, "node_modules"), join(packageDir, "node_modules"));
  const build = spawnSync(
    process.execPath,
    [join(root, "node_modules/tsdown/dist/run.mjs"), "-d", join(packageDir, "dist"), "--log-level", "warn"],
    { cwd: root, encoding: "utf8" },
  );
  if (build.status !== 0) throw new Error(`the package did not build:\n${build.stdout}\n${build.stderr}`);
}, 180_000);

afterAll(() => {
  if (packageDir) rmSync(packageDir, { recursive: true, force: true });
});

describe("the typed client's check cost", () => {
  it(`stays within ${BUDGET_100.toLocaleString("en")} instantiations for 100 resources`, () => {
    const measured = measureTypes(100, { packageDir });
    expect(measured.instantiations).toBeGreaterThan(100_000);
    expect(measured.instantiations).toBeLessThanOrEqual(BUDGET_100);
  }, 180_000);

  // Linear, not quadratic: a call's types walk only its own resource's relations, never the app's
  // union of resources (measured 2.12×; 2.33× before relation trees, 4× before issue 38).
  it("grows linearly: 200 resources cost at most 2.2 times 100", () => {
    const at100 = measureTypes(100, { packageDir });
    const at200 = measureTypes(200, { packageDir });
    expect(at200.instantiations / at100.instantiations).toBeLessThanOrEqual(2.2);
  }, 240_000);

  it("writes a list result with an expansion as the record and its related record", () => {
    const dir = typesProject(
      {
        "app.ts": appSource(3),
        "client.ts": `import { createClient } from "crudkit-api/client";
import type { App } from "./app.ts";
const client = createClient<App>({ baseURL: "http://127.0.0.1:3000/api" });
const { data } = await client.resource2.list({ where: { kind: "a" }, expand: ["parent"] });
export const first = data!.items[0]!;
`,
        "tsconfig.json": JSON.stringify({
          ...TSCONFIG,
          compilerOptions: {
            ...TSCONFIG.compilerOptions,
            noEmit: false,
            declaration: true,
            emitDeclarationOnly: true,
            outDir: "out",
          },
          files: ["client.ts"],
        }),
      },
      packageDir,
    );
    try {
      const { status, out } = tsc(dir);
      expect(status, out).toBe(0);
      const declaration = readFileSync(join(dir, "out", "client.d.ts"), "utf8");
      const record = (indent: string) =>
        [
          `${indent}title: string;`,
          `${indent}count: number;`,
          `${indent}price: number;`,
          `${indent}active: boolean;`,
          `${indent}kind: "a" | "b" | "c";`,
          `${indent}tags?: string[] | undefined;`,
          `${indent}ownerId?: string | undefined;`,
        ].join("\n");
      expect(declaration).toContain(record("    "));
      expect(declaration).toContain(`    parent: {\n        id: string;\n${record("        ")}`);
      expect(declaration).not.toMatch(/Expanded|RelationsOf|ExpandPath|Simplify/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
