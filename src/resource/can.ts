// app.can(): asks a resource's rules about a caller without calling the operation, so a UI can
// hide a button it would refuse and a test can pin a policy.

import type { EndpointContext } from "../core/endpoint.ts";
import { APIError, unlessForbidden } from "../core/errors.ts";
import type { User } from "../core/identity.ts";
import type { Condition } from "../query/where.ts";
import { matchesWhere } from "../query/where-match.ts";
import { denied, type Operation } from "./access.ts";
import { decide, withOwner, withServerParts } from "./admission.ts";
import { gatesOf, mayNotWrite } from "./field-access.ts";
import { recordJudge, settledScope } from "./record-judge.ts";
import type { ResourceRuntime } from "./runtime.ts";

export interface CanOptions {
  user: User | null;
  /** Headers the rules may read. @default none */
  headers?: HeadersInit;
  /** The record asked about (read, update, delete): allowed only when it exists within the caller's rows. */
  id?: string;
  /** The body of a create or update, as the rules and field write rules would see it (not validated). */
  body?: unknown;
}

export interface Permission {
  allowed: boolean;
  /** The rule's `Where`: the rows the caller may act on. Undefined when she may act on every row. */
  where?: object;
  /** Fields this caller may not read (on the record `id`, when given). */
  hiddenFields: string[];
  /**
   * Without an `id`: fields she reads (or, with a `body`, writes) on some records only: a field
   * rule that answered a `Where`. Given an `id`, each is decided for that record: in
   * `hiddenFields` or not, and a write she may not make there is `allowed: false`.
   */
  fieldsByRecord?: string[];
  /** Why not, when not allowed: the message the request would get. */
  reason?: string;
}

export async function can(
  rt: ResourceRuntime,
  operation: Operation,
  options: CanOptions,
): Promise<Permission> {
  const { user, id } = options;
  const access = withServerParts(rt, {
    user,
    headers: new Headers(options.headers),
    operation,
    resource: rt.resource.name,
    id,
    body: options.body,
  });
  try {
    let writeGates: ReadonlyMap<string, Condition> | undefined;
    if (operation === "create" || operation === "update") {
      if (operation === "create") access.body = withOwner(rt, access.body, user);
      writeGates = await rt.fieldPolicy.checkWrites(access.body, access);
    }
    const { scope, where, hidden } = await decide(rt, access);
    const hiddenFields = [...hidden];
    // A create rule's Where, on the record the body names: judged when the body gives every field
    // it names (a form asking about one field at a time is not refused for the others).
    if (operation === "create" && scope && givesEvery(scope, access.body)) {
      const record = Object.assign(Object.create(null), access.body) as Record<string, unknown>;
      if (!(await (await recordJudge(rt, scope))(record)))
        return { allowed: false, hiddenFields, reason: denied("create", rt.resource.name).message };
    }
    const gates = gatesOf(hidden);
    const perRecord: Partial<Permission> = {};
    if (id !== undefined && operation !== "create" && operation !== "list") {
      if (!(await rt.store.findById(rt.db, id, scope)))
        return { allowed: false, hiddenFields, reason: `No ${rt.resource.name} with this id exists.` };
      for (const [field, gate] of gates ?? [])
        if (!(await rt.store.holds(rt.db, id, gate))) hiddenFields.push(field);
      // A field she may write on some records only: this record, as it is, must be one of them.
      for (const [field, gate] of writeGates ?? [])
        if (!(await rt.store.holds(rt.db, id, gate)))
          return { allowed: false, hiddenFields, reason: mayNotWrite(field, rt.resource.name).message };
    } else if (gates || writeGates)
      perRecord.fieldsByRecord = [...new Set([...(gates?.keys() ?? []), ...(writeGates?.keys() ?? [])])];
    return where
      ? { allowed: true, where, hiddenFields, ...perRecord }
      : { allowed: true, hiddenFields, ...perRecord };
  } catch (error) {
    if (!(error instanceof APIError)) throw error;
    // Refused before the field rules were asked: ask them for the answer.
    const hiddenFields = [...(await rt.fieldPolicy.hidden(access))];
    return { allowed: false, hiddenFields, reason: error.message };
  }
}

