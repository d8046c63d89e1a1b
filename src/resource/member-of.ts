// memberOf(): the rule every multi-tenant app needs, "members see their organization's records",
// in one line and in SQL. The caller's memberships are not looked up per request: the rule is a
// semi-join the database answers with the record, through relations where the record reaches its
// group that way (`project.orgId`), with no copied column.

import type { User } from "../core/identity.ts";
import { checkOptionKeys, optionKeys } from "../core/option-keys.ts";
import { ValuesOf } from "../query/where.ts";
import type { AccessContext } from "./access.ts";
import type { AnyResource } from "./types.ts";

export interface MemberOfOptions {
  /** The membership's field holding the user's id. */
  user: string;
  /** The membership's field holding the group's id (an organization's, a team's). */
  scope: string;
  /**
   * How a record of the protected resource reaches the group's id: a field of its own (the
   * default: the same name as `scope`), `"id"` on the group itself, or a path through its
   * references, one or two hops (`"project.orgId"`).
   */
  path?: string;
  /** Only memberships whose `roleField` is one of these. */
  roles?: readonly string[];
  /** The membership's field holding the role. @default "role" */
  roleField?: string;
}

const MEMBER_OF_OPTION_KEYS = optionKeys<MemberOfOptions>()("user scope path roles roleField");

/** The rows a member may touch: a row rule. */
export type MemberRule = (ctx: Pick<AccessContext, "user">) => false | Record<string, unknown>;

/**
 * A row rule from a membership resource: a signed-in user reaches the records of the groups she is
 * a member of (with one of `roles`, when given). It compiles to `<path> in (select <scope> from
 * <membership> where <user> = ? [and role in (…)])`, one semi-join the database answers with each
 * statement, reads, lists, counts, updates, deletes, expansions and realtime alike; the membership
 * index it needs (`user`, `scope`) is added to the membership resource. Spread it for every
 * operation, or give it to one. A create must land in a group she is a member of (with one of
 * `roles`): the record as stored is checked in the write's transaction, and a create elsewhere is
 * refused (403) with nothing stored. On the group itself (`path: "id"`) a spread lets any
 * signed-in user create one.
 *
 * @example
 * const project = createResource({
 *   name: "project",
 *   schema: withId({ title: z.string(), orgId: references("organization") }),
 *   access: {
 *     ...memberOf("membership", { user: "userId", scope: "orgId" }),
 *     delete: memberOf("membership", { user: "userId", scope: "orgId", roles: ["owner"] }),
 *   },
 * });
 */
export function memberOf(membership: AnyResource | string, options: MemberOfOptions) {
  checkOptionKeys(options, MEMBER_OF_OPTION_KEYS, "memberOf()");
  const { user: userField, scope, path = scope, roles, roleField = "role" } = options;
  for (const [name, value] of Object.entries({ user: userField, scope, path, roleField }))
    if (typeof value !== "string" || value === "")
      throw new Error(`memberOf(): "${name}" must name a field, got ${String(value)}.`);
  if (roles !== undefined && (!Array.isArray(roles) || roles.some((r) => typeof r !== "string")))
    throw new Error("memberOf(): roles must be a list of strings.");
  const name = typeof membership === "string" ? membership : membership.name;
  if (typeof membership !== "string") needsIndex(membership, [userField, scope]);
  const rule: MemberRule = ({ user }) => {
    if (!user) return false;
    const mine: Record<string, unknown> = { [userField]: user.id };
    if (roles) mine[roleField] = { in: roles };
    // The roles are the rule's, the same for every member: written into its SQL (see `fixed`).
    return { [path]: { in: new ValuesOf(name, scope, mine, roles ? [roleField] : []) } };
  };
  paths.set(rule, path);
  return Object.assign(rule, {
    // A new group has no members yet: whoever is signed in may make one (and her membership, in
    // its afterCreate hook). Anything else is created into a group she is a member of.
    create: path === "id" ? ({ user }: { user: User | null }) => user !== null : rule,
    read: rule,
    list: rule,
    update: rule,
    delete: rule,
  });
}

/** Each memberOf rule's path: what rule-indexes.ts declares the indexes of. */
const paths = new WeakMap<object, string>();

/** The path of a rule memberOf() made, or undefined for any other rule. */
export function memberOfPath(rule: unknown): string | undefined {
  return typeof rule === "function" ? paths.get(rule) : undefined;
}

/** Adds `columns` to the resource's indexes unless an index or unique key already starts with them. */
function needsIndex(resource: AnyResource, columns: readonly string[]): void {
  const covers = (set: readonly string[]) => columns.every((c, i) => set[i] === c);
  if ([...resource.indexes, ...resource.unique].some(covers)) return;
  (resource.indexes as string[][]).push([...columns]);
}
