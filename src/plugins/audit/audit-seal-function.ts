// PostgreSQL links audit entries just after they commit, in the database. A write inserts its
// entry into a queue table, `audit_pending`, and takes no lock at all: the row holds the entry's
// columns, where it goes in the order (below) and its digest. The sealer (audit-sealer.ts) then
// calls the function below, which locks the head row, moves every pending entry it can see into
// `audit_logs` with its seq and link, and moves the head on, in one short transaction. Writers
// never wait for each other at commit, where a head locked in each write (or at each commit)
// makes every writer queue behind the one committing: 8 writers kept 0.66 of their throughput
// that way.
//
// Version 2 inserted pending entries into `audit_logs` itself (seq -1) and updated them when
// sealing: an update that changes the indexed seq writes a new row version into each of the log's
// six indexes, which was four fifths of the sealing's cost (measured: 19 of 24 µs an entry). Moved
// from the queue, an entry is written into the log once, in its final form, by one INSERT a batch.
// The price: on PostgreSQL an entry shows in `audit_logs` when it is sealed, a few tens of
// milliseconds after its commit; crudkit's own readers (GET /audit/logs, the history routes,
// verify(), GET /audit/head) seal first, so they see every entry committed before them.
//
// The order: a transaction takes a number from a sequence when it writes its first entry, and
// numbers its entries in the order it writes them (the writer does, in its INSERTs:
// audit-pending-writer.ts; a role without the right to use the sequence calls the pending function
// below instead); the sealer takes what committed, by
// transaction number, then by position. So a transaction's entries stay together, in the order
// written (a cascade's children, then its parent). Two transactions that commit between two seals
// are chained in the order they wrote their first entries: for two writes of one record (whose
// first entry comes after the record's row lock) that is the order they committed.
//
// Older versions are left in place when found. Version 1 linked entries in a deferred trigger at
// COMMIT; version 2's instances still write entries into the log with seq -1 while they run, and
// this version seals those too. Every version moves the same head under the same lock, so
// instances of each kind keep one chain.

import { type Kysely, type RawBuilder, sql } from "kysely";
import { AUDIT_CHAIN, HEAD_ID } from "./audit-chain.ts";
import { AUDIT_LOGS } from "./audit-table.ts";

/** The queue of entries committed and not yet sealed (PostgreSQL). */
export const AUDIT_PENDING = "audit_pending";
/** Entries the log refused when they were sealed, kept out of the chain with the reason. */
export const AUDIT_REFUSED = "audit_refused";

/**
 * The function's version, in its name: a new body gets a new number, never a new body under an old
 * name. An instance finding a newer one leaves it and links in its writes instead.
 */
const VERSION = 3;
export const SEAL_FUNCTION = `crudkit_audit_seal_v${VERSION}`;
/** A pending entry's place in the order (see pendingPlace). */
const PENDING_FUNCTION = `crudkit_audit_pending_v${VERSION}`;
/** Transaction numbers, taken when a transaction writes its first entry. */
const PENDING_ORDER = "crudkit_audit_pending_order";
const NAME_PATTERN = "crudkit_audit_seal_v%";
const PENDING_PATTERN = "crudkit\\_audit\\_pending\\_v%";

/** The `seq` of version 2's pending entries in the log itself, which this version seals too. */
export const PENDING_SEQ = -1;
/** Entries one transaction may write: 2^24, so that the places of two never overlap. */
export const POSITIONS = 16777216;

/**
 * A pending entry's `place`: `transaction number × 2^24 + position in it`, as 16 hex digits (so
 * that text order is number order), as `00000000a3000002`. The sealer sorts by it. This is the
 * pending function's, for a role that may not use the order sequence itself.
 */
export function pendingPlace(): RawBuilder<string> {
  return sql<string>`${sql.id(PENDING_FUNCTION)}()`;
}

/**
 * The order sequence's name, quoted and schema-qualified, when this role may take numbers from it:
 * its writes then place their entries themselves (audit-pending-writer.ts). Undefined otherwise.
 */
export async function orderSequence(db: Kysely<any>): Promise<string | undefined> {
  const [row] = (
    await sql<{ name: string | null }>`select quote_ident(n.nspname) || '.' || quote_ident(s.relname) as name
      from pg_class c join pg_class s on s.relnamespace = c.relnamespace and s.relname = ${PENDING_ORDER}
        and s.relkind = 'S'
      join pg_namespace n on n.oid = c.relnamespace
      where c.oid = to_regclass(${AUDIT_LOGS}) and has_sequence_privilege(s.oid, 'USAGE')`.execute(db)
  ).rows;
  return row?.name ?? undefined;
}

