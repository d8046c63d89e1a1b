// Access to plugin routes (uploads, audit logs, cache stats): one rule per operation, denied when
// unset, decided before any lookup. Server calls with `overrideAccess` skip it.

import type { EndpointContext } from "./endpoint.ts";
import { APIError } from "./errors.ts";
import type { MaybePromise, User } from "./identity.ts";

/** `true` allows everyone, `false` nobody, a function decides per request. */
export type PluginRule<Ctx> = boolean | ((ctx: Ctx) => MaybePromise<boolean>);

export interface PluginRuleSite {
  /** The plugin's factory, for the message: `upload`. */
  plugin: string;
  /** What is protected, for the message: `uploads`. */
  subject: string;
  operation: string;
}

/** Checks the rule and returns the caller. */
export async function authorizePluginRoute<Ctx extends { user: User | null; headers: Headers }>(
  rule: PluginRule<Ctx> | undefined,
  ctx: EndpointContext,
  site: PluginRuleSite,
  extra?: Omit<Ctx, "user" | "headers">,
): Promise<User | null> {
  const user = await ctx.getUser();
  if (ctx.overrideAccess) return user;
  if (rule === undefined) {
    throw new APIError(
      "FORBIDDEN",
      `Access denied: no access rule is set for ${site.operation} on ${site.subject}. Set access.${site.operation} in ${site.plugin}() to allow it.`,
    );
  }
  const allowed =
    typeof rule === "function" ? await rule({ user, headers: ctx.headers, ...extra } as Ctx) : rule;
  if (allowed !== true) {
    throw new APIError(
      "FORBIDDEN",
      `Access denied: the ${site.operation} rule of ${site.subject} refused this request.`,
    );
  }
  return user;
}
