// A rule answers with a new `Where` on every request, most often one of the same shape with other
// text in it (the caller's id in a `memberOf`, an owner field): parsing it, following its paths and
// checking it cost more than the statement it makes. So the condition is kept per shape of
// answer: an answer of a kept shape gets the kept condition with its text swapped for its own.
//
// Only text is swapped, and only where the kept condition holds the answer's text as it was given
// (nothing parsed it into something else); numbers, booleans and dates are part of the shape. A
// value the shape cannot describe (undefined, NaN, a function, a class other than Date or
// `valuesOf`'s) keeps nothing: it is parsed each time.

import { type Condition, isSubSelect, mapFieldConditions, ValuesOf } from "../query/where.ts";

/** At most this many shapes, and answers, are kept per resource; past it the cache starts again. */
const LIMIT = 1000;

interface Kept {
  condition: Condition | undefined;
  /** The answer's text, in order. */
  texts: readonly string[];
  /** Every text is in the condition as given, and nothing else is: another answer's may be swapped in. */
  swappable: boolean;
}

export class RuleCache {
  readonly #shapes = new Map<string, Kept>();
  readonly #answers = new Map<string, Condition | undefined>();

  /** The condition `parse` makes of `where`, parsed once per shape of answer. */
  get(where: object, rule: string, parse: () => Condition | undefined): Condition | undefined {
    const texts: string[] = [];
    const shape = keyOf(where, texts, 0);
    if (shape === undefined) return parse();
    const key = `${rule}\u0000${shape}`;
    const answer = `${key}\u0000${JSON.stringify(texts)}`;
    if (this.#answers.has(answer)) return this.#answers.get(answer);
    const kept = this.#shapes.get(key);
    let condition = kept?.swappable ? swapped(kept, texts) : undefined;
    if (condition === undefined) {
      condition = parse();
      if (!kept) this.#keep(this.#shapes, key, { condition, texts, swappable: verbatim(condition, texts) });
    }
    this.#keep(this.#answers, answer, condition);
    return condition;
  }

  #keep<V>(map: Map<string, V>, key: string, value: V): void {
    if (map.size >= LIMIT) map.clear();
    map.set(key, value);
  }
}

/**
 * The shape of a value as text, with each string left out (pushed to `texts` instead), or
 * undefined for a value it cannot describe.
 */
export function keyOf(value: unknown, texts: string[], depth: number): string | undefined {
  if (depth > 32) return undefined;
  switch (typeof value) {
    case "string":
      texts.push(value);
      return "s";
    case "boolean":
      return value ? "t" : "f";
    case "number":
      return Number.isFinite(value) ? `n${value}` : undefined;
    case "object": {
      if (value === null) return "null";
      if (value instanceof Date) return Number.isNaN(value.getTime()) ? undefined : `D${value.getTime()}`;
      if (value instanceof ValuesOf) {
        const where = keyOf(value.where, texts, depth + 1);
        return where && `V(${JSON.stringify([value.resource, value.column, value.fixed])},${where})`;
      }
      const parts: string[] = [];
      if (Array.isArray(value)) {
        for (const item of value) {
          const key = keyOf(item, texts, depth + 1);
          if (key === undefined) return undefined;
          parts.push(key);
        }
        return `[${parts.join(",")}]`;
      }
      const proto = Object.getPrototypeOf(value);
      if (proto !== Object.prototype && proto !== null) return undefined;
      for (const name of Object.keys(value)) {
        const key = keyOf((value as Record<string, unknown>)[name], texts, depth + 1);
        if (key === undefined) return undefined;
        parts.push(`${JSON.stringify(name)}:${key}`);
      }
      return `{${parts.join(",")}}`;
    }
    default:
      return undefined;
  }
}

/** The kept condition with another answer's text in place of its own; undefined when that cannot be told. */
function swapped(kept: Kept, texts: readonly string[]): Condition | undefined {
  if (kept.condition === undefined || texts.length !== kept.texts.length) return undefined;
  const swap = new Map<string, string>();
  for (const [i, old] of kept.texts.entries()) {
    const now = texts[i]!;
    const before = swap.get(old);
    // The same text twice in the kept answer, two texts in this one: which goes where is unknown.
    if (before !== undefined && before !== now) return undefined;
    swap.set(old, now);
  }
  return mapValues(kept.condition, (value) => (typeof value === "string" ? swap.get(value)! : value));
}

/** Whether the condition holds exactly the answer's texts, as values, and no other text. */
function verbatim(condition: Condition | undefined, texts: readonly string[]): boolean {
  if (condition === undefined) return false;
  const found: string[] = [];
  let other = false;
  mapValues(condition, (value) => {
    if (typeof value === "string") found.push(value);
    else if (value !== null && typeof value === "object" && !(value instanceof Date)) other = true;
    return value;
  });
  if (other || found.length !== texts.length) return false;
  const sorted = (list: readonly string[]) => [...list].sort().join("\u0000");
  return sorted(found) === sorted(texts);
}

/** The condition with each value (and each item of a list of values) made by `map`, at any depth. */
function mapValues(condition: Condition, map: (value: unknown) => unknown): Condition {
  return mapFieldConditions(
    condition,
    (c) => {
      const { value } = c;
      if (isSubSelect(value))
        return { ...c, value: { ...value, where: value.where && mapValues(value.where, map) } };
      return { ...c, value: Array.isArray(value) ? value.map(map) : map(value) };
    },
    true,
  );
}
