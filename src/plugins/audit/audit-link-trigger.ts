// PostgreSQL links audit entries at COMMIT, in the database. A write inserts its entry with no seq
// and its digest in `hash`; a deferred constraint trigger then, as the transaction commits, moves
// the head row on (its row lock taken there) and gives the entry its seq and link. The head stays
// locked only while the commit itself runs, so 8 writers keep most of their throughput, where a
// lock taken in the write is held through every round trip to the app until the commit. A
// rolled-back write's entry, and the trigger's pending event with it, never reach the chain.

import { type Kysely, sql } from "kysely";
import { AUDIT_CHAIN, HEAD_ID } from "./audit-chain.ts";
import { AUDIT_LOGS } from "./audit-table.ts";

/** Versioned: a new body gets a new name, so instances of two versions never fight over one. */
const FUNCTION = "crudkit_audit_link_v1";
const TRIGGER = "audit_logs_link";

/**
 * Makes the function and the trigger when missing (under an advisory lock: instances start
 * together). Answers false when the database refuses (no right to create them): the caller then
 * links in the write instead, which is slower and as sound.
 */
export async function ensureLinkTrigger(
  db: Kysely<any>,
  log: (message: string, error: unknown) => void,
): Promise<boolean> {
  const present = async (trx: Kysely<any>) =>
    (
      await sql<{ name: string }>`select p.proname as name from pg_trigger t
        join pg_proc p on p.oid = t.tgfoid
        where t.tgrelid = to_regclass(${AUDIT_LOGS}) and t.tgname = ${TRIGGER}`.execute(trx)
    ).rows[0]?.name;
  if ((await present(db)) === FUNCTION) return true;
  try {
    await db.transaction().execute(async (trx) => {
      await sql`select pg_advisory_xact_lock(hashtext(${FUNCTION}))`.execute(trx);
      const current = await present(trx);
      if (current === FUNCTION) return;
      await createFunction(trx);
      if (current !== undefined)
        await sql`drop trigger ${sql.id(TRIGGER)} on ${sql.table(AUDIT_LOGS)}`.execute(trx);
      // Only entries that ask to be linked: a seq already given (imported) or no hash
      // (`audit({ chain: false })`, entries from before the chain) is left as it is.
      await sql`create constraint trigger ${sql.id(TRIGGER)} after insert on ${sql.table(AUDIT_LOGS)}
        deferrable initially deferred for each row
        when (new.seq is null and new.hash is not null)
        execute function ${sql.id(FUNCTION)}()`.execute(trx);
    });
    return true;
  } catch (error) {
    log(
      `audit(): could not create the trigger that links audit entries at commit (${TRIGGER}); linking in each write instead, which holds the chain's head longer`,
      error,
    );
    return false;
  }
}

async function createFunction(trx: Kysely<any>): Promise<void> {
  // The link is SHA-256 of "previous:seq:digest", as linkHash() computes it in verify().
  await sql`create or replace function ${sql.id(FUNCTION)}() returns trigger language plpgsql as $body$
    declare
      moved record;
    begin
      update ${sql.table(AUDIT_CHAIN)}
        set seq = seq + 1,
            hash = encode(sha256(convert_to(hash || ':' || (seq + 1)::text || ':' || new.hash, 'UTF8')), 'hex')
        where id = ${sql.lit(HEAD_ID)}
        returning seq, hash into moved;
      if not found then
        raise exception 'audit(): the chain''s head row (table ${sql.raw(AUDIT_CHAIN)}) is missing; restart the app.';
      end if;
      update ${sql.table(AUDIT_LOGS)} set seq = moved.seq, hash = moved.hash where id = new.id;
      return null;
    end
  $body$`.execute(trx);
}
