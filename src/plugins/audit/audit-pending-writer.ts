// PostgreSQL's pending entries (audit-seal-function.ts), placed by the writer itself. A
// transaction's first entry takes its number from the order sequence inside its INSERT and reads
// its place back; its later entries follow at number × 2^24 + 1, + 2, …, counted here. The place
// is the same as the pending function makes (so one sealer orders both kinds), without a PL/pgSQL
// call in every write: that call (a security-definer function setting two transaction-local
// settings) cost 8 audited writers a tenth of their throughput (bench/webhooks.ts, "audit chain
// cost"). It needs the right to use the sequence, which the role that made it has; another role
// gets the pending function instead (audit-keeping.ts).

import { type Kysely, sql } from "kysely";
import type { PluginContext } from "../../core/plugin.ts";
import { compileTemplate, type QueryTemplate, runTemplate, slot } from "../../kit/index.ts";
import { type ChainWriter, columnsOfEntry, entryDigest } from "./audit-chain.ts";
import { PENDING_SEQ, POSITIONS } from "./audit-seal-function.ts";
import { AUDIT_LOGS, toRow } from "./audit-table.ts";

/** Where a transaction's entries go: its number × 2^24, and the position of its next entry. */
interface Placed {
  base: bigint;
  next: number;
}

/**
 * @param order The order sequence's name, quoted and schema-qualified (`"public"."crudkit_…"`).
 */
export function pendingWriter(app: PluginContext, order: string): ChainWriter {
  // Keyed by the write's transaction: it goes with it.
  const placed = new WeakMap<Kysely<any>, Placed>();
  let numbered: QueryTemplate | undefined;
  let following: QueryTemplate | undefined;
  const template = (row: Record<string, unknown>, hash: unknown) =>
    app.db
      .insertInto(AUDIT_LOGS)
      .values(Object.fromEntries(Object.keys(row).map((c) => [c, c === "hash" ? hash : slot(c)])));

  return {
    async append(db, entry) {
      const digest = entryDigest(columnsOfEntry(entry));
      const place = db.isTransaction ? placed.get(db) : undefined;
      if (place) {
        if (place.next >= POSITIONS)
          throw new Error(`audit(): one transaction wrote more than ${POSITIONS} audit entries`);
        const hash = `${(place.base + BigInt(place.next++)).toString(16).padStart(16, "0")}:${digest}`;
        const row = toRow(entry, app.profile, { seq: PENDING_SEQ, hash });
        following ??= compileTemplate(template(row, slot("hash")));
        await runTemplate(db, following, row);
        return;
      }
      const row = toRow(entry, app.profile, { seq: PENDING_SEQ, hash: digest });
      numbered ??= compileTemplate(
        template(
          row,
          sql`lpad(to_hex(nextval(${sql.lit(order)}::regclass) * ${sql.lit(POSITIONS)}), 16, '0') || ':' || ${slot("hash")}`,
        ).returning("hash"),
      );
      const { rows } = await runTemplate<{ hash: string }>(db, numbered, row);
      if (db.isTransaction) placed.set(db, { base: BigInt(`0x${rows[0]!.hash.slice(0, 16)}`), next: 1 });
    },
  };
}
