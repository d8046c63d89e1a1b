// Idempotency keys in Redis, shared by every instance: a claim is one SET NX with the key's ttl,
// so of many instances receiving the same retry at once exactly one runs it.

import type { IdempotencyStore, KeyEntry, StoredAnswer } from "./store.ts";

/** The commands used, as ioredis (5 or 6) provides them. */
export interface IdempotencyRedis {
  set(key: string, value: string, px: "PX", milliseconds: number, nx: "NX"): Promise<unknown>;
  set(key: string, value: string, px: "PX", milliseconds: number): Promise<unknown>;
  get(key: string): Promise<string | null>;
  del(key: string): Promise<unknown>;
  ping?(): Promise<unknown>;
}

/**
 * An idempotency store in Redis (an ioredis client, or anything with `set`, `get` and `del`).
 *
 * @example
 * idempotency({ store: redisIdempotencyStore(new Redis(process.env.REDIS_URL!)) })
 */
export function redisIdempotencyStore(
  redis: IdempotencyRedis,
  options: { prefix?: string } = {},
): IdempotencyStore {
  const prefix = options.prefix ?? "crudkit:idempotency:";
  return {
    kind: "redis",
    async claim(key, ttlMs) {
      const entry: KeyEntry = { fingerprint: "", answer: undefined, at: Date.now() };
      return (await redis.set(prefix + key, JSON.stringify(entry), "PX", ttlMs, "NX")) === "OK";
    },
    async get(key) {
      const stored = await redis.get(prefix + key);
      return stored === null ? undefined : (JSON.parse(stored) as KeyEntry);
    },
    async answer(key, fingerprint: string, answer: StoredAnswer, ttlMs) {
      const entry: KeyEntry = { fingerprint, answer, at: Date.now() };
      await redis.set(prefix + key, JSON.stringify(entry), "PX", ttlMs);
    },
    async release(key) {
      await redis.del(prefix + key);
    },
    ping: redis.ping ? () => redis.ping!() : undefined,
  };
}
