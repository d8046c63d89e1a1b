// Field rules: which fields a caller may read and write, decided once per request. A hidden field
// is taken out of every record the caller is answered with, and out of what she may search, sort
// or filter on; writing a protected field is a 403 naming it.

import { APIError } from "../core/errors.ts";
import type { FieldAccess, FieldAccessContext, FieldRule } from "./access.ts";

export interface FieldPolicy {
  /** No field has a rule: nothing to decide. */
  readonly open: boolean;
  /** The fields this caller may not read. */
  hidden(ctx: FieldAccessContext): Promise<ReadonlySet<string>>;
  /** Refuses a body that sets a field this caller may not write. */
  checkWrites(body: unknown, ctx: FieldAccessContext): Promise<void>;
}

export const NO_FIELDS: ReadonlySet<string> = new Set();

export function createFieldPolicy(
  fields: Readonly<Record<string, FieldAccess | undefined>> = {},
): FieldPolicy {
  const readRules: [string, FieldRule][] = [];
  const writeRules: [string, FieldRule][] = [];
  for (const [name, access] of Object.entries(fields)) {
    if (access?.read !== undefined && access.read !== true) readRules.push([name, access.read]);
    if (access?.write !== undefined && access.write !== true) writeRules.push([name, access.write]);
  }
  return {
    open: readRules.length === 0 && writeRules.length === 0,
    async hidden(ctx) {
      if (readRules.length === 0) return NO_FIELDS;
      const hidden = new Set<string>();
      for (const [name, rule] of readRules) if (!(await allows(rule, ctx))) hidden.add(name);
      return hidden.size === 0 ? NO_FIELDS : hidden;
    },
    async checkWrites(body, ctx) {
      if (writeRules.length === 0 || typeof body !== "object" || body === null) return;
      for (const [name, rule] of writeRules) {
        if (Object.hasOwn(body, name) && !(await allows(rule, ctx))) {
          throw new APIError(
            "FORBIDDEN",
            `Access denied: you may not write the field "${name}" of "${ctx.resource}".`,
            { details: [{ path: name, message: "You may not write this field." }] },
          );
        }
      }
    },
  };
}

async function allows(rule: FieldRule, ctx: FieldAccessContext): Promise<boolean> {
  return typeof rule === "function" ? (await rule(ctx)) === true : rule;
}

/** The record without the hidden fields; the same object when nothing is hidden. */
export function withoutHidden<T>(record: T, hidden: ReadonlySet<string>): T {
  if (hidden.size === 0 || typeof record !== "object" || record === null) return record;
  const shown: Record<string, unknown> = {};
  const source = record as Record<string, unknown>;
  for (const key in source) if (!hidden.has(key)) shown[key] = source[key];
  return shown as T;
}
