// Walks the audit chain in seq order, a page at a time (keyset on seq, so a large log costs no
// more per page than a small one), recomputes each link and stops at the first entry that does
// not match: edited, missing, out of order, or disagreeing with the head row or with an anchor.

import type { Kysely } from "kysely";
import type { PluginContext } from "../../core/plugin.ts";
import { type ChainHead, columnsOfRow, entryDigest, linkHash, readHead } from "./audit-chain.ts";
import { PENDING_SEQ } from "./audit-seal-function.ts";
import { AUDIT_LOGS } from "./audit-table.ts";

/**
 * What is wrong at the first bad entry: `edited` (its content or hash changed), `missing` (a seq
 * is absent: deleted), `out of order` (another entry stands in its place: swapped, reordered or
 * replaced), `head mismatch` (the last entry, or what is past it, disagrees with the head row),
 * `anchor mismatch` (the chain no longer leads to a head kept elsewhere: rewritten from an entry on).
 */
export type ChainProblem =
  | "edited"
  | "missing"
  | "out of order"
  | "head mismatch"
  | "anchor mismatch"
  | "unlinked";

export interface VerifyOptions {
  /** Entries read per query. @default 500 */
  pageSize?: number;
  /**
   * A head kept outside the database (`GET /audit/head` at some time): the entry at its seq must
   * still hash to it. Catches what the chain alone cannot: every link from an edit on recomputed.
   */
  anchor?: { seq: number; hash: string };
}

/** `verify()`'s answer. */
export type ChainReport =
  | {
      ok: true;
      /** Chained entries checked. */
      entries: number;
      /** Entries without a seq: written before the chain existed, and outside its guarantee. */
      unchained: number;
      /** The last link, as `GET /audit/head` gives it. */
      head: { seq: number; hash: string };
    }
  | {
      ok: false;
      /** Entries that verified before the bad one. */
      entries: number;
      unchained: number;
      /** The first bad entry: its seq, and its id (null for a missing one). */
      at: { seq: number; id: string | null };
      problem: ChainProblem;
      message: string;
    };

type Row = Record<string, unknown>;
type Failure = Extract<ChainReport, { ok: false }>;

const PAGE = 500;

/** Verifies the chain; walks again (twice at most) when a prune moved its start meanwhile. */
export async function verifyChain(app: PluginContext, options: VerifyOptions = {}): Promise<ChainReport> {
  const { pageSize = PAGE, anchor } = options;
  if (!Number.isInteger(pageSize) || pageSize < 1)
    throw new Error("audit(): verify({ pageSize }) takes a whole number of entries, 1 or more.");
  if (anchor && !(Number.isSafeInteger(anchor.seq) && anchor.seq >= 0 && /^[0-9a-f]{64}$/.test(anchor.hash)))
    throw new Error("audit(): verify({ anchor }) takes { seq, hash } as GET /audit/head answers them.");
  for (let attempt = 1; ; attempt++) {
    const head = await readHead(app.db);
    const unchained = await countUnchained(app.db);
    if (!head)
      return {
        ok: false,
        entries: 0,
        unchained,
        at: { seq: 0, id: null },
        problem: "head mismatch",
        message: "The chain's head row (table audit_chain) is missing: it was removed outside crudkit.",
      };
    const unlinked = await firstUnlinked(app.db);
    if (unlinked !== undefined)
      return {
        ok: false,
        entries: 0,
        unchained,
        at: { seq: 0, id: unlinked },
        problem: "unlinked",
        message: `Entry ${unlinked} was committed without its link (no seq): the trigger by which version 1 linked entries at commit (audit_logs_link) was disabled, dropped or skipped outside crudkit.`,
      };
    const report = await walk(app, head, unchained, { pageSize, anchor });
    if (report.ok || attempt === 3) return report;
    const now = await readHead(app.db);
    if (now?.firstSeq === head.firstSeq) return report;
  }
}

