// The one prelude of every resource operation: identity → rule → validation. It answers who is
// calling, the validated body, the rows the caller may act on (a rule's `Where`) and the fields
// she may not see; the operation then runs its hooks and the store inside that scope.

import type { EndpointContext } from "../core/endpoint.ts";
import { APIError } from "../core/errors.ts";
import type { User } from "../core/identity.ts";
import { RequestCache } from "../core/request-cache.ts";
import { traced, tracing } from "../core/tracing.ts";
import { type Condition, namesOtherTables } from "../query/where.ts";
import {
  type AccessContext,
  type AccessRequest,
  askRule,
  denyWithoutRule,
  type Operation,
} from "./access.ts";
import { gatesOf, NO_FIELDS } from "./field-access.ts";
import type { ResourceRuntime } from "./runtime.ts";

export interface Admission {
  user: User | null;
  /** The validated body of a create or update; empty for other operations. */
  data: Record<string, unknown>;
  /** The rows the caller may act on; undefined for every row. */
  scope: Condition | undefined;
  /** The rule's own answer when it was a `Where`. */
  where: object | undefined;
  /** Fields the caller may not read (and, `gatesOf`, those she reads on some rows only). */
  hidden: ReadonlySet<string>;
  /** Fields the body sets that she may write on some rows only: the row stored must match. */
  writeGates?: ReadonlyMap<string, Condition>;
}

/**
 * Whether what the caller may see depends on other tables (a rule through a relation, a
 * `memberOf`, a field read on some rows only): a read cache, which forgets on this resource's
 * writes only, must not keep such answers.
 */
export function readsOtherTables({ scope, hidden }: Pick<Admission, "scope" | "hidden">): boolean {
  return gatesOf(hidden) !== undefined || (scope !== undefined && namesOtherTables(scope));
}

/** Equal for two callers with the same scope and visibility: part of a cache key. */
export function scopeKey({ scope, hidden }: Pick<Admission, "scope" | "hidden">): string {
  const gates = gatesOf(hidden);
  if (!scope && hidden.size === 0 && !gates) return "";
  const gated = gates ? `|${JSON.stringify([...gates])}` : "";
  return `${scope ? JSON.stringify(scope) : ""}|${[...hidden].join(",")}${gated}`;
}

const NO_DATA: Record<string, unknown> = Object.freeze({}) as Record<string, unknown>;

export async function admit(
  rt: ResourceRuntime,
  ctx: EndpointContext,
  operation: Operation,
): Promise<Admission> {
  const user = await ctx.getUser();
  const { resource } = rt;
  const free = ctx.overrideAccess;
  if (!free) denyWithoutRule(resource.access[operation], operation, resource.name);
  const writes = operation === "create" || operation === "update";
  let body: unknown;
  if (writes) {
    body = await ctx.readBody();
    // A replacement is the whole record, owner included, as a create's body is; for a caller who
    // may act on others' records (the owner rule's bypass) a left-out owner stays as stored.
    if (!free && (operation === "create" || (ctx.replace && !bypassesOwner(rt, user))))
      body = withOwner(rt, body, user);
  }
  if (free) {
    const admission: Admission = {
      user,
      data: NO_DATA,
      scope: undefined,
      where: undefined,
      hidden: NO_FIELDS,
    };
    if (writes) admission.data = validated(rt, operation, body, ctx.replace);
    return admission;
  }
  // What the rules see (the field rules too, before and after validation). One literal: this runs
  // on every request.
  const access: AccessContext = {
    user,
    headers: ctx.headers,
    operation,
    resource: resource.name,
    id: ctx.params.id,
    body,
    db: ctx.db,
    cache: ctx.cache,
  };
  if (writes) await rt.fieldPolicy.checkWrites(body, access);
  const admission = await (tracing()
    ? traced("crudkit.access", { "crudkit.resource": resource.name, "crudkit.operation": operation }, () =>
        decide(rt, access),
      )
    : decide(rt, access));
  // Validation comes after the rule (DESIGN §4): a refused caller learns nothing about the schema.
  if (writes) {
    admission.data = validated(rt, operation, body, ctx.replace);
    // The field rules again, on what will be stored: every field of the validated value the
    // caller could have set (a schema default she did not send is not hers).
    if (!rt.fieldPolicy.open)
      admission.writeGates = await rt.fieldPolicy.checkWrites(callerSet(rt, body, admission.data), access);
  }
  return admission;
}

