// PostgreSQL's pending entries (audit-seal-function.ts), placed by the writer itself. A
// transaction's first entry takes its number from the order sequence inside its INSERT; its later
// entries follow at number × 2^24 + 1, + 2, …, counted here. The place is the same as the pending
// function makes (so one sealer orders both kinds), without a PL/pgSQL call in every write: that
// call (a security-definer function setting two transaction-local settings) cost 8 audited writers
// a tenth of their throughput (bench/webhooks.ts, "audit chain cost"). It needs the right to use
// the sequence, which the role that made it has; another role gets the pending function instead
// (audit-keeping.ts).

import { type Kysely, type RawBuilder, sql } from "kysely";
import type { PluginContext } from "../../core/plugin.ts";
import { compileTemplate, type QueryTemplate, runTemplate, slot } from "../../kit/index.ts";
import { type ChainWriter, columnsOfEntry, entryDigest } from "./audit-chain.ts";
import { PENDING_SEQ, POSITIONS } from "./audit-seal-function.ts";
import { AUDIT_LOGS, toRow } from "./audit-table.ts";

/**
 * @param order The order sequence's name, quoted and schema-qualified (`"public"."crudkit_…"`).
 */
export function pendingWriter(app: PluginContext, order: string): ChainWriter {
  // Keyed by the write's transaction, the position of its next entry: it goes with it.
  const placed = new WeakMap<Kysely<any>, { next: number }>();
  let numbered: QueryTemplate | undefined;
  let following: QueryTemplate | undefined;
  const template = (row: Record<string, unknown>, hash: unknown) =>
    compileTemplate(
      app.db
        .insertInto(AUDIT_LOGS)
        .values(Object.fromEntries(Object.keys(row).map((c) => [c, c === "hash" ? hash : slot(c)]))),
    );
  // `hash` holds the digest; the place is made in the INSERT. A transaction's later entries take
  // its number back with currval: the session's last number from the sequence, which is this
  // transaction's (one connection runs one transaction at a time, through PgBouncer too; crudkit
  // writes a transaction's entries through its one Kysely transaction, the key above). No
  // RETURNING to read: reading the number back cost each audited write a result to parse.
  const place = (number: RawBuilder<unknown>) =>
    sql`lpad(to_hex(${number} * ${sql.lit(POSITIONS)} + ${slot("position")}), 16, '0') || ':' || ${slot("hash")}`;

  return {
    async append(db, entry) {
      const row = toRow(entry, app.profile, { seq: PENDING_SEQ, hash: entryDigest(columnsOfEntry(entry)) });
      const later = db.isTransaction ? placed.get(db) : undefined;
      if (later) {
        if (later.next >= POSITIONS)
          throw new Error(`audit(): one transaction wrote more than ${POSITIONS} audit entries`);
        following ??= template(row, place(sql`currval(${sql.lit(order)}::regclass)`));
        await runTemplate(db, following, { ...row, position: later.next++ });
        return;
      }
      numbered ??= template(row, place(sql`nextval(${sql.lit(order)}::regclass)`));
      await runTemplate(db, numbered, { ...row, position: 0 });
      if (db.isTransaction) placed.set(db, { next: 1 });
    },
  };
}
