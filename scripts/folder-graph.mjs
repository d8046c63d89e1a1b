// The folder-level graph of value imports in src/: which top folder imports which. Type-only
// imports (`import type`, `export type`) are left out: they vanish from the built code. Prints the
// arrows (not with --quiet) and any cycle, with the imports that make it (--why); exits 1 when
// there is a cycle. `npm run lint` runs it; test/layers.test.ts checks the graph too.

import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../src");

function* files(dir) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) yield* files(path);
    else if (/\.tsx?$/.test(name) && !name.endsWith(".d.ts")) yield path;
  }
}

/** The top folder of a path under src/ ("." for files at the top). */
const folderOf = (path) => {
  const parts = relative(root, path).split("/");
  return parts.length > 1 ? parts[0] : ".";
};

/** Value imports of a file: every `import`/`export … from` that is not type-only, and `import()`. */
export function valueImports(text) {
  const found = [];
  const statement = /(?:^|\n)\s*(import|export)\s+(type\s+)?([^;]*?)\s+from\s+["']([^"']+)["']/g;
  for (const m of text.matchAll(statement)) {
    if (m[2]) continue;
    // `import { type A, type B } from` is type-only too.
    const names = /^\{([^}]*)\}$/.exec(m[3].trim());
    if (names?.[1].split(",").every((n) => n.trim() === "" || /^type\s/.test(n.trim()))) continue;
    found.push(m[4]);
  }
  for (const m of text.matchAll(/(?:^|\n)\s*import\s+["']([^"']+)["']/g)) found.push(m[1]);
  for (const m of text.matchAll(/\bimport\(\s*["']([^"']+)["']\s*\)/g)) found.push(m[1]);
  return found;
}

export function folderGraph() {
  const edges = new Map();
  for (const file of files(root)) {
    const from = folderOf(file);
    for (const spec of valueImports(readFileSync(file, "utf8"))) {
      if (!spec.startsWith(".")) continue;
      const to = folderOf(resolve(dirname(file), spec));
      if (to === from) continue;
      if (!edges.has(from)) edges.set(from, new Map());
      const targets = edges.get(from);
      if (!targets.has(to)) targets.set(to, []);
      targets.get(to).push(`${relative(root, file)} → ${spec}`);
    }
  }
  return edges;
}

/** Strongly connected groups of more than one folder (Tarjan). */
export function cycles(edges) {
  const index = new Map();
  const low = new Map();
  const stack = [];
  const on = new Set();
  const groups = [];
  let next = 0;
  const visit = (v) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    on.add(v);
    for (const w of edges.get(v)?.keys() ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v), low.get(w)));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v), index.get(w)));
    }
    if (low.get(v) === index.get(v)) {
      const group = [];
      let w;
      do {
        w = stack.pop();
        on.delete(w);
        group.push(w);
      } while (w !== v);
      if (group.length > 1) groups.push(group.sort());
    }
  };
  for (const v of edges.keys()) if (!index.has(v)) visit(v);
  return groups;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const edges = folderGraph();
  if (!process.argv.includes("--quiet"))
    for (const [from, targets] of [...edges].sort())
      console.log(`${from} → ${[...targets.keys()].sort().join(", ")}`);
  const found = cycles(edges);
  for (const group of found) {
    console.log(`cycle: ${group.join(", ")}`);
    if (process.argv.includes("--why"))
      for (const a of group)
        for (const [b, why] of edges.get(a) ?? [])
          if (group.includes(b)) console.log(`  ${a} → ${b}: ${why.slice(0, 3).join("; ")}`);
  }
  process.exit(found.length > 0 ? 1 : 0);
}