/** Whether the caller of a request may read one record: her read rule, and the record within her rows. */
export async function canRead(rt: ResourceRuntime, id: string, ctx: EndpointContext): Promise<boolean> {
  if (ctx.overrideAccess) return (await rt.store.findById(ctx.db, id)) !== undefined;
  const user = await ctx.getUser();
  const access = { user, headers: ctx.headers, operation: "read" as const, resource: rt.resource.name, id };
  const admission = await unlessForbidden(decide(rt, access), null);
  return admission !== null && (await rt.store.findById(ctx.db, id, admission.scope)) !== undefined;
}

/**
 * Of the records `ids`, those the caller of a request may read (her read rule, row rule included),
 * in one statement that selects only their ids:
 *
 *   SELECT "id" FROM "doc" WHERE "id" IN (?, ?, …) [AND (<read rule>)]
 */
export async function readableIds(
  rt: ResourceRuntime,
  ids: readonly string[],
  ctx: EndpointContext,
): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  let scope: Condition | undefined;
  if (!ctx.overrideAccess) {
    const user = await ctx.getUser();
    const access = {
      user,
      headers: ctx.headers,
      operation: "read" as const,
      resource: rt.resource.name,
      db: ctx.db,
      cache: ctx.cache,
    };
    const admission = await unlessForbidden(decide(rt, access), null);
    if (admission === null) return new Set();
    scope = admission.scope;
  }
  const everyField = new Set(rt.resource.fields.map((f) => f.name));
  const rows = await rt.store.related.byIds(ctx.db, ids, scope, everyField);
  return new Set(rows.map((row) => String(row.id)));
}

/**
 * How the caller's read rule, row rule included, judges records as they were (an audit entry's
 * before or after): the rule is asked once and the sets it names read once, then each snapshot is
 * judged in memory; a rule naming a referenced record judges no (see snapshotJudge).
 */
export async function snapshotReader(
  rt: ResourceRuntime,
  ctx: Pick<EndpointContext, "getUser" | "headers" | "overrideAccess">,
): Promise<(record: Readonly<Record<string, unknown>>) => boolean> {
  const scope = await readScope(rt, ctx);
  if (typeof scope === "boolean") return () => scope;
  const settled = await settledScope(rt, scope);
  return (record) => matchesWhere(settled, record, rt.ruleFields) === true;
}

/** As snapshotReader, and a condition on a record a snapshot references asks that record as it is now. */
export async function snapshotJudge(
  rt: ResourceRuntime,
  ctx: Pick<EndpointContext, "getUser" | "headers" | "overrideAccess">,
): Promise<(record: Readonly<Record<string, unknown>>) => Promise<boolean>> {
  const scope = await readScope(rt, ctx);
  if (typeof scope === "boolean") return async () => scope;
  return recordJudge(rt, scope);
}

/** The caller's read rule: every record (true), none (false), or those its condition matches. */
async function readScope(
  rt: ResourceRuntime,
  ctx: Pick<EndpointContext, "getUser" | "headers" | "overrideAccess">,
): Promise<Condition | boolean> {
  if (ctx.overrideAccess) return true;
  const user = await ctx.getUser();
  const access = { user, headers: ctx.headers, operation: "read" as const, resource: rt.resource.name };
  const admission = await unlessForbidden(decide(rt, access), null);
  if (admission === null) return false;
  return admission.scope ?? true;
}

/** Whether `body` gives a value (not null) for every field of the record `condition` names. */
function givesEvery(condition: Condition, body: unknown): boolean {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return false;
  const given = (field: string) =>
    Object.hasOwn(body, field) && (body as Record<string, unknown>)[field] != null;
  const every = (c: Condition): boolean => {
    if (c.kind === "and" || c.kind === "or") return c.items.every(every);
    if (c.kind === "not") return every(c.item);
    return given(c.kind === "related" ? c.via : c.field);
  };
  return every(condition);
}
