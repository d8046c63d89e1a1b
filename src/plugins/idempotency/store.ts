// Where idempotency keys are kept: the contract, and the store in the app's own database.

import { randomUUID } from "node:crypto";
import type { Kysely } from "kysely";
import { isUniqueViolation, type TableDefinition } from "../../kit/index.ts";

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
  /** Which claim this is: a claim is answered or released only by the request that holds it. */
  token: string;
  /** What the first request was: method, path and body, hashed. Empty while it runs. */
  fingerprint: string;
  answer: StoredAnswer | undefined;
  /** When the entry was claimed or answered (epoch milliseconds). */
  at: number;
}

export interface IdempotencyStore {
  readonly kind: string;
  /**
   * Claims `key` for a request about to run: the claim's token, or undefined when someone holds
   * it already.
   */
  claim(key: string, ttlMs: number): Promise<string | undefined>;
  /** The entry of `key`, if any and not expired. */
  get(key: string): Promise<KeyEntry | undefined>;
  /**
   * The claimed request finished: keep its answer until the ttl runs out, if `token` still holds
   * the key (a claim that went stale and was taken over keeps the new holder's).
   */
  answer(key: string, token: string, fingerprint: string, answer: StoredAnswer, ttlMs: number): Promise<void>;
  /**
   * The claimed request failed, or its claim went stale: the key is free again, if `token` still
   * holds it. Never unconditional: two retries that both found a stale claim would otherwise
   * delete each other's fresh one, and both run.
   */
  release(key: string, token: string): Promise<void>;
  /** Readiness, for `GET /health`. */
  ping?(): Promise<unknown>;
}

export const IDEMPOTENCY_KEYS = "crudkit_idempotency_keys";

export const idempotencyKeysTable: TableDefinition = {
  name: IDEMPOTENCY_KEYS,
  columns: {
    // sha256 of the caller's scope and the key: fixed length, whatever the key.
    key: { type: "text", primaryKey: true, notNull: true },
    token: { type: "text" },
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
      const token = randomUUID();
      try {
        await db()
          .insertInto(IDEMPOTENCY_KEYS)
          .values({ key, token, at: now, expires_at: now + ttlMs })
          .execute();
        return token;
      } catch (error) {
        if (!isUniqueViolation(error)) throw error;
      }
      // Taken: by a live entry, or by one that expired and was not swept yet.
      const removed = await db()
        .deleteFrom(IDEMPOTENCY_KEYS)
        .where("key", "=", key)
        .where("expires_at", "<", now)
        .executeTakeFirst();
      return removed.numDeletedRows > 0n ? this.claim(key, ttlMs) : undefined;
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
        token: row.token ?? "",
        fingerprint: row.fingerprint ?? "",
        at: Number(row.at),
        answer:
          status === undefined
            ? undefined
            : { status, body: row.body, ...(row.etag ? { etag: row.etag as string } : {}) },
      };
    },
    async answer(key, token, fingerprint, answer, ttlMs) {
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
        .where("token", "=", token)
        .execute();
    },
    async release(key, token) {
      // A claim made before claims had tokens holds none (""): it is released as such.
      await db()
        .deleteFrom(IDEMPOTENCY_KEYS)
        .where("key", "=", key)
        .where((eb) => (token === "" ? eb("token", "is", null) : eb("token", "=", token)))
        .execute();
    },
  };
}
