// Writes each ```ts block of README.md and of every page of docs/ to test/readme-snippets/, so
// `tsc` checks that the examples still compile. Run by `npm test` before the type check. A block
// fenced as ```ts title="server.ts" is written under that name, so later blocks can import it.
// README.md's blocks go to test/readme-snippets/, each docs page's to its own folder
// (test/readme-snippets/docs/plugins/audit/ for docs/plugins/audit.md), so titles never clash. A
// page that imports a titled block it does not hold (`from "./server.js"`) gets the one docs page
// that defines it copied beside it; none, or more than one, is an error.

import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const out = new URL("../test/readme-snippets/", import.meta.url);
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
const BLOCK = /^```ts(?: title="([\w.-]+\.ts)")?\n([\s\S]*?)^```$/gm;

/** Writes the ```ts blocks of one Markdown file into `dir`; answers the files written. */
function writeBlocks(markdown, dir, label) {
  const blocks = [...markdown.matchAll(BLOCK)];
  if (blocks.length) mkdirSync(dir, { recursive: true });
  return blocks.map(([, title, code], i) => {
    const file = join(dir, title ?? `block-${i + 1}.ts`);
    // Each block is its own module; `export {}` keeps one without imports a module too.
    writeFileSync(file, `// ${label}, TypeScript block ${i + 1}\n${code}\nexport {};\n`);
    return file;
  });
}

const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");
const readmeBlocks = writeBlocks(readme, fileURLToPath(out), "README.md");
console.log(`readme: ${readmeBlocks.length} TypeScript blocks written for the type check`);

const docsRoot = fileURLToPath(new URL("../docs/", import.meta.url));
// The Markdown pages of docs/, without the generated API reference and VitePress's own folder.
function* pages(dir) {
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (name.startsWith(".") || relative(docsRoot, path) === "api") continue;
    if (statSync(path).isDirectory()) yield* pages(path);
    else if (name.endsWith(".md")) yield path;
  }
}
const docsOut = join(fileURLToPath(out), "docs");
const written = new Map(); // page folder → files
for (const page of pages(docsRoot)) {
  const name = relative(docsRoot, page).replace(/\.md$/, "");
  const files = writeBlocks(readFileSync(page, "utf8"), join(docsOut, name), `docs/${name}.md`);
  if (files.length) written.set(join(docsOut, name), files);
}
// Titled blocks a page imports from another page.
const titled = new Map(); // "server.ts" → the folders holding it
for (const [dir, files] of written)
  for (const file of files) {
    const title = relative(dir, file);
    if (!title.startsWith("block-")) titled.set(title, [...(titled.get(title) ?? []), dir]);
  }
for (const [dir, files] of written) {
  const missing = [...files];
  while (missing.length) {
    const text = readFileSync(missing.pop(), "utf8");
    for (const [, base] of text.matchAll(/from "\.\/([\w.-]+)\.(?:js|ts)"/g)) {
      if (existsSync(join(dir, `${base}.ts`))) continue;
      const holders = titled.get(`${base}.ts`) ?? [];
      if (holders.length !== 1)
        throw new Error(
          `docs/${relative(docsOut, dir)}.md imports ./${base}.js: ${holders.length ? "several pages define" : "no page defines"} a block titled "${base}.ts"`,
        );
      copyFileSync(join(holders[0], `${base}.ts`), join(dir, `${base}.ts`));
      missing.push(join(dir, `${base}.ts`));
    }
  }
}
const docsBlocks = [...written.values()].reduce((n, files) => n + files.length, 0);
console.log(`docs: ${docsBlocks} TypeScript blocks of ${written.size} pages written for the type check`);

// Every `@example` in the JSDoc of src/ is checked the same way (issue 33, item 9): written to
// test/readme-snippets/jsdoc/, with imports of the package's exports it names, and `any` for the
// names an example takes as given (an `app`, a `user`). An example that is a fragment of an
// options object (`cors: { … }`) is checked as an object literal.
const ENTRIES = [
  ["crudkit-api", "src/index.ts"],
  ["crudkit-api/node", "src/node/index.ts"],
  ["crudkit-api/plugins", "src/plugins/index.ts"],
  ["crudkit-api/storage/s3", "src/storage/s3/index.ts"],
  ["crudkit-api/client", "src/client/index.ts"],
  ["crudkit-api/plugin-kit", "src/kit/index.ts"],
];
const OTHERS = {
  z: 'import { z } from "zod";',
  Redis: 'import { Redis } from "ioredis";',
  S3Client: 'import { S3Client } from "@aws-sdk/client-s3";',
  Fastify: 'import Fastify from "fastify";',
  express: 'import express from "express";',
  http: 'import http from "node:http";',
};
/** The app examples take as given, typed, so what they do with it is checked too. */
const EXAMPLE_APP = `import { createResource, crudkit, references, withId } from "crudkit-api";
import { z } from "zod";

export const product = createResource({
  name: "product",
  schema: withId({ name: z.string(), price: z.number() }),
  access: { create: true, read: true, update: true, delete: true, list: true },
});
export const review = createResource({
  name: "review",
  schema: withId({ productId: references(product, { onDelete: "cascade" }), stars: z.number().int() }),
  access: { create: true, read: true, list: true },
});
export const order = createResource({
  name: "order",
  schema: withId({ total: z.number() }),
  access: { read: true, list: true, delete: true },
});
export const app = crudkit({
  database: { provider: "sqlite", url: ":memory:" },
  resources: [product, review, order],
  realtime: true,
});
`;
const TYPED = ["app", "product", "order"];
/** Names examples take as given (any). */
const GIVEN = [
  "user",
  "id",
  "url",
  "signedIn",
  "order",
  "key",
  "notify",
  "resources",
  "product",
  "isAdmin",
  "listener",
  "rt",
  "ctx",
  "row",
  "hookContext",
  "auth",
  "database",
];

