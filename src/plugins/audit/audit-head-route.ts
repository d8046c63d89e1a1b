// GET /audit/head → { seq, hash }: the audit chain's last link, for another system to keep (an
// anchor), answered to readers of the whole log only.

import { defineEndpoint } from "../../core/define-endpoint.ts";
import { APIError } from "../../core/errors.ts";
import type { PluginContext } from "../../core/plugin.ts";
import { readHead } from "./audit-chain.ts";
import { type AuditAccessRule, admitAuditReader } from "./audit-logs-route.ts";

/** The chain's last link: the seq of the latest entry and its hash (hex SHA-256). */
export interface AuditHead {
  seq: number;
  hash: string;
}

export function auditHeadRoute(
  app: PluginContext,
  rule: AuditAccessRule | undefined,
  /** Links what committed before the request (PostgreSQL's sealer), so the head covers it. */
  sealed: () => Promise<void>,
) {
  return defineEndpoint({
    method: "GET",
    path: "/audit/head",
    doc: {
      summary: "The audit chain's latest sequence number and hash",
      tags: ["audit"],
      response: {
        type: "object",
        required: ["seq", "hash"],
        properties: { seq: { type: "integer" }, hash: { type: "string", pattern: "^[0-9a-f]{64}$" } },
      },
    },
    async handler(ctx): Promise<AuditHead> {
      const { scope } = await admitAuditReader(app, rule, ctx);
      // The hash covers every entry's whole content: a reader of some entries, given two heads in
      // a row, could test guesses of an entry she may not read against them.
      if (scope)
        throw new APIError(
          "FORBIDDEN",
          "Access denied: the audit chain's head covers every entry, and the read rule of audit logs lets this caller read only some (it answers a filter).",
        );
      for (const key of Object.keys(ctx.query)) throw unknownParameter(key);
      await sealed();
      const head = await readHead(ctx.db);
      if (!head)
        throw new APIError(
          "INTERNAL_ERROR",
          "The audit chain has no head row; run crudkit audit verify on the server.",
        );
      return { seq: head.seq, hash: head.hash };
    },
  });
}

function unknownParameter(name: string): APIError {
  const shown = /^[\x21-\x7e]{1,60}$/.test(name);
  return new APIError(
    "BAD_REQUEST",
    `Unknown query parameter${shown ? ` ${JSON.stringify(name)}` : ""}: GET /audit/head takes none.`,
    shown ? { details: [{ path: name, message: "Not a parameter of this route." }] } : {},
  );
}
