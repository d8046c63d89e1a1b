// `npm run bench -- --types`: how the typed client's check time grows with the app (issue 38).
// For 25, 50, 100 and 200 resources, writes an app (each resource: 7 fields of the usual kinds,
// a reference to the previous resource, `ownedBy` on every third) and a client program calling
// each resource (a list with a filter and an expand, reading the expanded relation, an update and a
// create) into a temporary project, and runs `tsc --noEmit --extendedDiagnostics` on it: the
// instantiations (deterministic), the check time and the memory.

import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const ROOT = resolve(import.meta.dirname, "..");
/** The package the projects install: this repository (after `npm run build`), or another build of it. */
const PACKAGE = process.env.CRUDKIT_TYPES_PACKAGE ?? ROOT;

/** A project of `files` beside a `node_modules` where crudkit-api is `packageDir` (its `dist/` types). */
export function typesProject(files: Record<string, string>, packageDir = PACKAGE): string {
  const dir = mkdtempSync(join(tmpdir(), "crudkit-types-"));
  mkdirSync(join(dir, "node_modules"));
  symlinkSync(packageDir, join(dir, "node_modules", "crudkit-api"));
  symlinkSync(join(ROOT, "node_modules", "zod"), join(dir, "node_modules", "zod"));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

/** Runs the TypeScript compiler of this repository on a project; its output and exit code. */
export function tsc(dir: string, ...args: string[]): { status: number | null; out: string } {
  const result = spawnSync(
    process.execPath,
    [join(ROOT, "node_modules/typescript/bin/tsc"), "-p", dir, ...args],
    {
      encoding: "utf8",
      maxBuffer: 64 * 1024 * 1024,
    },
  );
  return { status: result.status, out: result.stdout };
}

/** The app's source: `resource1` … `resource<n>`, each referencing the one before it. */
export function appSource(count: number): string {
  const lines = [
    `import { createResource, crudkit, ownedBy, references, withId } from "crudkit-api";`,
    `import { z } from "zod";`,
    ``,
    `const open = { create: true, read: true, update: true, delete: true, list: true } as const;`,
  ];
  for (let i = 1; i <= count; i++) {
    const parent = i > 1 ? `\n    parentId: references(resource${i - 1}).optional(),` : "";
    lines.push(`
export const resource${i} = createResource({
  name: "resource${i}",
  schema: withId({
    title: z.string().max(200),
    count: z.number().int(),
    price: z.number(),
    active: z.boolean().default(true),
    kind: z.enum(["a", "b", "c"]),
    tags: z.array(z.string()).optional(),
    ownerId: z.string().optional(),${parent}
  }),
  access: ${i % 3 === 0 ? `ownedBy("ownerId")` : "open"},
});`);
  }
  lines.push(`
export const app = crudkit({
  database: { provider: "sqlite", url: ":memory:" },
  resources: [${Array.from({ length: count }, (_, i) => `resource${i + 1}`).join(", ")}],
});
export type App = typeof app;
`);
  return lines.join("\n");
}

/** The client program: the four calls of the issue on every resource. */
export function clientSource(count: number): string {
  const lines = [
    `import { createClient } from "crudkit-api/client";`,
    `import type { App } from "./app.ts";`,
    ``,
    `const client = createClient<App>({ baseURL: "http://127.0.0.1:3000/api" });`,
    ``,
    `export async function run(id: string): Promise<unknown[]> {`,
    `  const seen: unknown[] = [];`,
  ];
  for (let i = 1; i <= count; i++) {
    const expand = i > 1 ? `, expand: ["parent"]` : "";
    lines.push(`  {
    const { data } = await client.resource${i}.list({ where: { price: { gte: 1 }, kind: "a" }${expand} });
    seen.push(data?.items[0]?.title${i > 1 ? ", data?.items[0]?.parent?.title" : ""});
    await client.resource${i}.update(id, { count: 2 });
    await client.resource${i}.create({ title: "t", count: 1, price: 2, kind: "b"${i > 1 ? ", parentId: id" : ""} });
  }`);
  }
  lines.push(`  return seen;`, `}`, ``);
  return lines.join("\n");
}

export const TSCONFIG = {
  compilerOptions: {
    target: "ES2022",
    module: "ESNext",
    moduleResolution: "Bundler",
    strict: true,
    skipLibCheck: true,
    noEmit: true,
    allowImportingTsExtensions: true,
    types: [],
  },
  files: ["app.ts", "client.ts"],
};

export interface TypesMeasure {
  resources: number;
  instantiations: number;
  checkSeconds: number;
  memoryMb: number;
}

/**
 * Writes the project for `count` resources beside a `node_modules` that links this repository's
 * (so `crudkit-api` resolves to its built `dist/` types, as a user's install does) and measures it.
 */
export function measureTypes(count: number, { packageDir = PACKAGE } = {}): TypesMeasure {
  const dir = typesProject(
    {
      "app.ts": appSource(count),
      "client.ts": clientSource(count),
      "tsconfig.json": JSON.stringify(TSCONFIG),
    },
    packageDir,
  );
  try {
    const { status, out } = tsc(dir, "--extendedDiagnostics");
    if (status !== 0) throw new Error(`tsc failed for ${count} resources:\n${out.slice(0, 4000)}`);
    const number = (label: string) => {
      const match = out.match(new RegExp(`^${label}:\\s+([\\d.]+)`, "m"));
      if (!match) throw new Error(`tsc printed no "${label}":\n${out}`);
      return Number(match[1]);
    };
    return {
      resources: count,
      instantiations: number("Instantiations"),
      checkSeconds: number("Check time"),
      memoryMb: Math.round(number("Memory used") / 1024),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export function runTypesBench(counts: readonly number[] = [25, 50, 100, 200]): void {
  console.log("\ntyped client check cost (tsc --noEmit, skipLibCheck, one client program per app)");
  console.log("resources | instantiations | check time | memory");
  let previous: TypesMeasure | undefined;
  for (const count of counts) {
    const m = measureTypes(count);
    const growth = previous ? ` (×${(m.instantiations / previous.instantiations).toFixed(2)})` : "";
    console.log(
      `${String(count).padStart(9)} | ${String(m.instantiations).padStart(14)}${growth} | ${m.checkSeconds.toFixed(2)} s | ${m.memoryMb} MB`,
    );
    previous = m;
  }
}