class NewerFunction extends Error {}

/**
 * The highest version of the seal function in the database; undefined without one. Only a
 * function of the audit table's owner, running as its owner, counts: one another role made first
 * (anyone may create functions in `public` before PostgreSQL 15) is not trusted with the chain.
 */
async function installedVersion(db: Kysely<any>): Promise<number | undefined> {
  const rows = (
    await sql<{ name: string; trusted: boolean }>`select p.proname as name,
        (p.proowner = c.relowner and p.prosecdef) as trusted
      from pg_proc p join pg_class c on c.oid = to_regclass(${AUDIT_LOGS})
      where (p.proname like ${NAME_PATTERN} or p.proname like ${PENDING_PATTERN})
        and p.pronamespace = c.relnamespace`.execute(db)
  ).rows;
  if (rows.some((row) => !row.trusted))
    throw new Error(
      `audit(): a function named like ${SEAL_FUNCTION} or ${PENDING_FUNCTION} in the audit table's schema is not its owner's own (or does not run as its owner); drop it, then restart`,
    );
  // A version counts when both of its functions are there.
  const names = new Set(rows.map((row) => row.name));
  const versions = [...names].flatMap((name) => {
    const version = /^crudkit_audit_seal_v(\d+)$/.exec(name)?.[1];
    return version && names.has(`crudkit_audit_pending_v${version}`) ? [Number(version)] : [];
  });
  return versions.length ? Math.max(...versions) : undefined;
}

/**
 * Makes the seal function when missing (under an advisory lock: instances start together).
 * Answers false when the database refuses (no right to create it) or holds a newer version: the
 * caller then links in the write instead, which holds the head longer and is as sound.
 */
export async function ensureSealFunction(
  db: Kysely<any>,
  log: (message: string, error: unknown) => void,
): Promise<boolean> {
  try {
    const installed = await installedVersion(db);
    if (installed !== undefined && installed > VERSION) throw new NewerFunction();
    // The queue too: every audited write needs it, so one dropped since is made again.
    if (installed === VERSION && (await queueExists(db))) return true;
    await db.transaction().execute(async (trx) => {
      await sql`select pg_advisory_xact_lock(hashtext(${SEAL_FUNCTION}))`.execute(trx);
      const current = await installedVersion(trx);
      if (current !== undefined && current > VERSION) throw new NewerFunction();
      if (current === VERSION && (await queueExists(trx))) return;
      await createFunction(trx);
    });
    return true;
  } catch (error) {
    log(
      error instanceof NewerFunction
        ? `audit(): a newer crudkit seals audit entries on this database (function ${NAME_PATTERN}); this instance links in each write instead`
        : `audit(): could not create the function that seals audit entries after commit (${SEAL_FUNCTION}); linking in each write instead, which holds the chain's head longer`,
      error instanceof NewerFunction ? undefined : error,
    );
    return false;
  }
}

/** Whether the queue is there, beside the audit table. */
async function queueExists(db: Kysely<any>): Promise<boolean> {
  const [row] = (
    await sql<{ found: boolean }>`select exists (select from pg_class q join pg_class l
      on l.relnamespace = q.relnamespace and l.oid = to_regclass(${AUDIT_LOGS})
      where q.relname = ${AUDIT_PENDING} and q.relkind in ('r', 'p')) as found`.execute(db)
  ).rows;
  return row?.found === true;
}

/**
 * Whether this role may queue entries and have them sealed: insert into the queue and read it
 * (readers list queued entries), and call the seal function (and the pending function, without
 * the sequence). A role granted the audit table's rights before the queue existed gets the
 * queue's at its making (createQueue); one granted them otherwise may lack them: it links in each
 * write instead.
 */
export async function mayQueue(
  db: Kysely<any>,
  log: (message: string, error?: unknown) => void,
  placesItself: boolean,
): Promise<boolean> {
  const [row] = (
    await sql<{ may: boolean | null }>`select has_table_privilege(q.oid, 'INSERT')
        and has_table_privilege(q.oid, 'SELECT')
        and has_function_privilege(${`${SEAL_FUNCTION}(integer)`}, 'EXECUTE')
        and (${placesItself} or has_function_privilege(${`${PENDING_FUNCTION}()`}, 'EXECUTE')) as may
      from pg_class q join pg_class l on l.relnamespace = q.relnamespace and l.oid = to_regclass(${AUDIT_LOGS})
      where q.relname = ${AUDIT_PENDING}`.execute(db)
  ).rows;
  if (row?.may) return true;
  log(
    `audit(): this database role may not insert into and read ${AUDIT_PENDING}, the queue of audit entries to seal, or call ${SEAL_FUNCTION}; linking in each write instead, which holds the chain's head longer (grant insert, select on ${AUDIT_PENDING} and execute on the function to it)`,
  );
  return false;
}

