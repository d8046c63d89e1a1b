// ownedBy(): the commonest row rule. Each signed-in user creates records in her own name and
// reads, lists, changes and deletes only those.

import type { User } from "../core/identity.ts";
import { checkOptionKeys, optionKeys } from "../core/option-keys.ts";
import type { AccessContext, ResourceAccess } from "./access.ts";

export interface OwnedByOptions {
  /** Users to whom ownership does not apply (admins): they act on every record. */
  bypass?: (user: User) => boolean;
}

const OWNED_BY_OPTION_KEYS = optionKeys<OwnedByOptions>()("bypass");

/**
 * Rules that scope a resource to its owner: `field` holds the creator's `user.id`, filled in on
 * create. Anonymous callers are denied. Spread it and override single rules as needed.
 *
 * @example
 * createResource({
 *   name: "order",
 *   schema: withId({ ownerId: z.string().optional(), total: z.number() }),
 *   access: { ...ownedBy("ownerId", { bypass: (u) => u.roles?.includes("admin") ?? false }) },
 * });
 */
export function ownedBy<const F extends string>(field: F, options: OwnedByOptions = {}) {
  checkOptionKeys(options, OWNED_BY_OPTION_KEYS, "ownedBy()");
  const { bypass } = options;
  const own = ({ user }: AccessContext) => {
    if (!user) return false;
    if (bypass?.(user)) return true;
    return { [field]: user.id } as Record<F, string>;
  };
  return {
    owner: field,
    ownerBypass: bypass,
    create: ({ user }: AccessContext) => user !== null,
    read: own,
    list: own,
    update: own,
    delete: own,
  } satisfies ResourceAccess<Record<F, unknown>>;
}