function validated(
  rt: ResourceRuntime,
  operation: Operation,
  body: unknown,
  replace: boolean | undefined,
): Record<string, unknown> {
  if (operation === "create") return rt.validator.create(body);
  return replace ? replacement(rt, rt.validator.create(body), body) : rt.validator.update(body);
}

function bypassesOwner(rt: ResourceRuntime, user: User | null): boolean {
  return user !== null && rt.resource.access.ownerBypass?.(user) === true;
}

/**
 * A whole record (validated as a create, defaults applied) as the changes of an update: every
 * field it leaves out takes its default or is cleared, as a PUT means (RFC 9110 §9.3.4), except
 * two, which keep their stored value when the body leaves them out: a field with a write rule (a
 * caller who may not write it could not otherwise PUT at all, and its default is not hers to set)
 * and the owner field.
 */
function replacement(
  rt: ResourceRuntime,
  record: Record<string, unknown>,
  body: unknown,
): Record<string, unknown> {
  const changes: Record<string, unknown> = Object.create(null);
  const ruled = rt.resource.access.fields ?? {};
  const sent = (typeof body === "object" && body !== null ? body : {}) as object;
  for (const field of [...rt.resource.fields, ...rt.resource.many]) {
    const { name } = field;
    if (name === "id" || (rt.resource.timestamps && (name === "createdAt" || name === "updatedAt"))) continue;
    const kept = hasWriteRule(ruled[name]) || name === rt.resource.access.owner;
    if (kept && !Object.hasOwn(sent, name)) continue;
    if (Object.hasOwn(record, name)) changes[name] = record[name];
    else changes[name] = field.many ? [] : null;
  }
  return changes;
}

function hasWriteRule(access: { write?: unknown } | undefined): boolean {
  return access?.write !== undefined && access.write !== true;
}

/** Runs the operation's rule and the field rules for a caller (also what `app.can` asks). */
export async function decide(rt: ResourceRuntime, request: AccessRequest): Promise<Admission> {
  const access = withServerParts(rt, request);
  const answer = await askRule(rt.resource.access[access.operation], access);
  const where = answer === true ? undefined : answer;
  const scope = where
    ? rt.parseRule(where, `the ${access.operation} rule of "${rt.resource.name}"`)
    : undefined;
  const hidden = rt.fieldPolicy.open ? NO_FIELDS : await rt.fieldPolicy.hidden(access);
  return { user: access.user, data: NO_DATA, scope, where, hidden };
}

/** The request with what every rule receives: the database and a per-request memo. */
export function withServerParts(rt: ResourceRuntime, request: AccessRequest): AccessContext {
  if (request.db && request.cache) return request as AccessContext;
  return { ...request, db: request.db ?? rt.db, cache: request.cache ?? new RequestCache() };
}

/** The fields of a validated value that came from the caller rather than from a schema default. */
function callerSet(
  rt: ResourceRuntime,
  body: unknown,
  data: Record<string, unknown>,
): Record<string, unknown> {
  const sent = typeof body === "object" && body !== null ? body : {};
  const set: Record<string, unknown> = Object.create(null);
  for (const key of Object.keys(data))
    if (Object.hasOwn(sent, key) || !rt.defaulted.has(key)) set[key] = data[key];
  return set;
}

/** `access.owner`: the owner field is the caller's own id, filled in when the body leaves it out. */
export function withOwner(rt: ResourceRuntime, body: unknown, user: User | null): unknown {
  const field = rt.resource.access.owner;
  if (!field || !user || typeof body !== "object" || body === null || Array.isArray(body)) return body;
  const given = (body as Record<string, unknown>)[field];
  // A spread defines own properties: unlike Object.assign, it never turns a key into a prototype.
  if (given === undefined) return { ...(body as Record<string, unknown>), [field]: user.id };
  if (given !== user.id && !rt.resource.access.ownerBypass?.(user)) {
    throw new APIError(
      "FORBIDDEN",
      `Access denied: "${field}" must be your own user id; records of "${rt.resource.name}" are created in their creator's name.`,
      { details: [{ path: field, message: "Must be your own user id." }] },
    );
  }
  return body;
}
