// The rule cache keeps a parsed condition per shape of answer and swaps another answer's text in;
// nothing may ever be answered with another caller's values.

import { describe, expect, it } from "vitest";
import type { Condition } from "../src/query/where.ts";
import { ValuesOf } from "../src/query/where.ts";
import { RuleCache } from "../src/resource/rule-cache.ts";

/** A parse that copies the answer's values as they are, and counts its calls. */
function counting(transform: (value: unknown) => unknown = (v) => v) {
  let calls = 0;
  const parse = (where: Record<string, unknown>) => () => {
    calls++;
    const items: Condition[] = Object.entries(where).map(([field, value]) => ({
      kind: "field",
      field,
      op: Array.isArray(value) ? "in" : "eq",
      value: Array.isArray(value) ? value.map(transform) : transform(value),
    }));
    return items.length === 0 ? undefined : ({ kind: "and", items } as Condition);
  };
  return { parse, calls: () => calls };
}

const valuesIn = (condition: Condition | undefined): unknown[] =>
  condition?.kind === "and" ? condition.items.map((c) => (c.kind === "field" ? c.value : undefined)) : [];

describe("RuleCache", () => {
  it("parses a shape once and gives each answer its own text", () => {
    const cache = new RuleCache();
    const { parse, calls } = counting();
    const alice = cache.get(
      { ownerId: "alice", status: "open" },
      "r",
      parse({ ownerId: "alice", status: "open" }),
    );
    const bob = cache.get({ ownerId: "bob", status: "open" }, "r", parse({ ownerId: "bob", status: "open" }));
    expect(valuesIn(alice)).toEqual(["alice", "open"]);
    expect(valuesIn(bob)).toEqual(["bob", "open"]);
    expect(calls()).toBe(1);
    // The same answer again is the same condition.
    expect(cache.get({ ownerId: "bob", status: "open" }, "r", parse({}))).toBe(bob);
  });

  it("swaps inside lists and sets of another resource's values", () => {
    const cache = new RuleCache();
    let calls = 0;
    const parse = (id: string, orgs: string[]) => () => {
      calls++;
      return {
        kind: "and",
        items: [
          { kind: "field", field: "orgId", op: "in", value: orgs },
          {
            kind: "field",
            field: "teamId",
            op: "in",
            value: {
              kind: "subselect",
              table: "membership",
              column: "teamId",
              fields: new Map(),
              where: { kind: "field", field: "userId", op: "eq", value: id },
            },
          },
        ],
      } as Condition;
    };
    const where = (id: string, orgs: string[]) => ({
      orgId: { in: orgs },
      teamId: { in: new ValuesOf("membership", "teamId", { userId: id }) },
    });
    cache.get(where("alice", ["a", "b"]), "r", parse("alice", ["a", "b"]));
    const bob = cache.get(where("bob", ["c", "d"]), "r", parse("bob", ["c", "d"])) as Condition & {
      items: { value: unknown }[];
    };
    expect(calls).toBe(1);
    expect(bob.items[0]!.value).toEqual(["c", "d"]);
    expect(JSON.stringify(bob.items[1]!.value)).toContain('"bob"');
    expect(JSON.stringify(bob)).not.toContain("alice");
  });

  it("parses again when the parse changed the text (a date), or the same text stood for two", () => {
    const cache = new RuleCache();
    const dates = counting((v) => (typeof v === "string" ? new Date(v) : v));
    cache.get({ after: "2026-01-01" }, "r", dates.parse({ after: "2026-01-01" }));
    const later = cache.get({ after: "2026-06-01" }, "r", dates.parse({ after: "2026-06-01" }));
    expect(dates.calls()).toBe(2);
    expect((valuesIn(later)[0] as Date).toISOString()).toContain("2026-06-01");

    const twice = counting();
    cache.get({ a: "x", b: "x" }, "r2", twice.parse({ a: "x", b: "x" }));
    const split = cache.get({ a: "y", b: "z" }, "r2", twice.parse({ a: "y", b: "z" }));
    expect(valuesIn(split)).toEqual(["y", "z"]);
    expect(twice.calls()).toBe(2);
  });

  it("keeps nothing for a value it cannot describe: undefined is not 'no filter'", () => {
    const cache = new RuleCache();
    const { parse, calls } = counting();
    expect(cache.get({}, "r", parse({}))).toBeUndefined();
    let parsed = 0;
    const refused = () => {
      parsed++;
      throw new Error("invalid filter");
    };
    expect(() => cache.get({ ownerId: undefined }, "r", refused)).toThrow("invalid filter");
    expect(() => cache.get({ ownerId: undefined }, "r", refused)).toThrow("invalid filter");
    expect(parsed).toBe(2);
    for (const odd of [Number.NaN, () => 1, new (class X {})(), Symbol("s")])
      expect(() => cache.get({ ownerId: odd }, "r", refused)).toThrow();
    expect(calls()).toBe(1);
  });

  it("tells shapes apart by their numbers, booleans and field names", () => {
    const cache = new RuleCache();
    const { parse, calls } = counting();
    const one = cache.get({ level: 1 }, "r", parse({ level: 1 }));
    const two = cache.get({ level: 2 }, "r", parse({ level: 2 }));
    const other = cache.get({ rank: 1 }, "r", parse({ rank: 1 }));
    expect(valuesIn(one)).toEqual([1]);
    expect(valuesIn(two)).toEqual([2]);
    expect(valuesIn(other)).toEqual([1]);
    expect(calls()).toBe(3);
  });
});
