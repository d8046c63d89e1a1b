// Loaded with --import before an app: better-sqlite3 cannot be found, as where its native addon
// failed to build.
import { register } from "node:module";

const hook = `export async function resolve(specifier, context, next) {
  if (specifier === "better-sqlite3") {
    throw Object.assign(new Error("Cannot find package 'better-sqlite3'"), { code: "ERR_MODULE_NOT_FOUND" });
  }
  return next(specifier, context);
}`;
register(`data:text/javascript,${encodeURIComponent(hook)}`);