async function walk(
  app: PluginContext,
  head: ChainHead,
  unchained: number,
  { pageSize, anchor }: { pageSize: number; anchor: VerifyOptions["anchor"] },
) {
  let expected = head.firstSeq;
  let previous = head.firstPrev;
  let lastId: string | null = null;
  let entries = 0;
  const fail = (problem: ChainProblem, seq: number, id: string | null, message: string): Failure => ({
    ok: false,
    entries,
    unchained,
    at: { seq, id },
    problem,
    message,
  });
  if (
    anchor &&
    anchor.seq < head.firstSeq &&
    !(anchor.seq === head.firstSeq - 1 && anchor.hash === head.firstPrev)
  )
    return fail(
      "anchor mismatch",
      anchor.seq,
      null,
      anchor.seq === head.firstSeq - 1
        ? `The anchored hash of seq ${anchor.seq} is not the one the kept chain starts from.`
        : `The anchored seq ${anchor.seq} was pruned (the kept chain starts at seq ${head.firstSeq}): anchor a later head.`,
    );
  let after: Key | undefined;
  for (;;) {
    const rows = await page(app.db, after, head.seq, pageSize);
    for (let i = 0; i < rows.length; i++) {
      const row = rows[i]!;
      const seq = Number(row.seq);
      const id = String(row.id);
      if (seq < expected)
        return fail(
          "out of order",
          seq,
          id,
          seq < head.firstSeq
            ? `Entry seq ${seq} (id ${id}) precedes the chain's start, seq ${head.firstSeq}: it was put there outside crudkit.`
            : `Entry seq ${seq} (id ${id}) repeats the seq of entry ${lastId}: it was put there outside crudkit.`,
        );
      if (seq > expected)
        return fail(
          "missing",
          expected,
          null,
          `Entry seq ${expected} is missing (deleted): the next entry is seq ${seq} (id ${id}).`,
        );
      const computed = linkHash(previous, seq, entryDigest(columnsOfRow(row, app.log)));
      if (computed !== row.hash) {
        const next = rows[i + 1] ?? (await page(app.db, { seq, id }, head.seq, 1))[0];
        const [problem, message] = mismatch(app, head, row, computed, next);
        return fail(problem, seq, id, message);
      }
      if (anchor?.seq === seq && anchor.hash !== computed)
        return fail(
          "anchor mismatch",
          seq,
          id,
          `Entry seq ${seq} (id ${id}) no longer hashes to the anchored hash: the chain was rewritten up to it.`,
        );
      previous = computed;
      lastId = id;
      expected++;
      entries++;
    }
    if (rows.length < pageSize) break;
    const last = rows[rows.length - 1]!;
    after = { seq: Number(last.seq), id: String(last.id) };
  }
  if (expected <= head.seq)
    return fail(
      "missing",
      expected,
      null,
      `Entry seq ${expected} is missing (deleted)${expected < head.seq ? `, and those after it up to seq ${head.seq}` : ""}: the head row says the last entry is seq ${head.seq}.`,
    );
  if (previous !== head.hash)
    return fail(
      "head mismatch",
      head.seq,
      lastId,
      `The last entry, seq ${head.seq}, does not hash to the head row's hash: the entry or the head was changed.`,
    );
  if (anchor && anchor.seq > head.seq)
    return fail(
      "anchor mismatch",
      anchor.seq,
      null,
      `The chain ends at seq ${head.seq}, before the anchored seq ${anchor.seq}: entries were deleted and the head moved back.`,
    );
  const beyond = await pastHead(app.db);
  if (beyond) return fail("head mismatch", beyond.seq, beyond.id, beyond.message);
  return { ok: true as const, entries, unchained, head: { seq: head.seq, hash: head.hash } };
}

/**
 * Why entry `row` does not hash to its stored hash, told by whether what follows it (the next
 * entry, or the head after the last) links to its stored hash or to the recomputed one.
 */
