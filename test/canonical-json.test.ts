// Entity tags hash a record's canonical JSON without building it (canonicalHash). The tag must be
// exactly hash64(canonicalJson(record)), the text route, for every value a record can hold and
// for the odd ones it should not, so tags never change with the way they are computed.

import { etagOf } from "crudkit-api";
import { describe, expect, it } from "vitest";
import { canonicalHash, canonicalJson, hash64 } from "../src/core/canonical-json.ts";

const textRoute = (value: unknown) => hash64(canonicalJson(value));

/** A small deterministic generator, so a failure names a value that can be found again. */
function generator(seed: number) {
  let state = seed;
  const next = () => {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    return state / 2 ** 32;
  };
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!;
  const strings = [
    "",
    "plain",
    'quote " inside',
    "back\\slash",
    "tab\tnew\nline",
    "\u0000nul",
    "\u001f",
    "é ü ß",
    "emoji 😀",
    "lone \ud800 high",
    "lone \udc00 low",
    "\u2028\u2029",
    "</script>",
    "%_'; drop table",
  ];
  const value = (depth: number): unknown => {
    const kind = Math.floor(next() * (depth > 3 ? 6 : 9));
    switch (kind) {
      case 0:
        return pick(strings);
      case 1:
        return pick([0, -0, 1, -1.5, 1e21, 1e-7, 0.1 + 0.2, Number.MAX_SAFE_INTEGER, NaN, Infinity]);
      case 2:
        return pick([true, false, null]);
      case 3:
        return pick([undefined, () => 1, Symbol("s")]);
      case 4:
        return new Date(Date.UTC(2000 + Math.floor(next() * 50), 0, 1, 0, 0, 0, Math.floor(next() * 1000)));
      case 5:
        return `${pick(strings)}${Math.floor(next() * 1000)}`;
      case 6: {
        const array: unknown[] = Array.from({ length: Math.floor(next() * 4) }, () => value(depth + 1));
        if (next() < 0.2) array[array.length + 1] = 1; // a hole
        return array;
      }
      default: {
        const object: Record<string, unknown> = {};
        for (let i = Math.floor(next() * 6); i > 0; i--)
          object[pick(strings) + pick(["", "a", "Z"])] = value(depth + 1);
        return object;
      }
    }
  };
  return value;
}

describe("canonicalHash", () => {
  it("is hash64(canonicalJson(value)) for any JSON-like value", () => {
    const value = generator(7);
    for (let i = 0; i < 5000; i++) {
      const sample = value(0);
      expect(canonicalHash(sample), canonicalJson(sample)).toBe(textRoute(sample));
    }
  });

  it("gives records the same tags as before, whatever their key order", () => {
    const record = { id: "p1", name: "Hat", price: 5, tags: ["a"], at: new Date("2024-06-01T10:00:00.000Z") };
    // Pinned: the tag the text route gave this record.
    expect(etagOf(record)).toBe('"dc580143d2447a99"');
    const reordered = { tags: ["a"], at: "2024-06-01T10:00:00.000Z", price: 5, name: "Hat", id: "p1" };
    expect(etagOf(reordered)).toBe(etagOf(record));
    expect(etagOf({ ...record, price: 6 })).not.toBe(etagOf(record));
  });

  it("survives a getter that hashes while a hash is under way", () => {
    const inner = { b: 1, a: 2 };
    const outer = {
      z: 1,
      get nested() {
        return { tag: canonicalHash(inner) };
      },
    };
    expect(canonicalHash(outer)).toBe(textRoute(outer));
    expect(canonicalHash(inner)).toBe(textRoute(inner));
  });

  it("throws on a bigint, as JSON does, and is usable afterwards", () => {
    expect(() => canonicalHash({ a: 1n })).toThrow(TypeError);
    expect(canonicalHash({ a: 1 })).toBe(textRoute({ a: 1 }));
  });
});