/**
 * Entries queued that this instance will not seal (its chain is off, or it links in each write):
 * they are listed by instances that seal, and chained, once one runs. Said once, at start; said
 * nothing when this role may not read the queue.
 */
export async function warnOfStranded(
  db: Kysely<any>,
  log: (message: string, error?: unknown) => void,
): Promise<void> {
  const [row] = (
    await sql<{ n: number | null }>`select case when has_table_privilege(q.oid, 'SELECT')
        then (select count(*)::int from ${sql.table(AUDIT_PENDING)}) end as n
      from pg_class q join pg_class l on l.relnamespace = q.relnamespace and l.oid = to_regclass(${AUDIT_LOGS})
      where q.relname = ${AUDIT_PENDING} and q.relkind in ('r', 'p')`
      .execute(db)
      .catch(() => ({ rows: [] }))
  ).rows;
  if (row?.n)
    log(
      `audit(): ${row.n} audit entries wait in ${AUDIT_PENDING} and this instance does not seal them: they are not listed or chained until an instance that seals entries starts, or until \`select ${SEAL_FUNCTION}(500)\` is run until it answers 0`,
    );
}

/** The entry's columns, as the queue and the log both hold them (the log adds seq and hash). */
export const ENTRY_COLUMNS = [
  "id",
  "created_at",
  "resource",
  "operation",
  "record_id",
  "user_id",
  "source",
  "ip",
  "user_agent",
  "before",
  "after",
  "changes",
  "caused_by",
  "scope",
] as const;

/**
 * The queue, the pending function, and the seal function, which seals about `batch` pending
 * entries in order and answers how many. Both functions run as their owner (`security definer`),
 * so the app's role needs no right to write the log itself or to use the sequence, only to insert
 * into the queue; their search path is fixed to the tables' schema, so no other schema of the
 * caller's can stand in for them. Each statement of a PL/pgSQL function sees what committed before
 * it, so the pending entries are read after the head's lock is granted: every entry committed
 * before that is sealed by this call or was by an earlier one.
 */
async function createFunction(trx: Kysely<any>): Promise<void> {
  const [home] = (
    await sql<{ schema: string }>`select n.nspname as schema from pg_class c
      join pg_namespace n on n.oid = c.relnamespace where c.oid = to_regclass(${AUDIT_LOGS})`.execute(trx)
  ).rows;
  if (!home) throw new Error(`audit(): table ${AUDIT_LOGS} not found`);
  await sql`create sequence if not exists ${sql.id(home.schema, PENDING_ORDER)}`.execute(trx);
  await createQueue(trx, home.schema);
  await createPendingFunction(trx, home.schema);
  await createSealFunction(trx, home.schema);
}

/**
 * The seal function. The link is SHA-256 of "previous:seq:digest", as linkHash() computes it in
 * verify(). Its statements read by index whatever the tables' statistics say: a new table has
 * none, and a plan made then (a scan of the whole log for a few pending entries) would be kept. A
 * lock timeout: a session that holds the head (anyone may call the function) stalls sealers for
 * 2 s at most; they try again later.
 *
 * An entry the log refuses (its id already there, a constraint added to the log since, a row put in
 * the queue outside crudkit) must not stop the chain, nor leave a hole in it that verify() would
 * stop at for good: the batch is then sealed one entry at a time, linked again from the head, and
 * a refused entry goes to `audit_refused` with the reason, out of the chain, with a warning in the
 * server's log. Only integrity and data errors do that; any other (the disk, a lock, a cancel)
 * rolls the seal back, to be tried again.
 */
