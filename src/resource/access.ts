// Access rules: decided before any lookup, hook or side effect, so a denied caller learns nothing.

import { APIError } from "../core/errors.ts";
import type { MaybePromise, User } from "../core/identity.ts";

export type Operation = "create" | "read" | "update" | "delete" | "list";

export interface AccessContext {
  user: User | null;
  headers: Headers;
  operation: Operation;
  resource: string;
  id?: string;
  body?: unknown;
}

/** `true` allows everyone, `false` nobody, a function decides per request. */
export type AccessRule = boolean | ((ctx: AccessContext) => MaybePromise<boolean>);

/** One rule per operation. An operation without a rule is denied over HTTP. */
export type ResourceAccess = Partial<Record<Operation, AccessRule>>;

/** Refuses at once when the rule can only deny, before the body is even read. */
export function denyWithoutRule(rule: AccessRule | undefined, operation: Operation, resource: string): void {
  if (rule === undefined) {
    throw new APIError(
      "FORBIDDEN",
      `Access denied: no access rule is set for ${operation} on "${resource}". Set access.${operation} on the resource to allow it.`,
    );
  }
  if (rule === false) throw denied(operation, resource);
}

export async function checkRule(rule: AccessRule | undefined, ctx: AccessContext): Promise<void> {
  denyWithoutRule(rule, ctx.operation, ctx.resource);
  if (rule === true) return;
  if ((await (rule as Exclude<AccessRule, boolean>)(ctx)) !== true) throw denied(ctx.operation, ctx.resource);
}

function denied(operation: Operation, resource: string): APIError {
  return new APIError(
    "FORBIDDEN",
    `Access denied: the ${operation} rule of "${resource}" refused this request.`,
  );
}
