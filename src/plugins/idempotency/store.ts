// Where idempotency keys are kept: the contract, and the store in the app's own database.

import type { Kysely } from "kysely";
import { isUniqueViolation } from "../../db/database.ts";
import type { TableDefinition } from "../../db/table-definition.ts";

/** The first answer to a key, replayed to every retry with the same request. */
export interface StoredAnswer {
  status: number;
  /** The JSON body. */
  body: string;
  /** The record's version, when the answer carried one. */
  etag?: string;
}

/** A key as stored: claimed by a request still running (no answer yet), or answered. */
export interface KeyEntry {
  /** What the first request was: method, path and body, hashed. Empty while it runs. */
  fingerprint: string;
  answer: StoredAnswer | undefined;
  /** When the entry was claimed or answered (epoch milliseconds). */
  at: number;
}

export interface IdempotencyStore {
  readonly kind: string;
  /** Claims `key` for a request about to run: true, or false when someone holds it already. */
  claim(key: string, ttlMs: number): Promise<boolean>;
  /** The entry of `key`, if any and not expired. */
  get(key: string): Promise<KeyEntry | undefined>;
  /** The claimed request finished: keep its answer until the ttl runs out. */
  answer(key: string, fingerprint: string, answer: StoredAnswer, ttlMs: number): Promise<void>;
  /** The claimed request failed, or the claim went stale: the key is free again. */
  release(key: string): Promise<void>;
  /** Readiness, for `GET /health`. */
  ping?(): Promise<unknown>;
}

export const IDEMPOTENCY_KEYS = "crudkit_idempotency_keys";

export const idempotencyKeysTable: TableDefinition = {
  name: IDEMPOTENCY_KEYS,
  columns: {
    // sha256 of the caller's scope and the key: fixed length, whatever the key.
    key: { type: "text", primaryKey: true, notNull: true },
    fingerprint: { type: "text" },
    status: { type: "integer" },
    body: { type: "text" },
    etag: { type: "text" },
    at: { type: "integer", notNull: true },
    expires_at: { type: "integer", notNull: true },
  },
  indexes: [{ name: `${IDEMPOTENCY_KEYS}_expires_at_idx`, columns: ["expires_at"] }],
};

/** How often expired keys are swept from the table (at most once per interval, on a claim). */
const SWEEP_INTERVAL_MS = 60_000;

/** Keys in the app's database, in the `crudkit_idempotency_keys` table the migrations create. */
export function databaseStore(db: () => Kysely<any>): IdempotencyStore {
  let swept = 0;
  const sweep = async (now: number) => {
    if (now - swept < SWEEP_INTERVAL_MS) return;
    swept = now;
    await db().deleteFrom(IDEMPOTENCY_KEYS).where("expires_at", "<", now).execute();
  };
  return {
    kind: "database",
    async claim(key, ttlMs) {
      const now = Date.now();
      await sweep(now);
      try {
        await db()
          .insertInto(IDEMPOTENCY_KEYS)
          .values({ key, at: now, expires_at: now + ttlMs })
          .execute();
        return true;
      } catch (error) {
        if (!isUniqueViolation(error)) throw error;
      }
      // Taken: by a live entry, or by one that expired and was not swept yet.
      const removed = await db()
        .deleteFrom(IDEMPOTENCY_KEYS)
        .where("key", "=", key)
        .where("expires_at", "<", now)
        .executeTakeFirst();
      return removed.numDeletedRows > 0n ? this.claim(key, ttlMs) : false;
    },
    async get(key) {
      const row = await db()
        .selectFrom(IDEMPOTENCY_KEYS)
        .selectAll()
        .where("key", "=", key)
        .where("expires_at", ">=", Date.now())
        .executeTakeFirst();
      if (!row) return undefined;
      const status = row.status == null ? undefined : Number(row.status);
      return {
        fingerprint: row.fingerprint ?? "",
        at: Number(row.at),
        answer:
          status === undefined
            ? undefined
            : { status, body: row.body, ...(row.etag ? { etag: row.etag as string } : {}) },
      };
    },
    async answer(key, fingerprint, answer, ttlMs) {
      const now = Date.now();
      await db()
        .updateTable(IDEMPOTENCY_KEYS)
        .set({
          fingerprint,
          status: answer.status,
          body: answer.body,
          etag: answer.etag ?? null,
          at: now,
          expires_at: now + ttlMs,
        })
        .where("key", "=", key)
        .execute();
    },
    async release(key) {
      await db().deleteFrom(IDEMPOTENCY_KEYS).where("key", "=", key).execute();
    },
  };
}
