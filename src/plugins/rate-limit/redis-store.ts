// Rate-limit counters in Redis, shared by every instance: one INCRBY per request, in a
// transaction with the window's expiry, so instances count together and exactly.

import { type RateLimitStore, windowOf } from "./store.ts";

/** A Redis transaction (MULTI … EXEC), as ioredis chains it. */
export interface RateLimitPipeline {
  incrby(key: string, amount: number): RateLimitPipeline;
  pexpireat(key: string, at: number): RateLimitPipeline;
  exec(): Promise<[Error | null, unknown][] | null>;
}

/** The commands used, as ioredis (5 or 6) provides them. */
export interface RateLimitRedis {
  multi(): RateLimitPipeline;
  ping?(): Promise<unknown>;
}

/** Where the counters live unless told: `crudkit:rate:<window>:<key>`. */
const PREFIX = "crudkit:rate:";

/**
 * Rate-limit counters in Redis (an ioredis client), so every instance of the app shares them.
 *
 * @example
 * rateLimit({ window: 60, max: 100, store: redisRateLimitStore(new Redis(process.env.REDIS_URL!)) })
 */
export function redisRateLimitStore(redis: RateLimitRedis, { prefix = PREFIX } = {}): RateLimitStore {
  return {
    kind: "redis",
    async add(key, amount, windowMs) {
      const { index, resetAt } = windowOf(Date.now(), windowMs);
      const slot = `${prefix}${index}:${key}`;
      const replies = await redis.multi().incrby(slot, amount).pexpireat(slot, resetAt).exec();
      const [error, total] = replies?.[0] ?? [new Error("Redis did not run the transaction.")];
      if (error) throw error;
      return { total: Number(total), resetAt };
    },
    ping: redis.ping ? () => redis.ping!() : undefined,
  };
}
