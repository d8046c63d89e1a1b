// Options objects from plain JavaScript (or a cast) are checked for keys crudkit does not know:
// `searchabel` or `acess` would otherwise be ignored in silence, and show up much later as a
// search that finds nothing or a 403. A misspelt key is a startup error with a "did you mean".

import { ConfigError } from "./errors.ts";

/** The words of a space-separated list, as a union: `"a b"` → `"a" | "b"`. */
type Words<S extends string> = S extends `${infer Head} ${infer Rest}` ? Head | Words<Rest> : S;

/** `S` when its words are exactly the keys of `T`; otherwise a type that names what is wrong. */
type AllKeysOf<T, S extends string> = [Exclude<keyof Required<T>, Words<S>>] extends [never]
  ? [Exclude<Words<S>, keyof T>] extends [never]
    ? S
    : { unknownKeys: Exclude<Words<S>, keyof T> }
  : { missingKeys: Exclude<keyof Required<T>, Words<S>> };

/**
 * The keys of an options type, as a list, written as one string of names that the compiler checks
 * against the type: a key left out or unknown does not compile, so the list cannot fall behind the
 * interface.
 *
 * @example
 * interface GreetOptions { name?: string; loud?: boolean }
 * const KEYS = optionKeys<GreetOptions>()("name loud"); // "name" alone does not compile
 */
export function optionKeys<T>() {
  return <const S extends string>(names: S & AllKeysOf<T, S>): readonly string[] => names.split(" ");
}

/** Throws a ConfigError for the first key of `given` that is not in `known`, with a suggestion. */
export function checkOptionKeys(given: unknown, known: readonly string[], where: string): void {
  if (typeof given !== "object" || given === null || Array.isArray(given)) return;
  for (const key of Object.keys(given)) {
    if (known.includes(key)) continue;
    const guess = nearest(key, known);
    const shown = /^[\x20-\x7e]{1,60}$/.test(key) ? `"${key}"` : "with that name";
    throw new ConfigError(
      `${where}: unknown option ${shown}${guess ? `; did you mean "${guess}"?` : "."} It takes ${known.join(", ")}.`,
    );
  }
}

/** The known key closest to `key` when it is close enough to be a typo (case ignored). */
function nearest(key: string, known: readonly string[]): string | undefined {
  const lower = key.toLowerCase();
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const candidate of known) {
    const distance = editDistance(lower, candidate.toLowerCase());
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return bestDistance <= Math.max(1, Math.floor(Math.min(key.length, 40) / 3)) ? best : undefined;
}

/** Levenshtein distance with adjacent transpositions counted as one edit; long keys are cut short. */
function editDistance(a: string, b: string): number {
  const s = a.slice(0, 64);
  const t = b.slice(0, 64);
  const rows: number[][] = [];
  for (let i = 0; i <= s.length; i++) rows.push([i]);
  for (let j = 1; j <= t.length; j++) rows[0]![j] = j;
  for (let i = 1; i <= s.length; i++) {
    for (let j = 1; j <= t.length; j++) {
      const cost = s[i - 1] === t[j - 1] ? 0 : 1;
      let value = Math.min(rows[i - 1]![j]! + 1, rows[i]![j - 1]! + 1, rows[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && s[i - 1] === t[j - 2] && s[i - 2] === t[j - 1])
        value = Math.min(value, rows[i - 2]![j - 2]! + 1);
      rows[i]![j] = value;
    }
  }
  return rows[s.length]![t.length]!;
}
