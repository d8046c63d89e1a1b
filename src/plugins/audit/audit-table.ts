// The `audit_logs` table and its rows as API entries, indexed for the filters of GET /audit/logs
// (each filter, newest first).

import {
  type DialectProfile,
  dateFromColumn,
  dateToColumn,
  jsonFromColumn,
  type TableDefinition,
  tableFilterFields,
} from "../../kit/index.ts";

export const AUDIT_LOGS = "audit_logs";

export const auditLogsTable: TableDefinition = {
  name: AUDIT_LOGS,
  columns: {
    id: { type: "text", primaryKey: true, notNull: true },
    created_at: { type: "date", notNull: true, defaultNow: true },
    resource: { type: "text", notNull: true },
    operation: { type: "text", notNull: true },
    record_id: { type: "text" },
    user_id: { type: "text" },
    source: { type: "text", notNull: true, enumValues: ["http", "server", "override"] },
    ip: { type: "text" },
    user_agent: { type: "text" },
    before: { type: "json" },
    after: { type: "json" },
    changes: { type: "json" },
    // The entry of the change this one follows from (a cascade's delete or set-null).
    caused_by: { type: "text" },
    // The tenant the entry belongs to (`audit({ scope })`): an organization's id, say.
    scope: { type: "text" },
    // Its place in the hash chain and its link (audit-chain.ts); null on entries written before it.
    seq: { type: "integer" },
    hash: { type: "text" },
  },
  indexes: [
    { name: "audit_logs_created_at_id_idx", columns: ["created_at", "id"] },
    { name: "audit_logs_resource_idx", columns: ["resource", "operation", "created_at"] },
    { name: "audit_logs_record_id_idx", columns: ["record_id", "created_at"] },
    { name: "audit_logs_user_id_idx", columns: ["user_id", "created_at"] },
    // Not unique: the planner cannot yet add a unique index with its column to an existing table,
    // and the head's lock already gives each entry its own seq (verify reports a repeated one).
    { name: "audit_logs_seq_idx", columns: ["seq"] },
  ],
};

/**
 * With `audit({ scope })`, entries are read per tenant: an index on it. Only then: every index
 * is one more page each write writes (about 30 µs per audited update on SQLite, measured).
 */
export const scopedAuditLogsTable: TableDefinition = {
  ...auditLogsTable,
  indexes: [
    ...(auditLogsTable.indexes ?? []),
    { name: "audit_logs_scope_idx", columns: ["scope", "created_at"] },
  ],
};

/** `cascade`: crudkit made the change because of another (`causedBy` names that one's entry). */
export type AuditSource = "http" | "server" | "override" | "cascade";

/** What a read rule's `Where` may name on entries, and the columns behind them. */
export const auditFilterFields = tableFilterFields([
  ["id", "string", "id"],
  ["createdAt", "date", "created_at"],
  ["resource", "string", "resource"],
  ["operation", "string", "operation"],
  ["recordId", "string", "record_id"],
  ["userId", "string", "user_id"],
  ["ip", "string", "ip"],
  ["scope", "string", "scope"],
]);

/** The entry without the fields of its record the reader may not see (field rules). */
export function withoutHiddenFields(entry: AuditEntry, hidden: ReadonlySet<string>): AuditEntry {
  if (hidden.size === 0) return entry;
  const strip = <T extends Record<string, unknown> | null>(value: T): T =>
    value && (Object.fromEntries(Object.entries(value).filter(([key]) => !hidden.has(key))) as T);
  return { ...entry, before: strip(entry.before), after: strip(entry.after), changes: strip(entry.changes) };
}

/** One entry as GET /audit/logs returns it. */
export interface AuditEntry {
  id: string;
  /** ISO 8601. */
  createdAt: string;
  resource: string;
  /** `create`, `update`, `delete`, and `read` or `list` when reads are recorded. */
  operation: string;
  recordId: string | null;
  userId: string | null;
  /** `http` for requests, `server` for `app.api` calls, `override` for calls with `overrideAccess`. */
  source: AuditSource;
  ip: string | null;
  userAgent: string | null;
  before: Record<string, unknown> | null;
  after: Record<string, unknown> | null;
  /** Fields an update changed: `{ price: { from: 10, to: 12 } }`. */
  changes: Record<string, { from: unknown; to: unknown }> | null;
  /** For `source: "cascade"`: the id of the entry of the change this one follows from. */
  causedBy: string | null;
  /** The tenant the record belongs to, with `audit({ scope })`: its organization's id, say. */
  scope: string | null;
}

/** The entry's columns, with its place in the chain (`seq`, `hash`: see audit-chain.ts). */
export function toRow(
  entry: AuditEntry,
  profile: DialectProfile,
  /** Its place in the hash chain; null for an app with `audit({ chain: false })`. */
  link: { seq: number | null; hash: string } | null,
): Record<string, unknown> {
  return {
    id: entry.id,
    created_at: dateToColumn(entry.createdAt, profile),
    resource: entry.resource,
    operation: entry.operation,
    record_id: entry.recordId,
    user_id: entry.userId,
    source: entry.source,
    ip: entry.ip,
    user_agent: entry.userAgent,
    before: json(entry.before),
    after: json(entry.after),
    changes: json(entry.changes),
    caused_by: entry.causedBy,
    scope: entry.scope,
    seq: link?.seq ?? null,
    hash: link?.hash ?? null,
  };
}

/** `log` hears of a stored value that cannot be read back; the entry still answers. */
export function toEntry(
  row: Record<string, unknown>,
  log: (message: string, error: unknown) => void,
): AuditEntry {
  const createdAt = row.created_at;
  return {
    id: String(row.id),
    createdAt: dateFromColumn(createdAt),
    resource: String(row.resource),
    operation: String(row.operation),
    recordId: (row.record_id as string | null) ?? null,
    userId: (row.user_id as string | null) ?? null,
    // Stored as the request's own source; shown as what it is, a change that followed another.
    source: row.caused_by ? "cascade" : (row.source as AuditSource),
    ip: (row.ip as string | null) ?? null,
    userAgent: (row.user_agent as string | null) ?? null,
    before: jsonFromColumn(row.before, log) ?? null,
    after: jsonFromColumn(row.after, log) ?? null,
    changes: jsonFromColumn(row.changes, log) ?? null,
    causedBy: (row.caused_by as string | null) ?? null,
    scope: (row.scope as string | null) ?? null,
  };
}

function json(value: unknown): string | null {
  return value === null || value === undefined ? null : JSON.stringify(value);
}
