// GET /audit/logs?resource&operation&recordId&userId&from&to&page&limit → { items, pagination },
// newest first, behind the audit plugin's own read rule.

import { z } from "zod";
import { defineEndpoint } from "../../core/define-endpoint.ts";
import type { User } from "../../core/identity.ts";
import type { PluginContext } from "../../core/plugin.ts";
import { authorizePluginRoute, type PluginRule } from "../../core/plugin-access.ts";
import { dateToColumn } from "../../db/column-values.ts";
import { newestFirstPage } from "../../db/newest-first-page.ts";
import { AUDIT_LOGS, type AuditEntry, toEntry } from "./audit-table.ts";

export interface AuditAccessContext {
  user: User | null;
  headers: Headers;
}

export type AuditAccessRule = PluginRule<AuditAccessContext>;

const name = z.string().min(1).max(200);
const instant = z
  .string()
  .max(40)
  .refine(
    (value) =>
      /^\d{4}-\d{2}-\d{2}([T ][\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/.test(value) &&
      !Number.isNaN(Date.parse(value)),
    {
      message: "Expected an ISO 8601 date or date-time.",
    },
  )
  .transform((value) => new Date(value).toISOString());

const auditQuery = z.strictObject({
  resource: name.optional(),
  operation: name.optional(),
  recordId: name.optional(),
  userId: name.optional(),
  /** Entries at or after this instant. */
  from: instant.optional(),
  /** Entries before this instant. */
  to: instant.optional(),
  page: z.coerce.number<number>().int().min(1).max(1_000_000).default(1),
  limit: z.coerce.number<number>().int().min(1).max(100).default(20),
});

export function auditLogsRoute(app: PluginContext, rule: AuditAccessRule | undefined) {
  return defineEndpoint({
    method: "GET",
    path: "/audit/logs",
    query: auditQuery,
    async handler(ctx) {
      await authorizePluginRoute(rule, ctx, { plugin: "audit", subject: "audit logs", operation: "read" });
      const filters = ctx.input.query;
      let query = ctx.db.selectFrom(AUDIT_LOGS);
      if (filters.resource) query = query.where("resource", "=", filters.resource);
      if (filters.operation) query = query.where("operation", "=", filters.operation);
      if (filters.recordId) query = query.where("record_id", "=", filters.recordId);
      if (filters.userId) query = query.where("user_id", "=", filters.userId);
      if (filters.from) query = query.where("created_at", ">=", dateToColumn(filters.from, app.dialect));
      if (filters.to) query = query.where("created_at", "<", dateToColumn(filters.to, app.dialect));
      return newestFirstPage<AuditEntry>(query, "created_at", filters, (row) => toEntry(row, app.log));
    },
  });
}
