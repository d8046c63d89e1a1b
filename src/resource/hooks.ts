// Hook points of a resource operation, in the order they run (DESIGN §4):
// identify → access → validate → before<Op> → [transaction: write + after<Op>] → after<Op>Commit → response.

import type { Kysely } from "kysely";
import type { MaybePromise, User } from "../core/identity.ts";
import type { RequestCache } from "../core/request-cache.ts";
import type { ServerApi } from "../core/server-api.ts";
import { traced, tracing } from "../core/tracing.ts";
import type { ListQuery, ListResult } from "../query/list-query.ts";
import type { Operation } from "./access.ts";

export interface HookContext {
  resource: string;
  operation: Operation;
  user: User | null;
  headers: Headers;
  source: "http" | "server";
  overrideAccess: boolean;
  /** The client's address for HTTP requests, when the host gives it. */
  ip: string | undefined;
  /** The database; inside `after<Op>` hooks of writes it is the write's transaction. */
  db: Kysely<any>;
  /**
   * The app's operations (`ctx.api.createMembership({ body })`), with validation, hooks, audit and
   * events, as the server (`asCaller: true` acts as the caller). Inside `after<Op>` hooks of writes
   * they run in the write's transaction: they commit, or roll back, with it, and their events go
   * out once it committed.
   */
  api: ServerApi;
  /** This request's memo (see `RequestCache`). */
  cache: RequestCache;
  /** Set on a change other changes follow from (a delete that cascades): its id, which they name. */
  changeId?: string;
  /** Set on a change crudkit made because of another (a cascade's delete or set-null): that change's id. */
  causedBy?: string;
}

export interface ResourceHooks<
  Rec = Record<string, unknown>,
  CreateData = Record<string, unknown>,
  UpdateData = Record<string, unknown>,
> {
  /** After validation; may return replacement data. Throwing refuses the create. */
  beforeCreate?: (ctx: HookContext & { data: CreateData }) => MaybePromise<CreateData | undefined | void>;
  /** Inside the create's transaction: throwing rolls the create back. */
  afterCreate?: (ctx: HookContext & { record: Rec }) => MaybePromise<void>;
  /** After the create committed; errors are logged, the caller still gets the record. */
  afterCreateCommit?: (ctx: HookContext & { record: Rec }) => MaybePromise<void>;
  beforeRead?: (ctx: HookContext & { id: string }) => MaybePromise<void>;
  /** May return a replacement record. */
  afterRead?: (ctx: HookContext & { id: string; record: Rec }) => MaybePromise<Rec | undefined | void>;
  /** After validation; `data` holds only the fields sent; may return replacement data. */
  beforeUpdate?: (
    ctx: HookContext & { id: string; data: UpdateData },
  ) => MaybePromise<UpdateData | undefined | void>;
  /** Inside the update's transaction, with the record before and after. */
  afterUpdate?: (ctx: HookContext & { id: string; record: Rec; previous: Rec }) => MaybePromise<void>;
  afterUpdateCommit?: (ctx: HookContext & { id: string; record: Rec; previous: Rec }) => MaybePromise<void>;
  beforeDelete?: (ctx: HookContext & { id: string }) => MaybePromise<void>;
  /** Inside the delete's transaction, with the deleted record. */
  afterDelete?: (ctx: HookContext & { id: string; previous: Rec }) => MaybePromise<void>;
  afterDeleteCommit?: (ctx: HookContext & { id: string; previous: Rec }) => MaybePromise<void>;
  /**
   * After any create, update or delete committed, with no record: for work that only needs to
   * know the resource changed (cache invalidation). Updates read no previous record for it.
   */
  afterWriteCommit?: (ctx: HookContext) => MaybePromise<void>;
  beforeList?: (ctx: HookContext & { query: ListQuery }) => MaybePromise<void>;
  /** May return a replacement result. */
  afterList?: (
    ctx: HookContext & { query: ListQuery; result: ListResult<Rec> },
  ) => MaybePromise<ListResult<Rec> | undefined | void>;
}

export type AnyResourceHooks = ResourceHooks<any, any, any>;
export type HookName = keyof ResourceHooks;

type HookFn = (ctx: any) => unknown;

/** The hooks of one resource and of every plugin, grouped per hook point, resource first. */
export type HookChain = { readonly [K in HookName]: readonly HookFn[] };

const HOOK_NAMES: readonly HookName[] = [
  "beforeCreate",
  "afterCreate",
  "afterCreateCommit",
  "beforeRead",
  "afterRead",
  "beforeUpdate",
  "afterUpdate",
  "afterUpdateCommit",
  "beforeDelete",
  "afterDelete",
  "afterDeleteCommit",
  "afterWriteCommit",
  "beforeList",
  "afterList",
];

export function chainHooks(all: readonly (AnyResourceHooks | undefined)[]): HookChain {
  const chain = {} as Record<HookName, HookFn[]>;
  for (const name of HOOK_NAMES)
    chain[name] = all.flatMap((hooks) => (hooks?.[name] ? [tracedHook(name, hooks[name] as HookFn)] : []));
  return chain;
}

/** A hook run in a span of its own when the request is traced (core/tracing.ts). */
function tracedHook(name: HookName, hook: HookFn): HookFn {
  const span = `crudkit.hook ${name}`;
  return (ctx) => {
    if (!tracing()) return hook(ctx);
    const resource = String((ctx as { resource?: unknown }).resource ?? "");
    return traced(span, { "crudkit.hook": name, "crudkit.resource": resource }, () => hook(ctx));
  };
}

/** Runs hooks in order; a hook that returns a value replaces the value the next one sees. */
export async function runTransforming<T>(
  hooks: readonly HookFn[],
  ctx: object,
  key: string,
  value: T,
): Promise<T> {
  let current = value;
  for (const hook of hooks) {
    const replaced = await hook(Object.assign({}, ctx, { [key]: current }));
    if (replaced !== undefined) current = replaced as T;
  }
  return current;
}

export async function runAll(hooks: readonly HookFn[], ctx: object): Promise<void> {
  for (const hook of hooks) await hook(ctx);
}

/** Post-commit hooks cannot undo the write, so their failures are logged rather than sent. */
export async function runAfterCommit(
  hooks: readonly HookFn[],
  ctx: object,
  log: (m: string, e: unknown) => void,
): Promise<void> {
  for (const hook of hooks) {
    try {
      await hook(ctx);
    } catch (error) {
      log("crudkit: an after-commit hook failed", error);
    }
  }
}
