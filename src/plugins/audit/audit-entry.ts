// Builds an audit entry from a hook's context: who, from where, and what changed, with redacted
// fields replaced before anything is stored.

import { uuidv7 } from "../../core/id.ts";
import type { HookContext } from "../../kit/index.ts";
import type { AuditEntry } from "./audit-table.ts";

export const REDACTED = "[redacted]";

export interface EntryOptions {
  /** Field names, or `resource.field`, stored as "[redacted]". */
  redact: ReadonlySet<string>;
}

type Rec = Record<string, unknown>;

export interface EntryChange {
  operation: string;
  recordId: string | null;
  /** The record's tenant (`audit({ scope })`), as text. */
  scope?: string | null;
  before?: Rec | null;
  after?: Rec | null;
}

export function buildEntry(ctx: HookContext, change: EntryChange, options: EntryOptions): AuditEntry {
  // Nothing to redact (the usual case): the records are stored as they are, serialized at once.
  const hidden =
    options.redact.size === 0
      ? undefined
      : (key: string) => options.redact.has(key) || options.redact.has(`${ctx.resource}.${key}`);
  const hide = (record: Rec | null | undefined) =>
    record ? (hidden ? redact(record, hidden) : record) : null;
  // Changes are found on the real values, so a redacted field that changed still shows as changed.
  const found =
    change.operation === "update" && change.before && change.after ? diff(change.before, change.after) : null;
  const changes = found && hidden ? redactChanges(found, hidden) : found;
  return {
    // A delete others follow from is entered under its change id, which their entries name.
    id: ctx.changeId ?? uuidv7(),
    createdAt: new Date().toISOString(),
    resource: ctx.resource,
    operation: change.operation,
    recordId: change.recordId,
    userId: ctx.user?.id ?? null,
    source: ctx.overrideAccess ? "override" : ctx.source,
    // The client's address as the app works it out (crudkit({ trustProxy })), shared with rate limits.
    ip: clip(ctx.ip ?? null, 64),
    userAgent: clip(ctx.headers.get("user-agent"), 512),
    before: hide(change.before),
    after: hide(change.after),
    changes,
    causedBy: ctx.causedBy ?? null,
    scope: change.scope ?? null,
  };
}

type Changes = Record<string, { from: unknown; to: unknown }>;

function redact(record: Rec, hidden: (key: string) => boolean): Rec {
  const copy: Rec = { ...record };
  for (const key of Object.keys(copy)) if (hidden(key)) copy[key] = REDACTED;
  return copy;
}

function redactChanges(changes: Changes, hidden: (key: string) => boolean): Changes {
  for (const key of Object.keys(changes)) if (hidden(key)) changes[key] = { from: REDACTED, to: REDACTED };
  return changes;
}

function diff(before: Rec, after: Rec): Changes {
  const changes: Changes = {};
  for (const key in before) compare(changes, key, before[key], after[key]);
  for (const key in after) if (!(key in before)) compare(changes, key, undefined, after[key]);
  return changes;
}

/** Records are plain JSON values: primitives compare as they are, objects by their JSON. */
function compare(changes: Changes, key: string, before: unknown, after: unknown): void {
  const from = before ?? null;
  const to = after ?? null;
  if (from === to) return;
  if (typeof from !== "object" || typeof to !== "object" || JSON.stringify(from) !== JSON.stringify(to))
    changes[key] = { from, to };
}

function clip(value: string | null, max: number): string | null {
  return value === null ? null : value.slice(0, max);
}
