// Retention for a chained log: entries go from the start of the chain, a batch per transaction,
// and the head row records where the kept chain now starts (its first seq, and the hash that
// entry links to), so what is kept still verifies.

import type { PluginContext } from "../../core/plugin.ts";
import { dateToColumn } from "../../kit/index.ts";
import { AUDIT_CHAIN, HEAD_ID, readHead } from "./audit-chain.ts";
import { AUDIT_LOGS } from "./audit-table.ts";

/** Entries deleted per transaction: the head stays locked (audited writes wait) for one batch only. */
const BATCH = 1000;

/**
 * Deletes the entries written before `cutoff`; returns how many went. Chained entries go by seq,
 * up to the first one written at or after the cutoff (times of concurrent writers interleave a
 * little, so an entry a few milliseconds older may stay: never a gap); unchained ones by time.
 */
export async function pruneOlderThan(app: PluginContext, cutoff: Date): Promise<number> {
  const before = dateToColumn(cutoff, app.profile);
  const unchained = await app.db
    .deleteFrom(AUDIT_LOGS)
    .where("seq", "is", null)
    .where("hash", "is", null)
    .where("created_at", "<", before)
    .executeTakeFirst();
  let deleted = Number(unchained.numDeletedRows);
  const head = await readHead(app.db);
  if (!head) return deleted;
  const kept = await app.db
    .selectFrom(AUDIT_LOGS)
    .select((eb) => eb.fn.min("seq").as("seq"))
    .where("seq", ">=", head.firstSeq)
    .where("seq", "<=", head.seq)
    .where("created_at", ">=", before)
    .executeTakeFirst();
  const last = kept?.seq === null || kept?.seq === undefined ? head.seq : Number(kept.seq) - 1;
  for (;;) {
    const batch = await pruneBatch(app, last);
    if (batch === undefined) return deleted;
    deleted += batch;
  }
}

/** One batch up to seq `last`, under the head's lock; undefined when there is nothing left to do. */
function pruneBatch(app: PluginContext, last: number): Promise<number | undefined> {
  return app.db.transaction().execute(async (trx) => {
    const locking = trx.selectFrom(AUDIT_CHAIN).select("first_seq").where("id", "=", HEAD_ID);
    const head = await (app.profile.rowLocks ? locking.forUpdate() : locking).executeTakeFirst();
    const first = Number(head?.first_seq);
    if (!head || first > last) return undefined;
    // The last entry of the batch that is there (a gap is left for verify to report).
    const end = await trx
      .selectFrom(AUDIT_LOGS)
      .select(["seq", "hash"])
      .where("seq", ">=", first)
      .where("seq", "<=", Math.min(last, first + BATCH - 1))
      .orderBy("seq", "desc")
      .limit(1)
      .executeTakeFirst();
    if (!end) {
      app.log(
        `crudkit: audit retention stopped: no entry between seq ${first} and ${Math.min(last, first + BATCH - 1)} (run crudkit audit verify)`,
      );
      return undefined;
    }
    // From the kept chain's start: version 2's pending entries (seq -1, sealed later) are not in it yet.
    const result = await trx
      .deleteFrom(AUDIT_LOGS)
      .where("seq", ">=", first)
      .where("seq", "<=", end.seq)
      .executeTakeFirst();
    await trx
      .updateTable(AUDIT_CHAIN)
      .set({ first_seq: Number(end.seq) + 1, first_prev: String(end.hash) })
      .where("id", "=", HEAD_ID)
      .execute();
    return Number(result.numDeletedRows);
  });
}
