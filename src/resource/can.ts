// app.can(): asks a resource's rules about a caller without calling the operation, so a UI can
// hide a button it would refuse and a test can pin a policy.

import type { Kysely } from "kysely";
import type { EndpointContext } from "../core/endpoint.ts";
import { APIError, unlessForbidden } from "../core/errors.ts";
import type { User } from "../core/identity.ts";
import type { DialectProfile } from "../db/dialect.ts";
import { type Condition, isSubSelect, mapFieldConditions } from "../query/where.ts";
import { matchesWhere } from "../query/where-match.ts";
import { compileWhere } from "../query/where-sql.ts";
import { denied, type Operation } from "./access.ts";
import { decide, withOwner, withServerParts } from "./admission.ts";
import { gatesOf, mayNotWrite } from "./field-access.ts";
import { newRecord } from "./operations/create.ts";
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
    // A create rule's Where holds for the record as stored: asked of the database with the body.
    if (
      operation === "create" &&
      scope &&
      options.body !== undefined &&
      !(await wouldHold(rt, access.body, scope))
    )
      return { allowed: false, hiddenFields, reason: denied("create", rt.resource.name).message };
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

const UNDONE = Symbol("undone");

/**
 * Whether the record a create of `body` stores would match `scope`: made in a transaction, asked,
 * and undone. A body the create would refuse (invalid, a missing reference) throws its APIError.
 */
async function wouldHold(rt: ResourceRuntime, body: unknown, scope: Condition): Promise<boolean> {
  const record = newRecord(rt, rt.validator.create(body));
  let holds = false;
  try {
    await rt.db.transaction().execute(async (trx) => {
      await rt.store.insert(trx, record);
      holds = await rt.store.holds(trx, String(record.id), scope);
      throw UNDONE;
    });
  } catch (error) {
    if (error !== UNDONE) throw error;
  }
  return holds;
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
 * before or after). The rule is asked once, and the sets it names (a memberOf's groups) read once;
 * each snapshot is then judged in memory, and a condition on a record it references (a rule
 * through a relation, `project.orgId`) asks that record, as it is now, by its id.
 */
export async function snapshotReader(
  rt: ResourceRuntime,
  ctx: Pick<EndpointContext, "getUser" | "headers" | "overrideAccess">,
  profile: DialectProfile,
): Promise<(record: Readonly<Record<string, unknown>>) => Promise<boolean>> {
  if (ctx.overrideAccess) return async () => true;
  const user = await ctx.getUser();
  const access = { user, headers: ctx.headers, operation: "read" as const, resource: rt.resource.name };
  const admission = await unlessForbidden(decide(rt, access), null);
  if (admission === null) return async () => false;
  if (!admission.scope) return async () => true;
  const scope = await withSetsRead(rt.db, admission.scope, profile);
  return async (record) => {
    const decided = matchesWhere(scope, record, rt.ruleFields);
    if (decided !== undefined) return decided;
    return matchesWhere(await withReferencesAsked(rt, scope, record), record, rt.ruleFields) === true;
  };
}

/** Each set a condition names (`in (select …)`), read now: a list the condition holds in memory. */
async function withSetsRead(
  db: Kysely<any>,
  condition: Condition,
  profile: DialectProfile,
): Promise<Condition> {
  const sets: Promise<unknown[]>[] = [];
  const queued = mapFieldConditions(condition, (c) => {
    if (!isSubSelect(c.value)) return c;
    const { table, column, where, fields } = c.value;
    let query = db.selectFrom(table).select(`${table}.${fields.get(column)?.column ?? column} as value`);
    if (where) query = query.where(compileWhere(where, fields, profile, "s").expression());
    sets.push(query.execute().then((rows) => rows.map((row) => row.value)));
    return { ...c, value: sets.length - 1 };
  });
  const lists = await Promise.all(sets);
  return mapFieldConditions(queued, (c) =>
    typeof c.value === "number" && (c.op === "in" || c.op === "nin") && !isSubSelect(c.value)
      ? { ...c, value: lists[c.value] }
      : c,
  );
}

const HOLDS: Condition = { kind: "and", items: [] };
const FAILS: Condition = { kind: "or", items: [] };

/**
 * `condition` with each condition on a referenced record answered: that record, by the id the
 * snapshot holds, as it is now (none, or gone: the condition fails).
 */
async function withReferencesAsked(
  rt: ResourceRuntime,
  condition: Condition,
  record: Readonly<Record<string, unknown>>,
): Promise<Condition> {
  switch (condition.kind) {
    case "and":
    case "or":
      return {
        kind: condition.kind,
        items: await Promise.all(condition.items.map((item) => withReferencesAsked(rt, item, record))),
      };
    case "not":
      return { kind: "not", item: await withReferencesAsked(rt, condition.item, record) };
    case "related": {
      const id = record[condition.via];
      if (typeof id !== "string" || condition.through || condition.scope === false) return FAILS;
      const target = rt.runtimeOf(condition.table);
      const scope = condition.scope
        ? { kind: "and" as const, items: [condition.item, condition.scope] }
        : condition.item;
      return (await target.store.findById(rt.db, id, scope)) ? HOLDS : FAILS;
    }
    default:
      return condition;
  }
}
