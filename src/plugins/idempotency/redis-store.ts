// Idempotency keys in Redis, shared by every instance: a claim is one SET NX with the key's ttl,
// so of many instances receiving the same retry at once exactly one runs it.

import { randomUUID } from "node:crypto";
import type { IdempotencyStore, KeyEntry, StoredAnswer } from "./store.ts";

/** The commands used, as ioredis (5 or 6) provides them. */
export interface IdempotencyRedis {
  set(key: string, value: string, px: "PX", milliseconds: number, nx: "NX"): Promise<unknown>;
  set(key: string, value: string, px: "PX", milliseconds: number): Promise<unknown>;
  get(key: string): Promise<string | null>;
  /** Runs a Lua script: the conditional answer and release, each in one step. */
  eval(script: string, numberOfKeys: number, ...args: (string | number)[]): Promise<unknown>;
  ping?(): Promise<unknown>;
}

// The stored entry's token is compared and the key changed in one step, so a claim taken over by
// another request is never answered or released by the one that lost it.
const IF_HELD = `local held = redis.call("get", KEYS[1])
if not held or (cjson.decode(held).token or "") ~= ARGV[1] then return 0 end`;
const RELEASE = `${IF_HELD}
return redis.call("del", KEYS[1])`;
const ANSWER = `${IF_HELD}
redis.call("set", KEYS[1], ARGV[2], "PX", ARGV[3])
return 1`;

/**
 * An idempotency store in Redis (an ioredis client, or anything with `set`, `get` and `eval`).
 *
 * @example
 * idempotency({ store: redisIdempotencyStore(new Redis(process.env.REDIS_URL!)) })
 */
export function redisIdempotencyStore(
  redis: IdempotencyRedis,
  { prefix = "crudkit:idempotency:" } = {},
): IdempotencyStore {
  return {
    kind: "redis",
    async claim(key, ttlMs) {
      const entry: KeyEntry = { token: randomUUID(), fingerprint: "", answer: undefined, at: Date.now() };
      const taken = await redis.set(prefix + key, JSON.stringify(entry), "PX", ttlMs, "NX");
      return taken === "OK" ? entry.token : undefined;
    },
    async get(key) {
      const stored = await redis.get(prefix + key);
      return stored === null ? undefined : (JSON.parse(stored) as KeyEntry);
    },
    async answer(key, token, fingerprint: string, answer: StoredAnswer, ttlMs) {
      const entry: KeyEntry = { token, fingerprint, answer, at: Date.now() };
      await redis.eval(ANSWER, 1, prefix + key, token, JSON.stringify(entry), ttlMs);
    },
    async release(key, token) {
      await redis.eval(RELEASE, 1, prefix + key, token);
    },
    ping: redis.ping ? () => redis.ping!() : undefined,
  };
}