const exported = new Map();
for (const [entry, file] of ENTRIES) {
  const text = readFileSync(new URL(`../${file}`, import.meta.url), "utf8");
  for (const m of text.matchAll(/export\s+(?:type\s+)?\{([^}]*)\}/g))
    for (const part of m[1].split(",")) {
      const name = part
        .trim()
        .replace(/^type\s+/, "")
        .split(/\s+as\s+/)
        .pop()
        ?.trim();
      if (name && !exported.has(name))
        exported.set(name, { entry, type: /^\s*type\s/.test(part) || m[0].startsWith("export type") });
    }
  for (const m of text.matchAll(/export\s+(?:async\s+)?(?:function|const|class)\s+(\w+)/g))
    if (!exported.has(m[1])) exported.set(m[1], { entry, type: false });
}

function* sources(dir) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) yield* sources(path);
    else if (name.endsWith(".ts")) yield path;
  }
}
const jsdocOut = new URL("jsdoc/", out);
mkdirSync(jsdocOut, { recursive: true });
writeFileSync(new URL("example-app.ts", jsdocOut), EXAMPLE_APP);
const srcRoot = fileURLToPath(new URL("../src/", import.meta.url));
let examples = 0;
for (const file of sources(srcRoot)) {
  const text = readFileSync(file, "utf8");
  for (const m of text.matchAll(/@example[ \t]*([^\n]*)\n((?:[ \t]*\*(?![/])[^\n]*\n)*)/g)) {
    const lines = [m[1], ...m[2].split("\n").map((l) => l.replace(/^[ \t]*\* ?/, ""))];
    // An example's own app module (`./server`, `../crudkit.config`) is the typed example app here.
    const code = lines
      .join("\n")
      .trim()
      .replace(/from "(?:\.{1,2}\/[^"]*|@\/[^"]*)"/g, 'from "./example-app.ts"');
    if (!code) continue;
    examples++;
    const words = new Set(code.match(/[A-Za-z_$][\w$]*/g) ?? []);
    const defined = new Set(
      [...code.matchAll(/(?:const|let|function|class|import)\s+(?:\{([^}]*)\}|(\w+))/g)].flatMap((d) =>
        d[1]
          ? d[1].split(",").map((n) =>
              n
                .trim()
                .split(/\s+as\s+/)
                .pop(),
            )
          : [d[2]],
      ),
    );
    const byEntry = new Map();
    for (const word of words) {
      if (defined.has(word)) continue;
      const found = exported.get(word);
      if (!found) continue;
      if (!byEntry.has(found.entry)) byEntry.set(found.entry, []);
      byEntry.get(found.entry).push(found.type ? `type ${word}` : word);
    }
    const imports = [...byEntry].map(([entry, names]) => `import { ${names.join(", ")} } from "${entry}";`);
    for (const [name, line] of Object.entries(OTHERS))
      if (words.has(name) && !defined.has(name)) imports.push(line);
    const given = GIVEN.filter(
      (name) => words.has(name) && !defined.has(name) && !exported.has(name) && !TYPED.includes(name),
    );
    const typed = TYPED.filter(
      (name) => words.has(name) && !defined.has(name) && !code.includes(`{ ${name} }`),
    );
    if (typed.length) imports.push(`import { ${typed.join(", ")} } from "./example-app.ts";`);
    // A function of the file itself that no entry exports (an internal helper's example).
    const own = [...words].filter(
      (word) =>
        !defined.has(word) &&
        !exported.has(word) &&
        new RegExp(`export (?:async )?(?:function|const|class) ${word}\\b`).test(text),
    );
    if (own.length)
      imports.push(`import { ${own.join(", ")} } from "../../../src/${relative(srcRoot, file)}";`);
    // `name: value` (an options fragment): checked as an object literal.
    const fragment = /^[\w$]+\s*:/.test(code) && !/^\w+:\s*\/\//.test(code);
    const where = `${relative(srcRoot, file)}`;
    writeFileSync(
      new URL(`${where.replace(/[/.]/g, "_")}_${m.index}.ts`, jsdocOut),
      `// src/${where}, @example\n${imports.join("\n")}\n${given.map((g) => `declare const ${g}: any;`).join("\n")}\n${fragment ? `void {\n${code}\n};` : code}\nexport {};\n`,
    );
  }
}
console.log(`jsdoc: ${examples} @example blocks written for the type check`);
