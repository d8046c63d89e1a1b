// Access rules: decided before any lookup, hook or side effect, so a denied caller learns nothing.
// A rule says yes or no to an operation, or answers with a `Where`: the rows the caller may touch
// (for a create, the records she may make: the one stored must match). Field rules hide or
// protect single fields.

import type { Kysely } from "kysely";
import { APIError } from "../core/errors.ts";
import type { MaybePromise, User } from "../core/identity.ts";
import type { RequestCache } from "../core/request-cache.ts";
import type { Where } from "../query/where.ts";

export type Operation = "create" | "read" | "update" | "delete" | "list";

export interface AccessContext<Body = unknown> {
  user: User | null;
  headers: Headers;
  operation: Operation;
  resource: string;
  id?: string;
  /**
   * The body of a create or update as sent (with an owner field filled in), before validation:
   * the rule runs first, so a refused caller learns nothing of the schema.
   */
  body?: Body;
  /**
   * The database, with the server's authority (no rule applies to what a rule reads). Inside a
   * write's hooks it is the write's transaction.
   */
  db: Kysely<any>;
  /** This request's memo: a lookup made through it runs once however many rules ask. */
  cache: RequestCache;
}

/** What asks a rule supplies; crudkit fills in `db` and `cache` when they are left out. */
export type AccessRequest<Body = unknown> = Omit<AccessContext<Body>, "db" | "cache"> &
  Partial<Pick<AccessContext<Body>, "db" | "cache">>;

/** `true` allows everyone, `false` nobody, a function decides per request. */
export type AccessRule<Body = unknown> = boolean | ((ctx: AccessContext<Body>) => MaybePromise<boolean>);

/**
 * Like `AccessRule`, and the function may also return a `Where`: the caller may then act only on
 * the records it matches. A list shows only them; any other record answers 404, as a missing id.
 */
export type RowRule<Rec, Body = unknown> =
  | boolean
  | ((ctx: AccessContext<Body>) => MaybePromise<boolean | Where<Rec>>);

export interface FieldAccessContext {
  user: User | null;
  headers: Headers;
  operation: Operation;
  resource: string;
  /** The database, with the server's authority. */
  db: Kysely<any>;
  /** This request's memo (see `AccessContext.cache`). */
  cache: RequestCache;
}

/**
 * Decided once per request: `true` or `false` for every record of it, or a `Where` (a
 * `memberOf`, say) for the records it matches only: there the field is readable (or writable),
 * elsewhere absent (or refused).
 */
export type FieldRule = boolean | ((ctx: FieldAccessContext) => MaybePromise<boolean | Where<any> | object>);

export interface FieldAccess {
  /** Who sees the field. Others never find it in any answer, and cannot search, sort or filter on it. @default true */
  read?: FieldRule;
  /** Who may send the field in a create or update; others get 403 naming it. @default true */
  write?: FieldRule;
}

/** One rule per operation (an operation without a rule is denied over HTTP), and rules per field. */
export interface ResourceAccess<Rec = any, Create = any, Update = any> {
  /**
   * Who may create. A `Where` (a `memberOf`, say) allows records that match it once stored: it
   * is checked on the stored row in the write's transaction, and a create outside it is refused
   * with nothing stored.
   */
  create?: RowRule<Rec, Create>;
  read?: RowRule<Rec>;
  list?: RowRule<Rec>;
  update?: RowRule<Rec, Update>;
  delete?: RowRule<Rec>;
  /** Per-field read and write rules, for example `{ cost: { read: isAdmin, write: isAdmin } }`. */
  fields?: { [K in keyof Rec]?: FieldAccess };
  /**
   * The field that holds the creating user's id (`ownedBy` sets it): filled from `user.id` on
   * create, and a create naming another user is refused.
   */
  owner?: keyof Rec & string;
  /** Callers for whom `owner` does not apply, such as admins (`ownedBy`'s `bypass`). */
  ownerBypass?: (user: User) => boolean;
}

/** Refuses at once when the rule can only deny, before the body is even read. */
export function denyWithoutRule(rule: unknown, operation: Operation, resource: string): void {
  if (rule === undefined) {
    throw new APIError(
      "FORBIDDEN",
      `Access denied: no access rule is set for ${operation} on "${resource}". Set access.${operation} on the resource to allow it.`,
    );
  }
  if (rule === false) throw denied(operation, resource);
}

/** Asks the rule: `true` to allow every row, an object to allow the rows it matches; anything else denies. */
export async function askRule(
  rule: RowRule<unknown, unknown> | undefined,
  ctx: AccessContext,
): Promise<true | object> {
  denyWithoutRule(rule, ctx.operation, ctx.resource);
  if (rule === true) return true;
  const answer = await (rule as Exclude<typeof rule, boolean | undefined>)(ctx);
  if (answer === true) return true;
  // A create's Where is checked on the record as stored, in the write's transaction (create.ts).
  if (typeof answer === "object" && answer !== null && !Array.isArray(answer)) return answer;
  throw denied(ctx.operation, ctx.resource);
}

export function denied(operation: Operation, resource: string): APIError {
  return new APIError(
    "FORBIDDEN",
    `Access denied: the ${operation} rule of "${resource}" refused this request.`,
  );
}
