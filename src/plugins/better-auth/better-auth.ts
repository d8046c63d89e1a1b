// betterAuth(): the caller from a better-auth session. better-auth reads its own cookie (or
// bearer token, with its bearer plugin) from the request's headers; no session → anonymous.

import type { MaybePromise, User } from "../../core/identity.ts";
import { checkOptionKeys, optionKeys } from "../../core/option-keys.ts";
import type { CrudkitPlugin } from "../../core/plugin.ts";

/** What crudkit uses of a better-auth session. */
export interface BetterAuthSession {
  user: { id: string; role?: string | null; [key: string]: unknown };
  session: { id: string; [key: string]: unknown };
}

/** The part of a `betterAuth({...})` instance crudkit calls; typed loosely so any version fits. */
export interface BetterAuthLike {
  api: { getSession(context: { headers: Headers }): Promise<BetterAuthSession | null> };
}

export interface BetterAuthOptions {
  auth: BetterAuthLike;
  /** Maps a session to the user. @default `{ id, roles: role split on commas, email, name }` */
  user?: (session: BetterAuthSession) => MaybePromise<User | null>;
}

const BETTER_AUTH_OPTION_KEYS = optionKeys<BetterAuthOptions>()("auth user");

/**
 * Identifies callers by their better-auth session (cookie or bearer), through your `auth` instance.
 *
 * @example
 * import { betterAuth as createAuth } from "better-auth";
 * const auth = createAuth({ emailAndPassword: { enabled: true } });
 * crudkit({ database: { provider: "sqlite", url: "file:./data/app.db" }, resources, plugins: [betterAuth({ auth })] });
 */
export function betterAuth(options: BetterAuthOptions) {
  checkOptionKeys(options, BETTER_AUTH_OPTION_KEYS, "betterAuth()");
  const toUser = options.user ?? defaultUser;
  return {
    securitySchemes: {
      BetterAuthSession: { type: "apiKey", in: "cookie", name: "better-auth.session_token" },
    },
    id: "better-auth",
    async identify(request: Request): Promise<User | null> {
      const session = await options.auth.api.getSession({ headers: request.headers });
      return session ? await toUser(session) : null;
    },
  } satisfies CrudkitPlugin;
}

function defaultUser({ user }: BetterAuthSession): User {
  // better-auth's admin plugin keeps roles as one comma-separated string.
  const roles =
    typeof user.role === "string" && user.role !== "" ? user.role.split(",").map((r) => r.trim()) : [];
  return { id: user.id, roles, email: user.email, name: user.name };
}