async function createSealFunction(trx: Kysely<any>, schema: string): Promise<void> {
  const columns = sql.join(ENTRY_COLUMNS.map((c) => sql.id(c)));
  const of = (table: string) => sql.join(ENTRY_COLUMNS.map((c) => sql.ref(`${table}.${c}`)));
  await sql`create or replace function ${sql.id(schema, SEAL_FUNCTION)}(batch integer) returns integer
    language plpgsql security definer set search_path = ${sql.id(schema)}, pg_temp
    set enable_seqscan = off set lock_timeout = '2s' as $body$
    declare
      head_seq bigint;
      head_hash text;
      last_seq bigint;
      last_hash text;
      next_hash text;
      pending record;
      txn text;
      sealed integer := 0;
      -- In order: queued (true, by place) or version 2's, in the log (false, by id).
      queued boolean[] := '{}';
      keys text[] := '{}';
      digests text[] := '{}';
      seqs bigint[] := '{}';
      hashes text[] := '{}';
    begin
      -- The poll, when nothing is pending: no lock taken.
      if not exists (select from ${sql.table(AUDIT_PENDING)})
          and not exists (select from ${sql.table(AUDIT_LOGS)} where seq = ${sql.lit(PENDING_SEQ)}) then
        return 0;
      end if;
      select seq, hash into head_seq, head_hash from ${sql.table(AUDIT_CHAIN)}
        where id = ${sql.lit(HEAD_ID)} for update;
      if not found then
        raise exception 'audit(): the chain''s head row (table ${sql.raw(AUDIT_CHAIN)}) is missing; restart the app.';
      end if;
      last_seq := head_seq;
      last_hash := head_hash;
      -- In place order, the queue's entries with those version 2 left in the log; the loop stops
      -- once the batch is full, at the end of a transaction's entries, so that a transaction's
      -- entries are sealed together. A version 2 row not made by its pending function (no hash,
      -- no place) is sealed too, last, over an empty digest: it cannot stop the chain, and
      -- verify() reports it as edited.
      for pending in
          select place, digest, null::text as id from ${sql.table(AUDIT_PENDING)}
          union all
          select split_part(hash, ':', 1) collate "C", coalesce(split_part(hash, ':', 2), ''), id
            from ${sql.table(AUDIT_LOGS)} where seq = ${sql.lit(PENDING_SEQ)}
          order by 1 nulls last loop
        -- The first 10 hex digits are the transaction's number.
        exit when sealed >= batch and left(pending.place, 10) is distinct from txn;
        txn := left(pending.place, 10);
        last_seq := last_seq + 1;
        last_hash := encode(sha256(convert_to(last_hash || ':' || last_seq::text || ':' || pending.digest, 'UTF8')), 'hex');
        sealed := sealed + 1;
        queued := queued || (pending.id is null);
        keys := keys || coalesce(pending.id, pending.place);
        digests := digests || pending.digest;
        seqs := seqs || last_seq;
        hashes := hashes || last_hash;
      end loop;
      if sealed = 0 then
        return 0;
      end if;
      begin
        -- The batch in two statements: a statement per entry costs a statement's overhead each.
        with moved as (
          delete from ${sql.table(AUDIT_PENDING)} as entry
            using unnest(keys, seqs, hashes, queued) as link(key, seq, hash, queued)
            where link.queued and entry.place = link.key
            returning entry.*, link.seq as link_seq, link.hash as link_hash)
        insert into ${sql.table(AUDIT_LOGS)} (${columns}, seq, hash)
          select ${of("moved")}, moved.link_seq, moved.link_hash from moved;
        update ${sql.table(AUDIT_LOGS)} as logged set seq = link.seq, hash = link.hash
          from unnest(keys, seqs, hashes, queued) as link(key, seq, hash, queued)
          where not link.queued and logged.id = link.key;
      exception when integrity_constraint_violation or data_exception then
        last_seq := head_seq;
        last_hash := head_hash;
        for i in 1 .. sealed loop
          next_hash := encode(sha256(convert_to(last_hash || ':' || (last_seq + 1)::text || ':' || digests[i], 'UTF8')), 'hex');
          begin
            if queued[i] then
              with moved as (
                delete from ${sql.table(AUDIT_PENDING)} as entry where entry.place = keys[i] returning entry.*)
              insert into ${sql.table(AUDIT_LOGS)} (${columns}, seq, hash)
                select ${of("moved")}, last_seq + 1, next_hash from moved;
            else
              update ${sql.table(AUDIT_LOGS)} set seq = last_seq + 1, hash = next_hash where id = keys[i];
            end if;
            last_seq := last_seq + 1;
            last_hash := next_hash;
          exception when integrity_constraint_violation or data_exception then
            raise warning 'audit(): the audit log refused entry % (%); it is kept in ${sql.raw(AUDIT_REFUSED)}, out of the chain',
              keys[i], sqlerrm;
            if queued[i] then
              with gone as (
                delete from ${sql.table(AUDIT_PENDING)} as entry where entry.place = keys[i] returning entry.*)
              insert into ${sql.table(AUDIT_REFUSED)} (${columns}, place, digest, reason)
                select ${of("gone")}, gone.place, gone.digest, sqlerrm from gone;
            else
              with gone as (
                delete from ${sql.table(AUDIT_LOGS)} as entry where entry.id = keys[i] returning entry.*)
              insert into ${sql.table(AUDIT_REFUSED)} (${columns}, place, digest, reason)
                select ${of("gone")}, null, digests[i], sqlerrm from gone;
            end if;
          end;
        end loop;
      end;
      update ${sql.table(AUDIT_CHAIN)} set seq = last_seq, hash = last_hash where id = ${sql.lit(HEAD_ID)};
      return sealed;
    end
  $body$`.execute(trx);
}

