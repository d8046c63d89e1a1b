// The longest functions in src/: each function, method or arrow with its length in lines, the
// longest first. Exits 1 when one is longer than the limit (120 lines, the house rule in
// ARCHITECTURE.md; --limit N to change it). `npm run lint` runs it.

import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";

const root = resolve(fileURLToPath(new URL("..", import.meta.url)));
const limitAt = process.argv.indexOf("--limit");
const limit = limitAt > 0 ? Number(process.argv[limitAt + 1]) : 120;

function* files(dir) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) yield* files(path);
    else if (name.endsWith(".ts") && !name.endsWith(".d.ts")) yield path;
  }
}

const found = [];
for (const file of files(join(root, "src"))) {
  const text = readFileSync(file, "utf8");
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const visit = (node) => {
    if (ts.isFunctionLike(node) && "body" in node && node.body) {
      const start = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const end = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      const name =
        node.name?.getText(source) ??
        (ts.isVariableDeclaration(node.parent) ? node.parent.name.getText(source) : "(anonymous)");
      found.push({ lines: end - start + 1, where: `${relative(root, file)}:${start + 1}`, name });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
}
found.sort((a, b) => b.lines - a.lines);
const over = found.filter((f) => f.lines > limit);
const shown = process.argv.includes("--all") ? found.slice(0, 30) : over;
for (const f of shown) console.log(`${String(f.lines).padStart(4)}  ${f.name}  ${f.where}`);
if (over.length > 0) console.log(`${over.length} function(s) longer than ${limit} lines`);
process.exit(over.length > 0 ? 1 : 0);
