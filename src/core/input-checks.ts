// What every piece of caller input passes before a rule, hook or database sees it: JSON nested no
// deeper than a limit, finite numbers, and text every database stores as sent (no NUL, which
// PostgreSQL refuses and SQLite cuts at, and no lone UTF-16 surrogate, which no database can
// store and would come back as U+FFFD). One behaviour on every dialect and entry point: a 400.

import { APIError } from "./errors.ts";

/**
 * Keys that reach an object's prototype when copied with plain assignment (`Object.assign`,
 * `obj[key] = …`): a body holding one could smuggle fields past a check of its own keys.
 */
const PROTOTYPE_KEYS: ReadonlySet<string> = new Set(["__proto__", "constructor", "prototype"]);

/** How deep request JSON may nest (`{"a":[1]}` is 2 levels). @default 32 */
export const DEFAULT_JSON_DEPTH = 32;

/** Why a string cannot be stored as sent, or undefined when it can. */
export function textProblem(value: string): string | undefined {
  if (value.includes("\0")) return "must not contain NUL characters (U+0000)";
  if (!value.isWellFormed()) return "must be well-formed Unicode (it holds a lone surrogate)";
  return undefined;
}

/** A query or path parameter: 400 `BAD_REQUEST` naming it when its text cannot be stored. */
export function checkParameter(value: string, kind: "query" | "path", name: string): void {
  const problem = textProblem(value);
  if (problem) throw new APIError("BAD_REQUEST", `The ${kind} parameter ${shown(name)} ${problem}.`);
}

/**
 * Counts nesting in JSON text before it is parsed, so a body nested past the limit is refused
 * without building it. Brackets inside strings do not count.
 */
export function checkJsonTextDepth(text: string, maxDepth: number): void {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > maxDepth) throw tooDeep(maxDepth);
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
}

/**
 * Checks a parsed body (or an `app.api` body, which never was text): depth, finite numbers, and
 * every key and string. Throws 400 naming the first offending path. A value that refers to itself
 * is infinitely deep, so it is refused too. Nothing built from it can take a prototype from it:
 * `__proto__`, `constructor` and `prototype` keys are refused, and so is an object (from server
 * code) whose prototype is not a plain object's, since validation would read inherited fields.
 */
export function checkJsonValue(value: unknown, maxDepth: number): void {
  const path: (string | number)[] = [];
  const visit = (node: unknown, depth: number): void => {
    if (typeof node === "string") {
      const problem = textProblem(node);
      if (problem) throw invalidValue(path, problem);
    } else if (typeof node === "number") {
      if (!Number.isFinite(node)) throw invalidValue(path, "must be a finite number");
    } else if (typeof node === "bigint" || typeof node === "function" || typeof node === "symbol") {
      // Only server code can pass these; JSON has no form for them.
      throw invalidValue(path, "must be a JSON value (string, number, boolean, null, array or object)");
    } else if (typeof node === "object" && node !== null && !(node instanceof Date)) {
      if (depth >= maxDepth) throw tooDeep(maxDepth);
      if (Array.isArray(node)) {
        for (let i = 0; i < node.length; i++) {
          path.push(i);
          visit(node[i], depth + 1);
          path.pop();
        }
      } else {
        const prototype = Object.getPrototypeOf(node);
        if (prototype !== Object.prototype && prototype !== null)
          throw invalidValue(path, "must be a plain JSON object (it has a prototype of its own)");
        for (const key in node) {
          path.push(key);
          if (PROTOTYPE_KEYS.has(key))
            throw invalidValue(path, "is a key no object may have here (it reaches the prototype)");
          const problem = textProblem(key);
          if (problem) throw invalidValue(path, `is a key that ${problem}`);
          visit((node as Record<string, unknown>)[key], depth + 1);
          path.pop();
        }
      }
    }
  };
  visit(value, 0);
}

function tooDeep(maxDepth: number): APIError {
  return new APIError("BAD_REQUEST", `The JSON body is nested deeper than the limit of ${maxDepth} levels.`);
}

function invalidValue(path: readonly (string | number)[], problem: string): APIError {
  const dotted = path.map((p) => shown(String(p))).join(".");
  const message = `${dotted ? `${dotted} ` : "The body "}${problem}.`;
  return new APIError("VALIDATION_ERROR", `Invalid body: ${message}`, {
    details: [{ path: dotted, message: `${problem[0]!.toUpperCase()}${problem.slice(1)}.` }],
  });
}

/** A name as it may be echoed back: printable ASCII, clipped. */
function shown(name: string): string {
  const printable = name.replace(/[^\x20-\x7e]/g, "?");
  return printable.length > 60 ? `${printable.slice(0, 60)}…` : printable;
}
