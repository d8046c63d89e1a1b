// Writes each ```ts block of README.md to test/readme-snippets/, so `tsc` checks that the README's
// examples still compile. Run by `npm test` before the type check. A block fenced as
// ```ts title="server.ts" is written under that name, so later blocks can import it.

import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");
const out = new URL("../test/readme-snippets/", import.meta.url);
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
const blocks = [...readme.matchAll(/^```ts(?: title="([\w.-]+\.ts)")?\n([\s\S]*?)^```$/gm)];
blocks.forEach(([, title, code], i) => {
  // Each block is its own module; `export {}` keeps one without imports a module too.
  writeFileSync(
    new URL(title ?? `block-${i + 1}.ts`, out),
    `// README.md, TypeScript block ${i + 1}\n${code}\nexport {};\n`,
  );
});
console.log(`readme: ${blocks.length} TypeScript blocks written for the type check`);

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
