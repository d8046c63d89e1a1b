// The audit log's hash chain: each entry stores its `seq` and
// `hash = SHA-256(previous hash ‖ ":" ‖ seq ‖ ":" ‖ digest)`, where the digest is the SHA-256 of the
// entry's canonical JSON. A one-row head table, `audit_chain`, holds the last seq and hash. On
// MariaDB and SQLite the writer below moves it on in the write, locked until the write commits, so
// the chain follows commit order with any number of writers and instances (SQLite's writes run one
// at a time anyway). On PostgreSQL a write queues its entry and a sealer links entries just after
// they commit, in the order they became visible (audit-seal-function.ts): no writer waits for
// another's commit. The entry enters the link by its digest so that SQL can compute it.

import * as crypto from "node:crypto";
import type { Kysely } from "kysely";
import { canonicalJson } from "../../core/canonical-json.ts";
import type { PluginContext } from "../../core/plugin.ts";
import {
  compileTemplate,
  dateFromColumn,
  isUniqueViolation,
  jsonFromColumn,
  type QueryTemplate,
  runTemplate,
  slot,
  type TableDefinition,
} from "../../kit/index.ts";
import { AUDIT_LOGS, type AuditEntry, toRow } from "./audit-table.ts";

export const AUDIT_CHAIN = "audit_chain";
/** The head row's id: there is one chain per app database. */
export const HEAD_ID = "audit";
/** What the first entry of a new chain links to. */
export const GENESIS = "0".repeat(64);

export const auditChainTable: TableDefinition = {
  name: AUDIT_CHAIN,
  columns: {
    id: { type: "text", primaryKey: true, notNull: true },
    // The last entry's seq and hash: 0 and GENESIS before the first.
    seq: { type: "integer", notNull: true },
    hash: { type: "text", notNull: true },
    // Where the kept chain starts: retention deletes entries from the start and moves these on.
    first_seq: { type: "integer", notNull: true },
    first_prev: { type: "text", notNull: true },
  },
};

/** The head row: the last link, and where the kept chain starts. */
export interface ChainHead {
  seq: number;
  hash: string;
  /** The seq of the first entry kept (the last seq + 1 when none is). */
  firstSeq: number;
  /** The hash that entry links to. */
  firstPrev: string;
}

/** The head row, read without a lock; undefined when it is missing. */
export async function readHead(db: Kysely<any>): Promise<ChainHead | undefined> {
  const row = await db
    .selectFrom(AUDIT_CHAIN)
    .select(["seq", "hash", "first_seq", "first_prev"])
    .where("id", "=", HEAD_ID)
    .executeTakeFirst();
  if (!row) return undefined;
  return {
    seq: Number(row.seq),
    hash: String(row.hash),
    firstSeq: Number(row.first_seq),
    firstPrev: String(row.first_prev),
  };
}

/**
 * Makes the head row of a new chain (at startup). Entries already in the table without a seq
 * (written before the chain existed) stay unchained; the chain starts at the next entry.
 */
export async function ensureHead(db: Kysely<any>): Promise<void> {
  if (await readHead(db)) return;
  const last = await db
    .selectFrom(AUDIT_LOGS)
    .select("seq")
    .where("seq", "is not", null)
    .orderBy("seq", "desc")
    .limit(1)
    .executeTakeFirst();
  // Starting over would give new entries seqs the table already holds: refused, loudly.
  if (last)
    throw new Error(
      `audit(): the chain's head row (table ${AUDIT_CHAIN}) is missing while ${AUDIT_LOGS} holds entries chained up to seq ${last.seq}: ` +
        "it was removed outside crudkit. `crudkit audit verify` reports the chain; restore the row from a backup.",
    );
  try {
    await db
      .insertInto(AUDIT_CHAIN)
      .values({ id: HEAD_ID, seq: 0, hash: GENESIS, first_seq: 1, first_prev: GENESIS })
      .execute();
  } catch (error) {
    // Another instance starting at the same time made it first.
    if (!isUniqueViolation(error)) throw error;
  }
}

/** What an entry's hash covers: every stored column but `hash`, as every engine reads it back. */
interface HashedColumns {
  id: string;
  /** ISO 8601 with milliseconds, the precision every engine keeps. */
  created_at: string;
  resource: string;
  operation: string;
  record_id: string | null;
  user_id: string | null;
  source: string;
  ip: string | null;
  user_agent: string | null;
  /** JSON columns as parsed values, not as stored text: PostgreSQL's jsonb rewrites the text. */
  before: unknown;
  after: unknown;
  changes: unknown;
  caused_by: string | null;
  scope: string | null;
}

/** What an entry's content contributes to its link: the SHA-256 of its canonical JSON, as hex. */
export function entryDigest(columns: HashedColumns): string {
  return sha256(entryJson(columns));
}

/** The hashed columns' names in code-point order, as canonicalJson orders them, quoted. */
const COLUMN_KEYS = (
  [
    "after",
    "before",
    "caused_by",
    "changes",
    "created_at",
    "id",
    "ip",
    "operation",
    "record_id",
    "resource",
    "scope",
    "source",
    "user_agent",
    "user_id",
  ] as const satisfies readonly (keyof HashedColumns)[]
).map((key) => [key, `${JSON.stringify(key)}:`] as const);

/**
 * `canonicalJson(columns)`, character for character (every chained entry's digest depends on it),
 * without sorting the fourteen names on every write: the entry's own columns are always these.
 */
