// Field rules: which fields a caller may read and write. A rule says yes or no for the whole
// request, or answers with a `Where` (a `memberOf`, say): the field is then readable, or
// writable, on the rows that match only ("record-aware"). A hidden field is taken out of every
// record the caller is answered with, and out of what she may search, sort or filter on; writing
// a protected field is a 403 naming it.

import { APIError } from "../core/errors.ts";
import type { Condition } from "../query/where.ts";
import type { FieldAccess, FieldAccessContext, FieldRule } from "./access.ts";

/**
 * The fields a caller may not read on any row, and (`gates`) those she may read only on the rows
 * a condition matches. A plain `ReadonlySet` of the first kind goes everywhere a set of hidden
 * fields went; the gates travel with it to the statements that read rows.
 */
export class HiddenFields extends Set<string> {
  constructor(
    names: Iterable<string>,
    /** Field → the rows on which the caller may read it. */
    readonly gates: ReadonlyMap<string, Condition>,
  ) {
    super(names);
  }
}

/** The record-aware field rules a set of hidden fields carries; undefined when it has none. */
export function gatesOf(hidden: ReadonlySet<string> | undefined): ReadonlyMap<string, Condition> | undefined {
  return hidden instanceof HiddenFields && hidden.gates.size > 0 ? hidden.gates : undefined;
}

/**
 * Every field the caller may fail to see on some record: for what cannot ask the database per
 * record (events, audit entries, matching in memory), which leaves them all out.
 */
export function hiddenSomewhere(hidden: ReadonlySet<string>): ReadonlySet<string> {
  const gates = gatesOf(hidden);
  return gates ? new Set([...hidden, ...gates.keys()]) : hidden;
}

/** Only the record-aware part (for hooks that see records whole but for rows the caller may not read them on). */
export function gatesOnly(hidden: ReadonlySet<string>): ReadonlySet<string> | undefined {
  const gates = gatesOf(hidden);
  return gates ? new HiddenFields([], gates) : undefined;
}

export interface FieldPolicy {
  /** No field has a rule: nothing to decide. */
  readonly open: boolean;
  /** The fields this caller may not read, and those she reads on some rows only. */
  hidden(ctx: FieldAccessContext): Promise<ReadonlySet<string>>;
  /**
   * Refuses a body that sets a field this caller may not write. A field she may write on some
   * rows only comes back with their condition: the write checks the row it stores matches.
   */
  checkWrites(body: unknown, ctx: FieldAccessContext): Promise<ReadonlyMap<string, Condition> | undefined>;
}

export const NO_FIELDS: ReadonlySet<string> = new Set();

/** A rule's `Where` made ready for SQL (the resource's `parseRule`); undefined for "every row". */
type ParseRule = (where: object, rule: string) => Condition | undefined;

export function createFieldPolicy(
  fields: Readonly<Record<string, FieldAccess | undefined>> = {},
  parse: ParseRule = () => {
    throw new Error("crudkit: this field rule may not answer with a filter here.");
  },
): FieldPolicy {
  const readRules: [string, FieldRule][] = [];
  const writeRules: [string, FieldRule][] = [];
  for (const [name, access] of Object.entries(fields)) {
    if (access?.read !== undefined && access.read !== true) readRules.push([name, access.read]);
    if (access?.write !== undefined && access.write !== true) writeRules.push([name, access.write]);
  }
  const decide = async (name: string, rule: FieldRule, ctx: FieldAccessContext, kind: "read" | "write") => {
    const answer = typeof rule === "function" ? await rule(ctx) : rule;
    if (answer === true) return true;
    if (typeof answer !== "object" || answer === null || Array.isArray(answer)) return false;
    return parse(answer, `the ${kind} rule of the field "${name}" of "${ctx.resource}"`) ?? true;
  };
  return {
    open: readRules.length === 0 && writeRules.length === 0,
    async hidden(ctx) {
      if (readRules.length === 0) return NO_FIELDS;
      const hidden: string[] = [];
      const gates = new Map<string, Condition>();
      for (const [name, rule] of readRules) {
        const answer = await decide(name, rule, ctx, "read");
        if (answer === false) hidden.push(name);
        else if (answer !== true) gates.set(name, answer);
      }
      if (gates.size > 0) return new HiddenFields(hidden, gates);
      return hidden.length === 0 ? NO_FIELDS : new Set(hidden);
    },
    async checkWrites(body, ctx) {
      if (writeRules.length === 0 || typeof body !== "object" || body === null) return undefined;
      let gates: Map<string, Condition> | undefined;
      for (const [name, rule] of writeRules) {
        if (!Object.hasOwn(body, name)) continue;
        const answer = await decide(name, rule, ctx, "write");
        if (answer === false) throw mayNotWrite(name, ctx.resource);
        if (answer === true) continue;
        gates ??= new Map();
        gates.set(name, answer);
      }
      return gates;
    },
  };
}

/** The 403 for a field the caller may not write (on this record, for a record-aware rule). */
export function mayNotWrite(name: string, resource: string): APIError {
  return new APIError("FORBIDDEN", `Access denied: you may not write the field "${name}" of "${resource}".`, {
    details: [{ path: name, message: "You may not write this field." }],
  });
}

/** The record without the hidden fields; the same object when nothing is hidden. */
export function withoutHidden<T>(record: T, hidden: ReadonlySet<string>): T {
  if (hidden.size === 0 || typeof record !== "object" || record === null) return record;
  const shown: Record<string, unknown> = {};
  const source = record as Record<string, unknown>;
  for (const key in source) if (!hidden.has(key)) shown[key] = source[key];
  return shown as T;
}
