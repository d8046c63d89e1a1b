// Where rate-limit counters live: the contract, and counters in this process's memory.

import { checkOptionKeys, optionKeys } from "../../core/option-keys.ts";

/** A counter of one key in one fixed window. */
export interface WindowCount {
  total: number;
  /** When the window ends (epoch milliseconds). */
  resetAt: number;
}

export interface RateLimitStore {
  readonly kind: string;
  /**
   * Adds `amount` (a request, or bytes; negative gives some back) to `key`'s counter in the
   * current window of `windowMs` (windows start at multiples of it), and returns the new total.
   */
  add(key: string, amount: number, windowMs: number): Promise<WindowCount>;
  ping?(): Promise<unknown>;
}

/** The window of `windowMs` that holds `now`: its number and when it ends. */
export function windowOf(now: number, windowMs: number): { index: number; resetAt: number } {
  const index = Math.floor(now / windowMs);
  return { index, resetAt: (index + 1) * windowMs };
}

export interface MemoryRateLimitOptions {
  /**
   * Most counters held; a new one past it makes room by dropping the oldest (expired ones first),
   * in constant time. @default 100000
   */
  maxKeys?: number;
}

const MEMORY_RATE_LIMIT_OPTION_KEYS = optionKeys<MemoryRateLimitOptions>()("maxKeys");

/**
 * Counters in this process: for one instance. Several instances each count on their own; share
 * limits between them with `redisRateLimitStore`.
 */
export function memoryRateLimitStore(options: MemoryRateLimitOptions = {}): RateLimitStore {
  checkOptionKeys(options, MEMORY_RATE_LIMIT_OPTION_KEYS, "memoryRateLimitStore()");
  const maxKeys = options.maxKeys ?? 100_000;
  const counters = new Map<string, WindowCount>();
  // The counters' keys oldest first, consumed from `head`: eviction takes the front in O(1),
  // where iterating the Map from its start would walk past every hole deletes leave there.
  const order: string[] = [];
  let head = 0;
  /** Full: expired counters at the front go (a few per call), and the oldest while still full. */
  const evict = (now: number) => {
    for (let budget = 8; budget > 0 && head < order.length; budget--) {
      const key = order[head]!;
      if (counters.size < maxKeys && counters.get(key)!.resetAt > now) break;
      counters.delete(key);
      head++;
    }
    // Drop the consumed front once it is most of the array: amortized O(1) per counter.
    if (head > 1024 && head * 2 > order.length) {
      order.splice(0, head);
      head = 0;
    }
  };
  return {
    kind: "memory",
    async add(key, amount, windowMs) {
      const now = Date.now();
      const { index, resetAt } = windowOf(now, windowMs);
      const slot = `${index}\0${key}`;
      let count = counters.get(slot);
      if (!count) {
        if (counters.size >= maxKeys) evict(now);
        count = { total: 0, resetAt };
        counters.set(slot, count);
        order.push(slot);
      }
      count.total += amount;
      return { total: count.total, resetAt };
    },
  };
}