/** The pending function: a queued entry's place, for a role that may not use the order sequence. */
async function createPendingFunction(trx: Kysely<any>, schema: string): Promise<void> {
  // The transaction's number and its last position are transaction-local settings: they go with
  // the transaction, and with a savepoint rolled back to, along with its entries.
  await sql`create or replace function ${sql.id(schema, PENDING_FUNCTION)}() returns text
    language plpgsql security definer set search_path = ${sql.id(schema)}, pg_temp as $body$
    declare
      txn bigint := nullif(current_setting('crudkit.audit_transaction', true), '')::bigint;
      position_in bigint := 0;
    begin
      if txn is null then
        txn := nextval(${sql.lit(`${schema}.${PENDING_ORDER}`)}::regclass);
        perform set_config('crudkit.audit_transaction', txn::text, true);
      else
        position_in := nullif(current_setting('crudkit.audit_position', true), '')::bigint + 1;
        if position_in >= ${sql.lit(POSITIONS)} then
          raise exception 'audit(): one transaction wrote more than ${sql.raw(String(POSITIONS))} audit entries';
        end if;
      end if;
      perform set_config('crudkit.audit_position', position_in::text, true);
      return lpad(to_hex(txn * ${sql.lit(POSITIONS)} + position_in), 16, '0');
    end
  $body$`.execute(trx);
}

/** The queue, with the grants the log has. */
async function createQueue(trx: Kysely<any>, schema: string): Promise<void> {
  // The queue's columns are the log's own (LIKE copies their types and NOT NULLs, no index), less
  // the link, plus the place (its key, in the order the sealer reads) and the digest.
  // Its CHECKs too: what the log would refuse, the queue refuses in the write, as the log did.
  await sql`create table if not exists ${sql.id(schema, AUDIT_PENDING)} (
      like ${sql.id(schema, AUDIT_LOGS)} including defaults including constraints)`.execute(trx);
  await sql`alter table ${sql.id(schema, AUDIT_PENDING)}
      drop column if exists seq, drop column if exists hash,
      add column if not exists place text collate "C" primary key,
      add column if not exists digest text not null`.execute(trx);
  // Refused entries (createSealFunction): the log's columns without its CHECKs, so that any entry
  // of the queue or the log fits, with where it was and why it was refused.
  await sql`create table if not exists ${sql.id(schema, AUDIT_REFUSED)} (
      like ${sql.id(schema, AUDIT_LOGS)} including defaults)`.execute(trx);
  await sql`alter table ${sql.id(schema, AUDIT_REFUSED)}
      drop column if exists seq, drop column if exists hash,
      add column if not exists place text, add column if not exists digest text,
      add column if not exists reason text, add column if not exists refused_at timestamptz not null default now()`.execute(
    trx,
  );
  // The roles that may write or read the log may do the same with the queue: an app role granted
  // the log's rights by the owner keeps working when the owner's instance makes the queue.
  const grants = (
    await sql<{ grantee: string; privilege: string }>`select case when a.grantee = 0 then 'public'
        else quote_ident(r.rolname) end as grantee, a.privilege_type as privilege
      from pg_class c cross join lateral aclexplode(c.relacl) a left join pg_roles r on r.oid = a.grantee
      where c.oid = to_regclass(${AUDIT_LOGS}) and a.privilege_type in ('INSERT', 'SELECT')
        and a.grantee <> c.relowner and (a.grantee = 0 or r.oid is not null)`.execute(trx)
  ).rows;
  for (const { grantee, privilege } of grants)
    await sql`grant ${sql.raw(privilege === "INSERT" ? "insert" : "select")} on ${sql.id(schema, AUDIT_PENDING)} to ${sql.raw(grantee)}`.execute(
      trx,
    );
}
