// Plural names: a real pluralizer for the list path, and the simple English rules the types use.

import pluralizeWord from "pluralize";

const IRREGULAR: Readonly<Record<string, string>> = {
  person: "people",
  child: "children",
  man: "men",
  woman: "women",
  mouse: "mice",
  goose: "geese",
};

/** The plural the list path uses (category → categories, person → people, sheep → sheep). */
export function pluralize(name: string): string {
  return pluralizeWord(name);
}

/** The plural `Pluralize<Name>` computes at the type level; kept in step with it. */
export function typeLevelPlural(name: string): string {
  if (IRREGULAR[name]) return IRREGULAR[name];
  if (/[aeiou]y$/.test(name)) return `${name}s`;
  if (name.endsWith("y")) return `${name.slice(0, -1)}ies`;
  if (/(s|x|z|ch|sh)$/.test(name)) return `${name}es`;
  return `${name}s`;
}

type Irregular = {
  person: "people";
  child: "children";
  man: "men";
  woman: "women";
  mouse: "mice";
  goose: "geese";
};

/** English plural rules at the type level; pass `plural` to a resource when they guess wrong. */
export type Pluralize<N extends string> = N extends keyof Irregular
  ? Irregular[N]
  : N extends `${string}${"ay" | "ey" | "iy" | "oy" | "uy"}`
    ? `${N}s`
    : N extends `${infer Stem}y`
      ? `${Stem}ies`
      : N extends `${string}${"s" | "x" | "z" | "ch" | "sh"}`
        ? `${N}es`
        : `${N}s`;
