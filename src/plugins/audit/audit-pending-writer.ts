// PostgreSQL's pending entries (audit-seal-function.ts): each goes into the queue table with its
// place in the order and its digest. A transaction's first entry takes its number from the order
// sequence inside its INSERT; its later entries follow at number × 2^24 + 1, + 2, …, counted here.
// The place is the same as the pending function makes (so one sealer orders both kinds), without
// a PL/pgSQL call in every write: that call (a security-definer function setting two
// transaction-local settings) cost 8 audited writers a tenth of their throughput (bench/webhooks.ts,
// "audit chain cost"). It needs the right to use the sequence, which the role that made it has;
// another role calls the pending function instead.

import { type Kysely, type RawBuilder, sql } from "kysely";
import type { PluginContext } from "../../core/plugin.ts";
import { compileTemplate, type QueryTemplate, runTemplate, slot } from "../../kit/index.ts";
import { type ChainWriter, columnsOfEntry, entryDigest } from "./audit-chain.ts";
import { AUDIT_PENDING, POSITIONS, pendingPlace } from "./audit-seal-function.ts";
import { toRow } from "./audit-table.ts";

/**
 * @param order The order sequence's name, quoted and schema-qualified (`"public"."crudkit_…"`), or
 *   undefined when this role may not use it: the pending function places the entries then.
 */
export function pendingWriter(app: PluginContext, order: string | undefined): ChainWriter {
  // Keyed by the write's transaction, the position of its next entry: it goes with it.
  const placed = new WeakMap<Kysely<any>, { next: number }>();
  let numbered: QueryTemplate | undefined;
  let following: QueryTemplate | undefined;
  const template = (row: Record<string, unknown>, place: RawBuilder<unknown>) =>
    compileTemplate(
      app.db
        .insertInto(AUDIT_PENDING)
        .values({ ...Object.fromEntries(Object.keys(row).map((c) => [c, slot(c)])), place }),
    );
  // The place is made in the INSERT. A transaction's later entries take its number back with
  // currval: the session's last number from the sequence, which is this transaction's (one
  // connection runs one transaction at a time, through PgBouncer too; crudkit writes a
  // transaction's entries through its one Kysely transaction, the key above). No RETURNING to
  // read: reading the number back cost each audited write a result to parse.
  const place = (number: RawBuilder<unknown>) =>
    sql`lpad(to_hex(${number} * ${sql.lit(POSITIONS)} + ${slot("position")}), 16, '0')`;

  return {
    async append(db, entry) {
      const { seq: _seq, hash: _hash, ...row } = toRow(entry, app.profile, null);
      const queued = { ...row, digest: entryDigest(columnsOfEntry(entry)) };
      if (!order) {
        numbered ??= template(queued, pendingPlace());
        await runTemplate(db, numbered, queued);
        return;
      }
      const later = db.isTransaction ? placed.get(db) : undefined;
      if (later) {
        if (later.next >= POSITIONS)
          throw new Error(`audit(): one transaction wrote more than ${POSITIONS} audit entries`);
        following ??= template(queued, place(sql`currval(${sql.lit(order)}::regclass)`));
        await runTemplate(db, following, { ...queued, position: later.next++ });
        return;
      }
      numbered ??= template(queued, place(sql`nextval(${sql.lit(order)}::regclass)`));
      await runTemplate(db, numbered, { ...queued, position: 0 });
      if (db.isTransaction) placed.set(db, { next: 1 });
    },
  };
}
