// Access to plugin routes (uploads, audit logs, cache stats): one rule per operation, denied when
// unset, decided before any lookup. Server calls with `overrideAccess` skip it. A row rule may
// answer with a `Where` over the plugin's records, as resource rules do.

import type { Expression, SqlBool } from "kysely";
import type { EndpointContext } from "../core/endpoint.ts";
import { APIError } from "../core/errors.ts";
import type { MaybePromise, User } from "../core/identity.ts";
import type { DialectProfile } from "../db/dialect.ts";
import { type Condition, type FilterField, parseRuleWhere, type Where } from "../query/where.ts";
import { compileWhere } from "../query/where-sql.ts";

/** `true` allows everyone, `false` nobody, a function decides per request. */
export type PluginRule<Ctx> = boolean | ((ctx: Ctx) => MaybePromise<boolean>);

/** Like `PluginRule`, and the function may return a `Where`: the records the caller may act on. */
export type PluginRowRule<Ctx, Rec> = boolean | ((ctx: Ctx) => MaybePromise<boolean | Where<Rec>>);

export interface PluginRuleSite {
  /** The plugin's factory, for the message: `upload`. */
  plugin: string;
  /** What is protected, for the message: `uploads`. */
  subject: string;
  operation: string;
}

/** The caller, and the rows a row rule lets her act on. */
export interface PluginAdmission {
  user: User | null;
  /** The rule's `Where` as SQL over the plugin's table; undefined for every row. */
  scope: Expression<SqlBool> | undefined;
}

/** Checks the rule and returns the caller. */
export async function authorizePluginRoute<Ctx extends { user: User | null; headers: Headers }>(
  rule: PluginRule<Ctx> | undefined,
  ctx: EndpointContext,
  site: PluginRuleSite,
  extra?: Omit<Ctx, "user" | "headers" | "db" | "cache">,
): Promise<User | null> {
  const user = await ctx.getUser();
  if (ctx.overrideAccess) return user;
  const allowed = await ask(
    rule,
    { user, headers: ctx.headers, db: ctx.db, cache: ctx.cache, ...extra } as unknown as Ctx,
    site,
  );
  if (allowed !== true) throw refused(site);
  return user;
}

/**
 * Checks a row rule: a `Where` it answers is checked against `fields` (the table's, with their
 * columns) and returned as SQL to add to the route's query.
 */
export async function admitPluginRows<Ctx extends { user: User | null; headers: Headers }, Rec>(
  rule: PluginRowRule<Ctx, Rec> | undefined,
  ctx: EndpointContext,
  site: PluginRuleSite & {
    fields: ReadonlyMap<string, FilterField>;
    profile: DialectProfile;
    /** Makes a rule's sets of another resource's values (`memberOf`) SQL: `PluginContext.ruleSets`. */
    sets?: (condition: Condition) => Condition;
  },
  extra?: Omit<Ctx, "user" | "headers" | "db" | "cache">,
): Promise<PluginAdmission> {
  const user = await ctx.getUser();
  if (ctx.overrideAccess) return { user, scope: undefined };
  const answer = await ask(
    rule,
    { user, headers: ctx.headers, db: ctx.db, cache: ctx.cache, ...extra } as unknown as Ctx,
    site,
  );
  if (answer === true) return { user, scope: undefined };
  if (typeof answer !== "object" || answer === null || Array.isArray(answer)) throw refused(site);
  const named = `the ${site.operation} rule of ${site.subject}`;
  const parsed = parseRuleWhere(answer, site.fields, named);
  let condition = parsed;
  try {
    if (parsed && site.sets) condition = site.sets(parsed);
  } catch (error) {
    throw new Error(`crudkit: ${named} returned an invalid filter: ${(error as Error).message}`);
  }
  return { user, scope: condition && compileWhere(condition, site.fields, site.profile).expression() };
}

async function ask<Ctx>(
  rule: PluginRowRule<Ctx, unknown> | undefined,
  ctx: Ctx,
  site: PluginRuleSite,
): Promise<unknown> {
  if (rule === undefined) {
    throw new APIError(
      "FORBIDDEN",
      `Access denied: no access rule is set for ${site.operation} on ${site.subject}. Set access.${site.operation} in ${site.plugin}() to allow it.`,
    );
  }
  return typeof rule === "function" ? await rule(ctx) : rule;
}

function refused(site: PluginRuleSite): APIError {
  return new APIError(
    "FORBIDDEN",
    `Access denied: the ${site.operation} rule of ${site.subject} refused this request.`,
  );
}
