// A cache store in Redis, shared by every instance. Each resource's generation is a Redis counter:
// a write on any instance INCRs it, and every instance's next read of that resource misses.
// A lookup is one MGET (generation and entry together), so a hit costs one round trip.

import { createHash } from "node:crypto";
import { checkOptionKeys, optionKeys } from "../../core/option-keys.ts";
import type { CacheStore } from "./cache-store.ts";

/** The commands used, as ioredis (5 or 6) and node-redis-compatible wrappers provide them. */
export interface RedisLike {
  mget(...keys: string[]): Promise<(string | null)[]>;
  set(key: string, value: string, mode: "PX", milliseconds: number): Promise<unknown>;
  incr(key: string): Promise<number>;
  /** Asked by `GET /health` when present. */
  ping?(): Promise<unknown>;
}

export interface RedisStoreOptions {
  /** Prefix of every key, so apps can share one Redis. @default "crudkit:cache:" */
  prefix?: string;
}

const REDIS_STORE_OPTION_KEYS = optionKeys<RedisStoreOptions>()("prefix");

/**
 * A cache store in Redis (an ioredis client, or anything with the same few commands), shared by
 * every instance of the app.
 *
 * @example
 * cache({ store: redisStore(new Redis("redis://127.0.0.1:6379"), { prefix: "shop:cache:" }) })
 */
export function redisStore(redis: RedisLike, options: RedisStoreOptions = {}): CacheStore {
  checkOptionKeys(options, REDIS_STORE_OPTION_KEYS, "redisStore()");
  const prefix = options.prefix ?? "crudkit:cache:";
  const generationKey = (resource: string) => `${prefix}gen:${resource}`;
  // Hashed, so a long search string never makes a long Redis key.
  const entryKey = (resource: string, key: string) =>
    `${prefix}entry:${resource}:${createHash("sha256").update(key).digest("base64url")}`;

  return {
    kind: "redis",
    async lookup(resource, key) {
      const [generation, stored] = await redis.mget(generationKey(resource), entryKey(resource, key));
      const current = generation ?? "0";
      if (stored == null) return { generation: current, body: undefined };
      const split = stored.indexOf("\n");
      const body = stored.slice(0, split) === current ? stored.slice(split + 1) : undefined;
      return { generation: current, body };
    },
    async save(resource, key, generation, body, ttlMs) {
      await redis.set(entryKey(resource, key), `${generation}\n${body}`, "PX", ttlMs);
    },
    async invalidate(resource) {
      await redis.incr(generationKey(resource));
    },
    ping: redis.ping ? () => redis.ping!() : undefined,
  };
}
