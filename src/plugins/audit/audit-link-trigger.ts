// PostgreSQL links audit entries at COMMIT, in the database. A write inserts its entry with no seq
// and its digest in `hash`; a deferred constraint trigger then, as the transaction commits, moves
// the head row on (its row lock taken there) and gives the entry its seq and link. The head stays
// locked only while the commit itself runs, so 8 writers keep most of their throughput, where a
// lock taken in the write is held through every round trip to the app until the commit. A
// rolled-back write's entry, and the trigger's pending event with it, never reach the chain.

import { type Kysely, sql } from "kysely";
import { AUDIT_CHAIN, HEAD_ID } from "./audit-chain.ts";
import { AUDIT_LOGS } from "./audit-table.ts";

/**
 * The link function's version, in its name: a new body gets a new number, never a new body under
 * an old name. An instance finding an older one replaces it; one finding a newer one leaves it and
 * links in its writes instead.
 */
const VERSION = 1;
const FUNCTION = `crudkit_audit_link_v${VERSION}`;
const TRIGGER = "audit_logs_link";

class NewerTrigger extends Error {}

/** The version of the link function the trigger calls; undefined without a trigger. */
async function installedVersion(db: Kysely<any>): Promise<number | undefined> {
  const [row] = (
    await sql<{ name: string }>`select p.proname as name from pg_trigger t
      join pg_proc p on p.oid = t.tgfoid
      where t.tgrelid = to_regclass(${AUDIT_LOGS}) and t.tgname = ${TRIGGER}`.execute(db)
  ).rows;
  if (!row) return undefined;
  // A function of another name (someone's own) counts as older: replaced.
  return Number(/^crudkit_audit_link_v(\d+)$/.exec(row.name)?.[1] ?? 0);
}

/**
 * Makes the function and the trigger when missing or older (under an advisory lock: instances
 * start together; with a lock timeout: replacing the trigger waits for the table's writers).
 * Answers false when the database refuses (no right to create them) or holds a newer version:
 * the caller then links in the write instead, which is slower and as sound.
 */
export async function ensureLinkTrigger(
  db: Kysely<any>,
  log: (message: string, error: unknown) => void,
): Promise<boolean> {
  const installed = await installedVersion(db);
  if (installed === VERSION) return true;
  try {
    if (installed !== undefined && installed > VERSION) throw new NewerTrigger();
    await db.transaction().execute(async (trx) => {
      await sql`set local lock_timeout = '5s'`.execute(trx);
      await sql`select pg_advisory_xact_lock(hashtext(${TRIGGER}))`.execute(trx);
      const current = await installedVersion(trx);
      if (current === VERSION) return;
      if (current !== undefined && current > VERSION) throw new NewerTrigger();
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
      error instanceof NewerTrigger
        ? `audit(): a newer crudkit links audit entries at commit on this database (trigger ${TRIGGER}); this instance links in each write instead`
        : `audit(): could not create the trigger that links audit entries at commit (${TRIGGER}); linking in each write instead, which holds the chain's head longer`,
      error instanceof NewerTrigger ? undefined : error,
    );
    return false;
  }
}

/**
 * The link function. It runs as its owner (`security definer`), so the app's role needs no right
 * to update audit entries, only to insert them; its search path is fixed to the tables' schema,
 * so no other schema of the caller's can stand in for them.
 */
async function createFunction(trx: Kysely<any>): Promise<void> {
  const [home] = (
    await sql<{ schema: string }>`select n.nspname as schema from pg_class c
      join pg_namespace n on n.oid = c.relnamespace where c.oid = to_regclass(${AUDIT_LOGS})`.execute(trx)
  ).rows;
  if (!home) throw new Error(`audit(): table ${AUDIT_LOGS} not found`);
  // The link is SHA-256 of "previous:seq:digest", as linkHash() computes it in verify().
  await sql`create or replace function ${sql.id(FUNCTION)}() returns trigger language plpgsql
    security definer set search_path = ${sql.id(home.schema)}, pg_temp as $body$
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
