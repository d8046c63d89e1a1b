// MariaDB's positions for read replicas: GTID lists (`0-1-42,1-2-7`: domain, server, sequence). A
// replica has what a list names when, for each of its domains, it applied that sequence number or a
// later one (sequence numbers grow within a domain, whichever server wrote them). The primary's
// position is `gtid_binlog_pos`; a replica's, `gtid_slave_pos` (what its SQL thread applied).

import { type Kysely, sql } from "kysely";
import type { Replication } from "../../replication.ts";

/** Domain → the last sequence number. */
type Gtids = ReadonlyMap<number, bigint>;

const GTID = /^(\d{1,10})-(\d{1,10})-(\d{1,20})$/;
/** Domains a list may name: a real topology has a few. */
const MAX_DOMAINS = 64;

function parse(text: string): Gtids | undefined {
  if (text === "") return new Map();
  const parts = text.split(",");
  if (parts.length > MAX_DOMAINS) return undefined;
  const gtids = new Map<number, bigint>();
  for (const part of parts) {
    const match = GTID.exec(part.trim());
    if (!match) return undefined;
    const domain = Number(match[1]);
    const sequence = BigInt(match[3]!);
    if ((gtids.get(domain) ?? -1n) < sequence) gtids.set(domain, sequence);
  }
  return gtids;
}

async function variable(db: Kysely<any>, name: "gtid_binlog_pos" | "gtid_slave_pos"): Promise<Gtids> {
  const [row] = (
    await sql<{ position: string | null }>`select ${sql.raw(`@@global.${name}`)} as position`.execute(db)
  ).rows;
  const text = row?.position ?? "";
  const gtids = parse(String(text));
  if (!gtids) throw new Error(`MariaDB gave a GTID position crudkit cannot read (${String(text)})`);
  return gtids;
}

export const mysqlReplication: Replication<Gtids> = {
  async primaryPosition(db) {
    // Without a binary log there is nothing to replicate, and an empty position would be "reached"
    // by any server: its replicas are never caught up.
    const [row] = (await sql<{ on: unknown }>`select @@global.log_bin as ${sql.id("on")}`.execute(db)).rows;
    if (Number(row?.on) !== 1)
      throw new Error("the primary writes no binary log (log_bin is off): it has no replicas to read from");
    return variable(db, "gtid_binlog_pos");
  },
  // A replica whose SQL thread stopped (or a server that replicates nothing) keeps its position:
  // it falls behind the primary's, and past maxLag it is skipped.
  replayed: (db) => variable(db, "gtid_slave_pos"),
  reached(replayed, wanted) {
    for (const [domain, sequence] of wanted) if ((replayed.get(domain) ?? -1n) < sequence) return false;
    return true;
  },
  format: (position) => [...position].map(([domain, sequence]) => `${domain}-0-${sequence}`).join(","),
  parse,
};