function mismatch(
  app: PluginContext,
  head: ChainHead,
  row: Row,
  computed: string,
  next: Row | undefined,
): [ChainProblem, string] {
  const seq = Number(row.seq);
  const named = `Entry seq ${seq} (id ${String(row.id)})`;
  const followedBy = (hash: string) =>
    next
      ? Number(next.seq) === seq + 1 &&
        linkHash(hash, seq + 1, entryDigest(columnsOfRow(next, app.log))) === next.hash
      : seq === head.seq && hash === head.hash;
  if (followedBy(String(row.hash)))
    return ["edited", `${named} was changed after it was written: its content no longer matches its hash.`];
  if (followedBy(computed))
    return ["edited", `${named} was changed after it was written: its hash was altered.`];
  return [
    "out of order",
    `${named} is not the entry chained at this place: entries were swapped, reordered or replaced.`,
  ];
}

/** Where a page ended: (seq, id), so that two entries given one seq outside crudkit are both read. */
interface Key {
  seq: number;
  id: string;
}

/** Chained entries after `after` (all from the start without it) up to seq `last`, in (seq, id) order. */
function page(db: Kysely<any>, after: Key | undefined, last: number, limit: number): Promise<Row[]> {
  // Version 2's pending entries (PostgreSQL's sealer links them) are not in the chain yet; any other seq below
  // the chain's start is, to be reported.
  let query = db.selectFrom(AUDIT_LOGS).selectAll().where("seq", "<>", PENDING_SEQ).where("seq", "<=", last);
  if (after)
    query = query.where((eb) =>
      eb.or([eb("seq", ">", after.seq), eb.and([eb("seq", "=", after.seq), eb("id", ">", after.id)])]),
    );
  return query.orderBy("seq").orderBy("id").limit(limit).execute();
}

/** Entries from before the chain: neither a seq nor a hash. */
async function countUnchained(db: Kysely<any>): Promise<number> {
  const row = await db
    .selectFrom(AUDIT_LOGS)
    .select((eb) => eb.fn.countAll().as("count"))
    .where("seq", "is", null)
    .where("hash", "is", null)
    .executeTakeFirst();
  return Number(row?.count ?? 0);
}

/**
 * A committed entry that carries its digest but no seq was never linked: version 1's trigger
 * linked such entries as their write committed (version 2's pending entries have seq -1; version 3's wait in a queue), so one
 * left over means that trigger was disabled, dropped or skipped (`session_replication_role`)
 * outside crudkit, and the entry sits outside the chain's proof.
 */
async function firstUnlinked(db: Kysely<any>): Promise<string | undefined> {
  const row = await db
    .selectFrom(AUDIT_LOGS)
    .select("id")
    .where("seq", "is", null)
    .where("hash", "is not", null)
    .orderBy("created_at")
    .orderBy("id")
    .limit(1)
    .executeTakeFirst();
  return row ? String(row.id) : undefined;
}

/**
 * An entry past the head: the highest seq, read before the head again. An entry gets its seq in
 * the transaction that moves the head on (its write's, or on PostgreSQL the seal's), so the head
 * read after is at least any seq committed before; an entry past it was put there, or the head
 * moved back, outside crudkit.
 */
async function pastHead(db: Kysely<any>) {
  const last = await db
    .selectFrom(AUDIT_LOGS)
    .select(["seq", "id"])
    .where("seq", "is not", null)
    .orderBy("seq", "desc")
    .limit(1)
    .executeTakeFirst();
  const head = await readHead(db);
  if (!last || !head || Number(last.seq) <= head.seq) return undefined;
  const seq = Number(last.seq);
  return {
    seq,
    id: String(last.id),
    message: `Entry seq ${seq} (id ${String(last.id)}) is past the head row's last seq, ${head.seq}: the entry was added, or the head moved back, outside crudkit.`,
  };
}
