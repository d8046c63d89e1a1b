// GET /audit/logs?resource&operation&recordId&userId&from&to&page&limit → { items, pagination },
// newest first, behind the audit plugin's own read rule.

import type { Kysely } from "kysely";
import { z } from "zod";
import { defineEndpoint } from "../../core/define-endpoint.ts";
import type { User } from "../../core/identity.ts";
import { dateFromIso } from "../../core/iso-date.ts";
import type { PluginContext } from "../../core/plugin.ts";
import type { RequestCache } from "../../core/request-cache.ts";
import {
  admitPluginRows,
  dateToColumn,
  newestFirstPage,
  PAGE_QUERY,
  type PluginRowRule,
  pageOf,
  parsePage,
  unknownParameter,
} from "../../kit/index.ts";
import type { EntrySource } from "./audit-entries.ts";
import { type AuditEntry, auditFilterFields, toEntry, withoutHiddenFields } from "./audit-table.ts";

export interface AuditAccessContext {
  user: User | null;
  headers: Headers;
  /** The database, with the server's authority. */
  db: Kysely<any>;
  /** This request's memo: a lookup made through it runs once however many rules ask. */
  cache: RequestCache;
}

/** May answer with a `Where` over entries, such as `{ userId: user.id }`: the reader sees only those. */
export type AuditAccessRule = PluginRowRule<AuditAccessContext, AuditEntry>;

/** Decides a read of the audit log (the log, its head): the caller and the entries she may see. */
export function admitAuditReader(
  app: PluginContext,
  rule: AuditAccessRule | undefined,
  ctx: Parameters<typeof admitPluginRows>[1],
) {
  return admitPluginRows(rule, ctx, {
    plugin: "audit",
    subject: "audit logs",
    operation: "read",
    fields: auditFilterFields,
    profile: app.profile,
    sets: (condition) => app.ruleSets(condition),
  });
}

const name = z.string().min(1).max(200);
const instant = z
  .string()
  .max(40)
  .refine((value) => dateFromIso(value) !== undefined, {
    message: "Expected an ISO 8601 date or date-time.",
  })
  .transform((value) => dateFromIso(value)!.toISOString());

const auditQuery = z.object({
  resource: name.optional(),
  operation: name.optional(),
  recordId: name.optional(),
  userId: name.optional(),
  /** Entries of one tenant (`audit({ scope })`). */
  scope: name.optional(),
  /** Entries at or after this instant. */
  from: instant.optional(),
  /** Entries before this instant. */
  to: instant.optional(),
  // Typed here for the client, checked by the one page parser every list uses (app defaultLimit,
  // maxLimit), so a bad value gets the same answer as on every other list.
  page: z.custom<number>().optional(),
  limit: z.custom<number>().optional(),
});

const AUDIT_PARAMETERS = Object.keys(auditQuery.shape);

/** @param entries Where entries are read from: the log, and on PostgreSQL its queue (audit-entries.ts). */
export function auditLogsRoute(app: PluginContext, rule: AuditAccessRule | undefined, entries: EntrySource) {
  return defineEndpoint({
    method: "GET",
    path: "/audit/logs",
    lists: true,
    doc: {
      summary: "Audit entries, newest first",
      tags: ["audit"],
      query: {
        ...PAGE_QUERY,
        resource: { type: "string" },
        operation: { type: "string" },
        recordId: { type: "string" },
        userId: { type: "string" },
        scope: { type: "string" },
        from: { type: "string", format: "date-time" },
        to: { type: "string", format: "date-time" },
      },
      response: pageOf({ type: "object", required: ["id", "createdAt", "resource", "operation"] }),
    },
    query: auditQuery,
    async handler(ctx) {
      const { user, scope } = await admitAuditReader(app, rule, ctx);
      // Unknown parameters get the answer every list gives them (the schema above lets them pass).
      for (const key of Object.keys(ctx.query))
        if (!AUDIT_PARAMETERS.includes(key)) throw unknownParameter(key, AUDIT_PARAMETERS, false);
      const filters = ctx.input.query;
      const page = parsePage(ctx.query, app.listLimits);
      let query = entries(ctx.readDb ?? ctx.db);
      if (scope) query = query.where(scope);
      if (filters.resource) query = query.where("resource", "=", filters.resource);
      if (filters.operation) query = query.where("operation", "=", filters.operation);
      if (filters.recordId) query = query.where("record_id", "=", filters.recordId);
      if (filters.userId) query = query.where("user_id", "=", filters.userId);
      if (filters.scope) query = query.where("scope", "=", filters.scope);
      if (filters.from) query = query.where("created_at", ">=", dateToColumn(filters.from, app.profile));
      if (filters.to) query = query.where("created_at", "<", dateToColumn(filters.to, app.profile));
      const result = await newestFirstPage<AuditEntry>(query, "created_at", page, (row) =>
        toEntry(row, app.log),
      );
      // A field the reader may not see is out of the entries' records too (once per resource on the page).
      if (ctx.overrideAccess) return result;
      const hidden = new Map<string, ReadonlySet<string>>();
      for (const entry of result.items)
        if (!hidden.has(entry.resource))
          hidden.set(entry.resource, await app.hiddenFields(entry.resource, { user, headers: ctx.headers }));
      // Nor is a record she may not read under its resource's row rules (through a cascade, say):
      // the entry stays, without its content.
      const items: AuditEntry[] = [];
      const readers = new Map<string, (record: Record<string, unknown>) => Promise<boolean>>();
      for (const entry of result.items) {
        let reads = readers.get(entry.resource);
        if (!reads) {
          reads = await app.snapshotJudge(entry.resource, ctx);
          readers.set(entry.resource, reads);
        }
        const judge = reads;
        const readable = async (record: Record<string, unknown> | null) =>
          record === null || (await judge(record));
        const shown =
          (await readable(entry.before)) && (await readable(entry.after))
            ? entry
            : { ...entry, before: null, after: null, changes: null };
        items.push(withoutHiddenFields(shown, hidden.get(entry.resource)!));
      }
      return { ...result, items };
    },
  });
}
