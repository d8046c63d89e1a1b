// PostgreSQL's positions for read replicas: WAL locations (`16/B374D848`), compared as 64-bit
// numbers. The primary's is its insert location, not its write location: with
// `synchronous_commit = off` a commit is acknowledged before its record is written, and a replica
// must have replayed that record before it can serve the writer. When the last record ended at a
// page's end, the insert location is past the next page's header, where no replica's replay
// position ever is (it stops at the record's end): the header is taken off, or an idle primary's
// replicas would look behind for ever.

import { type Kysely, sql } from "kysely";
import type { Replication } from "../../replication.ts";

const LSN = /^([0-9A-F]{1,8})\/([0-9A-F]{1,8})$/i;

function lsn(text: string): bigint | undefined {
  const match = LSN.exec(text);
  return match ? (BigInt(`0x${match[1]}`) << 32n) | BigInt(`0x${match[2]}`) : undefined;
}

async function one(db: Kysely<any>, query: ReturnType<typeof sql<{ position: string | null }>>) {
  const [row] = (await query.execute(db)).rows;
  return row?.position ?? null;
}

/** A page's header: 24 bytes, 40 on the first page of a segment. */
const SHORT_HEADER = 24n;
const LONG_HEADER = 40n;

export const postgresReplication: Replication<bigint> = {
  async primaryPosition(db) {
    const [row] = (
      await sql<{ position: string | null; block: string; segment: string }>`select
        pg_current_wal_insert_lsn()::text as position, current_setting('wal_block_size') as block,
        (select setting from pg_settings where name = 'wal_segment_size') as segment`.execute(db)
    ).rows;
    const position = row?.position ? lsn(row.position) : undefined;
    if (position === undefined || !row)
      throw new Error(`PostgreSQL gave no WAL position (${String(row?.position)})`);
    if (position % BigInt(row.segment) === LONG_HEADER) return position - LONG_HEADER;
    if (position % BigInt(row.block) === SHORT_HEADER) return position - SHORT_HEADER;
    return position;
  },
  async replayed(db) {
    const text = await one(
      db,
      sql<{ position: string | null }>`select pg_last_wal_replay_lsn()::text as position`,
    );
    if (text === null)
      throw new Error("this server is not a replica: it replays no WAL (pg_last_wal_replay_lsn() is null)");
    const position = lsn(text);
    if (position === undefined) throw new Error(`PostgreSQL gave no WAL position (${text})`);
    return position;
  },
  reached: (replayed, wanted) => replayed >= wanted,
  format: (position) =>
    `${(position >> 32n).toString(16).toUpperCase()}/${(position & 0xffffffffn).toString(16).toUpperCase()}`,
  parse: lsn,
};
