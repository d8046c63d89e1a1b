// Writes each ```ts block of README.md to test/readme-snippets/, so `tsc` checks that the README's
// examples still compile. Run by `npm test` before the type check. A block fenced as
// ```ts title="server.ts" is written under that name, so later blocks can import it.

import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";

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