export function entryJson(columns: HashedColumns): string {
  let text = "{";
  for (const [key, quoted] of COLUMN_KEYS) {
    const value = columns[key];
    if (value === undefined) continue;
    if (text.length > 1) text += ",";
    text += quoted + (typeof value === "string" ? JSON.stringify(value) : canonicalJson(value));
  }
  return `${text}}`;
}

// One call where Node has it (20.12 and later): half the time of createHash's three for a digest
// of an entry's size (measured: 0.7 µs against 1.5 µs).
const oneShot = (crypto as { hash?: (algorithm: string, data: string, encoding: "hex") => string }).hash;

/** SHA-256 of a text's UTF-8 bytes, as hex. */
function sha256(text: string): string {
  return oneShot ? oneShot("sha256", text, "hex") : crypto.createHash("sha256").update(text).digest("hex");
}

/**
 * `SHA-256(previous ‖ ":" ‖ seq ‖ ":" ‖ digest)`, as hex: the same text PostgreSQL's seal function hashes
 * (all ASCII, so its bytes are the same in every engine).
 */
export function linkHash(previous: string, seq: number, digest: string): string {
  return sha256(`${previous}:${seq}:${digest}`);
}

/**
 * Text as the database gives it back: a lone surrogate is stored as U+FFFD by every driver, so it
 * is hashed as one (input checks refuse them in requests; a `user.id` may still hold one).
 */
function text(value: string): string;
function text(value: string | null): string | null;
function text(value: string | null): string | null {
  return value === null ? null : value.toWellFormed();
}

/** The hashed columns of an entry about to be written. */
export function columnsOfEntry(entry: AuditEntry): HashedColumns {
  return {
    id: text(entry.id),
    created_at: entry.createdAt,
    resource: text(entry.resource),
    operation: text(entry.operation),
    record_id: text(entry.recordId),
    user_id: text(entry.userId),
    source: entry.source,
    ip: text(entry.ip),
    user_agent: text(entry.userAgent),
    before: entry.before,
    after: entry.after,
    changes: entry.changes,
    caused_by: text(entry.causedBy),
    scope: text(entry.scope),
  };
}

/** The hashed columns of a stored row (`log` hears of JSON that cannot be read: it hashes as null). */
export function columnsOfRow(
  row: Record<string, unknown>,
  log: (message: string, error: unknown) => void,
): HashedColumns {
  const optional = (value: unknown) => (value === null || value === undefined ? null : text(String(value)));
  return {
    id: text(String(row.id)),
    created_at: dateFromColumn(row.created_at),
    resource: text(String(row.resource)),
    operation: text(String(row.operation)),
    record_id: optional(row.record_id),
    user_id: optional(row.user_id),
    source: text(String(row.source)),
    ip: optional(row.ip),
    user_agent: optional(row.user_agent),
    before: jsonFromColumn(row.before, log) ?? null,
    after: jsonFromColumn(row.after, log) ?? null,
    changes: jsonFromColumn(row.changes, log) ?? null,
    caused_by: optional(row.caused_by),
    scope: optional(row.scope),
  };
}

/** Appends entries to the chain: three statements, each compiled once. */
export interface ChainWriter {
  /**
   * Writes `entry` as the chain's next link on `db`: inside a write, its transaction, whose commit
   * releases the head; outside one (recorded reads), in a transaction of its own.
   */
  append(db: Kysely<any>, entry: AuditEntry): Promise<void>;
}

/** Each entry one plain insert, no lock and no link: `audit({ chain: false })`. */
export function insertingWriter(app: PluginContext): ChainWriter {
  let insert: QueryTemplate | undefined;
  return {
    async append(db, entry) {
      const row = toRow(entry, app.profile, null);
      insert ??= compileTemplate(
        app.db.insertInto(AUDIT_LOGS).values(Object.fromEntries(Object.keys(row).map((c) => [c, slot(c)]))),
      );
      await runTemplate(db, insert, row);
    },
  };
}

export function chainWriter(app: PluginContext): ChainWriter {
  const locking = app.db.selectFrom(AUDIT_CHAIN).select(["seq", "hash"]).where("id", "=", slot("id"));
  // SQLite has no row locks and needs none: its write transactions already run one at a time.
  const lockHead = compileTemplate(app.profile.rowLocks ? locking.forUpdate() : locking);
  const moveHead = compileTemplate(
    app.db
      .updateTable(AUDIT_CHAIN)
      .set({ seq: slot("seq"), hash: slot("hash") })
      .where("id", "=", slot("id")),
  );
  let insert: QueryTemplate | undefined;

  const link = async (db: Kysely<any>, entry: AuditEntry) => {
    // SELECT seq, hash FROM audit_chain WHERE id = 'audit' FOR UPDATE: held until the write ends.
    const [head] = (await runTemplate<{ seq: unknown; hash: unknown }>(db, lockHead, { id: HEAD_ID })).rows;
    if (!head)
      throw new Error(`audit(): the chain's head row (table ${AUDIT_CHAIN}) is missing; restart the app.`);
    const seq = Number(head.seq) + 1;
    const hash = linkHash(String(head.hash), seq, entryDigest(columnsOfEntry(entry)));
    const row = toRow(entry, app.profile, { seq, hash });
    insert ??= compileTemplate(
      app.db.insertInto(AUDIT_LOGS).values(Object.fromEntries(Object.keys(row).map((c) => [c, slot(c)]))),
    );
    await runTemplate(db, insert, row);
    await runTemplate(db, moveHead, { seq, hash, id: HEAD_ID });
  };

  return {
    append: (db, entry) =>
      db.isTransaction ? link(db, entry) : db.transaction().execute((trx) => link(trx, entry)),
  };
}
