// audit(): an entry for every create, update and delete (and file upload and delete), written by
// the write's own `after<Op>` hook, inside its transaction: if the entry cannot be written the
// change rolls back, and a change that fails leaves no entry. Entries form a hash chain
// (audit-chain.ts) that `verify()` walks.

import { ConfigError } from "../../core/errors.ts";
import { checkOptionKeys, optionKeys } from "../../core/option-keys.ts";
import type { PluginContext } from "../../core/plugin.ts";
import { type AnyResourceHooks, type HookContext, traced } from "../../kit/index.ts";
import { auditChainTable, ensureHead } from "./audit-chain.ts";
import type { EntrySource } from "./audit-entries.ts";
import { buildEntry, type EntryChange, type EntryOptions } from "./audit-entry.ts";
import { auditHeadRoute } from "./audit-head-route.ts";
import { type ChainKeeping, chainKeeping } from "./audit-keeping.ts";
import { type AuditAccessRule, auditLogsRoute } from "./audit-logs-route.ts";
import { pruneOlderThan } from "./audit-prune.ts";
import { auditLogsTable, scopedAuditLogsTable } from "./audit-table.ts";
import { type ChainReport, type VerifyOptions, verifyChain } from "./audit-verify.ts";
import { historyRoutes } from "./history-route.ts";

export type AuditedOperation = "create" | "update" | "delete" | "read" | "list";

export interface AuditOptions {
  /** What to record. @default ["create", "update", "delete"] */
  operations?: readonly AuditedOperation[];
  /** Field names (`password`) or `resource.field` names stored as "[redacted]". */
  redact?: readonly string[];
  /**
   * Delete entries older than this many days, at startup and then hourly, from the start of the
   * hash chain (which then verifies from the first entry kept). @default keep forever
   */
  retentionDays?: number;
  /**
   * Chains entries by hash, so `verify()` finds one edited, deleted or reordered. On PostgreSQL
   * entries are linked just after they commit, by a sealer; elsewhere each audited write moves the
   * chain's head row on, locked until it commits, which costs concurrent writers throughput
   * (docs/plugins/audit.md, "A tamper-evident chain"). @default true
   */
  chain?: boolean;
  /** Who may read GET /audit/logs. Denied when unset. */
  access?: { read?: AuditAccessRule };
  /**
   * The tenant each entry belongs to, stored as its `scope`: the path from a record to its
   * organization's id (`"orgId"`, `"project.orgId"`, `"id"` on the organization itself), for every
   * resource or per resource name. The read rule can then be a `memberOf` on it, so an owner reads
   * her organization's trail: `read: memberOf(membership, { user: "userId", scope: "orgId", path: "scope", roles: ["owner"] })`.
   */
  scope?: string | Readonly<Record<string, string>>;
}

const HOUR = 60 * 60 * 1000;
const DAY = 24 * HOUR;

const AUDIT_OPTION_KEYS = optionKeys<AuditOptions>()("operations redact retentionDays access scope chain");

/**
 * An audit log: an entry per create, update and delete (and upload), written in the change's own
 * transaction, readable at `GET /audit/logs` by whom `access.read` allows. Entries are chained by
 * hash in commit order: `verify()` (and `crudkit audit verify`) finds an entry edited, deleted or
 * reordered; `GET /audit/head` gives the latest link to keep elsewhere.
 *
 * @example
 * audit({ redact: ["password"], retentionDays: 90, access: { read: ({ user }) => user?.roles?.includes("admin") === true } })
 */
