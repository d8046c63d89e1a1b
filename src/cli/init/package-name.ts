// The npm package name init writes into package.json, made from the directory's name: npm takes
// lowercase, URL-safe names of at most 214 characters that start with neither "." nor "_".

import { builtinModules } from "node:module";

const FALLBACK = "crudkit-app";
const MAX_LENGTH = 214;
/** Names npm refuses whatever their characters. */
const RESERVED = new Set(["node_modules", "favicon.ico"]);

/**
 * `My App` → `my-app`, `Café Ünïcode` → `cafe-unicode`, `..` → `crudkit-app`, `http` → `http-app`
 * (a Node built-in module's name would shadow it).
 */
export function packageNameFrom(dirName: string): string {
  const name = dirName
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, "-")
    .replace(/-{2,}/g, "-")
    .replace(/^[-._]+/, "")
    .slice(0, MAX_LENGTH)
    .replace(/[-._]+$/, "");
  if (name === "" || RESERVED.has(name)) return FALLBACK;
  if (builtinModules.includes(name)) return `${name}-app`;
  return name;
}
