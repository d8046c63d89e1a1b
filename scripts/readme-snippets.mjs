// Writes each ```ts block of README.md to test/readme-snippets/, so `tsc` checks that the README's
// examples still compile. Run by `npm test` before the type check.

import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";

const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");
const out = new URL("../test/readme-snippets/", import.meta.url);
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
const blocks = [...readme.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((m) => m[1]);
blocks.forEach((code, i) => {
  // Each block is its own module; `export {}` keeps one without imports a module too.
  writeFileSync(
    new URL(`block-${i + 1}.ts`, out),
    `// README.md, TypeScript block ${i + 1}\n${code}\nexport {};\n`,
  );
});
console.log(`readme: ${blocks.length} TypeScript blocks written for the type check`);