export function audit(options: AuditOptions = {}) {
  if ("trustProxy" in options)
    throw new ConfigError(
      "audit({ trustProxy }) moved to crudkit({ trustProxy: [the proxies' addresses] }), which audit, rate limits and " +
        "idempotency keys share; it took the leftmost X-Forwarded-For address, which the client chooses.",
    );
  checkOptionKeys(options, AUDIT_OPTION_KEYS, "audit()");
  const operations = new Set(options.operations ?? ["create", "update", "delete"]);
  const entryOptions: EntryOptions = {
    redact: new Set(options.redact ?? []),
  };
  const scopePath = scopePaths(options.scope);
  const retentionDays = options.retentionDays;
  if (retentionDays !== undefined && !(retentionDays > 0))
    throw new Error("audit(): retentionDays must be a positive number of days.");
  let app: PluginContext | undefined;
  let timer: NodeJS.Timeout | undefined;

  const chained = options.chain !== false;
  // How entries join the chain; on PostgreSQL they are sealed after commit (audit-keeping.ts).
  const keeping = chainKeeping(chained);
  const record = async (ctx: HookContext, change: EntryChange) => {
    const path = scopePath(ctx.resource);
    if (path) {
      // The record's tenant after the change, or before it when it has none after (a set-null
      // cascade, a delete): the entry stays in the trail it belonged to.
      const of = async (record: Record<string, unknown> | null | undefined) =>
        record ? tenantOf(await app!.valueAt(ctx.resource, record, path, ctx.db)) : null;
      change.scope = (await of(change.after)) ?? (await of(change.before));
    }
    const entry = buildEntry(ctx, change, entryOptions);
    // ctx.db is the write's transaction: the entry, and the chain's head it moves on, commit or
    // roll back with the change.
    await traced("crudkit.audit.write", { "crudkit.resource": ctx.resource }, () =>
      keeping.writer(app!).append(ctx.db, entry),
    );
    // A recorded read's entry committed in append(); a write's commits with it (afterWriteCommit).
    if (!ctx.db.isTransaction) keeping.wake();
  };

  const hooks: AnyResourceHooks = {};
  if (operations.has("create"))
    hooks.afterCreate = (ctx) =>
      record(ctx, { operation: "create", recordId: idOf(ctx.record), after: ctx.record });
  if (operations.has("update"))
    hooks.afterUpdate = (ctx) =>
      record(ctx, { operation: "update", recordId: ctx.id, before: ctx.previous, after: ctx.record });
  if (operations.has("delete"))
    hooks.afterDelete = (ctx) => record(ctx, { operation: "delete", recordId: ctx.id, before: ctx.previous });
  if (operations.has("read")) hooks.afterRead = (ctx) => record(ctx, { operation: "read", recordId: ctx.id });
  if (operations.has("list")) hooks.afterList = (ctx) => record(ctx, { operation: "list", recordId: null });
  if (chained)
    // Every commit: a flag of "this instance wrote an entry" would let a commit that lands just
    // after a seal go unwoken. A wake costs nothing while a seal is due anyway.
    hooks.afterWriteCommit = () => keeping.wake();

  /** Deletes entries older than `retentionDays`; returns how many went. */
  async function prune(): Promise<number> {
    if (!app) throw new Error("audit(): prune() needs the app to be ready (await app.ready).");
    if (retentionDays === undefined) return 0;
    // Pending entries are sealed first (a prune goes from the chain's start, by seq); one that
    // cannot be sealed now is left out of this prune, not a reason to skip it.
    await keeping.sealFirst(app, "prune()");
    return pruneOlderThan(app, new Date(Date.now() - retentionDays * DAY));
  }

  /**
   * Walks the hash chain in seq order and recomputes every link: `{ ok: true, entries, head }`, or
   * the first bad entry (`at`), what is wrong with it (`problem`) and a `message` naming it.
   */
  async function verify(options: VerifyOptions = {}): Promise<ChainReport> {
    if (!app) throw new Error("audit(): verify() needs the app to be ready (await app.ready).");
    if (!chained)
      throw new ConfigError("audit({ chain: false }) keeps no hash chain: there is nothing to verify.");
    // What cannot be sealed now (the head row gone, say: the walk reports it) is left pending.
    await keeping.sealFirst(app, "verify()");
    return verifyChain(app, options);
  }

  /**
   * Links every entry committed so far into the chain. PostgreSQL queues entries and seals them
   * into `audit_logs` a few milliseconds after they commit (`verify()`, `prune()` and GET
   * /audit/head seal first; GET /audit/logs and the history routes read the queue too): call this
   * before reading `audit_logs` yourself. Elsewhere each entry is linked in its write and there is
   * nothing to do.
   */
  async function seal(): Promise<void> {
    if (!app) throw new Error("audit(): seal() needs the app to be ready (await app.ready).");
    await keeping.sealFirst(app);
  }

  return {
    id: "audit" as const,
    tables: [options.scope === undefined ? auditLogsTable : scopedAuditLogsTable, auditChainTable],
    hooks,
    endpoints: (context: PluginContext) => auditRoutes(context, keeping, options.access?.read, chained),
    async init(context: PluginContext) {
      app = context;
      if (chained) await ensureHead(context.db);
      await keeping.init(context);
      if (retentionDays === undefined) return;
      await prune();
      timer = setInterval(
        () => prune().catch((e) => context.log("crudkit: pruning audit logs failed", e)),
        HOUR,
      );
      timer.unref();
    },
    async close() {
      clearInterval(timer);
      await keeping.close();
    },
    prune,
    seal,
    verify,
  };
}

/** Which path names each resource's tenant; undefined for a resource that has none. */
function scopePaths(scope: AuditOptions["scope"]): (resource: string) => string | undefined {
  if (scope === undefined) return () => undefined;
  if (typeof scope === "string") {
    if (scope === "") throw new Error("audit(): scope must name a field or a path.");
    return () => scope;
  }
  if (typeof scope !== "object" || scope === null || Array.isArray(scope))
    throw new Error("audit(): scope must be a path, or paths by resource name.");
  const paths = new Map(Object.entries(scope));
  for (const [resource, path] of paths)
    if (typeof path !== "string" || path === "")
      throw new Error(`audit(): the scope of "${resource}" must name a field or a path.`);
  return (resource) => paths.get(resource);
}

/** A tenant as stored: text, or null where the record has none. */
function tenantOf(value: unknown): string | null {
  return typeof value === "string" || typeof value === "number" ? String(value) : null;
}

function idOf(record: Record<string, unknown>): string | null {
  return typeof record.id === "string" ? record.id : null;
}

/** The plugin's routes. Readers of entries read the log, and on PostgreSQL its queue (audit-entries.ts). */
function auditRoutes(
  context: PluginContext,
  keeping: ChainKeeping,
  rule: AuditAccessRule | undefined,
  chained: boolean,
) {
  const entries: EntrySource = (db) => keeping.entries(db);
  return [
    auditLogsRoute(context, rule, entries),
    ...(chained ? [auditHeadRoute(context, rule, () => keeping.sealFirst(context))] : []),
    ...historyRoutes(context, entries),
  ];
}
