// Dates arrive as ISO 8601 strings on the wire, wherever the schema puts them: a top-level field,
// or inside an object, array, record or tuple. From a field's schema this builds, once, a function
// that turns such strings into Dates before validation; fields without dates get none.

import type { z } from "zod";
import { dateFromIso } from "../core/iso-date.ts";

type Revive = (value: unknown) => unknown;

type Def = {
  type: string;
  innerType?: z.ZodType;
  in?: z.ZodType;
  shape?: Record<string, z.ZodType>;
  element?: z.ZodType;
  valueType?: z.ZodType;
  items?: z.ZodType[];
  rest?: z.ZodType | null;
  options?: z.ZodType[];
};

const def = (schema: z.ZodType): Def => (schema as unknown as { _zod: { def: Def } })._zod.def;

/** A date string becomes a Date; anything else (a malformed date included) is left for the schema to refuse. */
const reviveDate: Revive = (value) => {
  if (typeof value !== "string") return value;
  return dateFromIso(value) ?? value;
};

/** The reviver for a schema, or undefined when no date can occur in it. */
export function dateReviver(schema: z.ZodType): Revive | undefined {
  const d = def(schema);
  switch (d.type) {
    case "date":
      return reviveDate;
    case "optional":
    case "nullable":
    case "default":
    case "prefault":
    case "readonly":
    case "catch":
    case "nonoptional":
      return dateReviver(d.innerType!);
    case "pipe":
      return dateReviver(d.in!);
    case "object":
      return objectReviver(d.shape ?? {});
    case "array": {
      const element = dateReviver(d.element!);
      return element && ((v) => (Array.isArray(v) ? v.map(element) : v));
    }
    case "record": {
      const value = dateReviver(d.valueType!);
      return value && ((v) => (isPlainObject(v) ? mapValues(v, () => value) : v));
    }
    case "tuple":
      return tupleReviver(d.items ?? [], d.rest ? dateReviver(d.rest) : undefined);
    case "union":
      return unionReviver(d.options ?? []);
    default:
      // Lazy schemas and the rest: not followed (a lazy schema may refer to itself).
      return undefined;
  }
}

function objectReviver(shape: Record<string, z.ZodType>): Revive | undefined {
  const revivers = new Map<string, Revive>();
  for (const [key, schema] of Object.entries(shape)) {
    const revive = dateReviver(schema);
    if (revive) revivers.set(key, revive);
  }
  if (revivers.size === 0) return undefined;
  return (v) => (isPlainObject(v) ? mapValues(v, (key) => revivers.get(key)) : v);
}

function tupleReviver(items: z.ZodType[], rest: Revive | undefined): Revive | undefined {
  const revivers = items.map(dateReviver);
  if (!rest && revivers.every((r) => r === undefined)) return undefined;
  return (v) =>
    Array.isArray(v) ? v.map((item, i) => ((i < revivers.length ? revivers[i] : rest) ?? same)(item)) : v;
}

/** The first option whose reviver changes the value wins; the schema then decides if it fits. */
function unionReviver(options: z.ZodType[]): Revive | undefined {
  const revivers = options.map(dateReviver).filter((r): r is Revive => r !== undefined);
  if (revivers.length === 0) return undefined;
  return (v) => {
    for (const revive of revivers) {
      const revived = revive(v);
      if (revived !== v) return revived;
    }
    return v;
  };
}

const same: Revive = (v) => v;

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value) && !(value instanceof Date);
}

/**
 * A copy with each key's reviver applied (keys without one keep their value). `fromEntries`
 * defines properties, so a key named "__proto__" stays a key.
 */
function mapValues(
  value: Record<string, unknown>,
  reviverOf: (key: string) => Revive | undefined,
): Record<string, unknown> {
  return Object.fromEntries(
    Object.keys(value).map((key) => {
      const revive = reviverOf(key);
      return [key, revive ? revive(value[key]) : value[key]];
    }),
  );
}
