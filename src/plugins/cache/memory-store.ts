// The default cache store: this process's memory, bounded by entries and bytes. Eviction is
// second-chance (CLOCK): a hit only sets a flag, and an entry used since it was saved is passed
// over once before it can go, which approximates least-recently-used without reordering the
// map on every hit. Instances do not share it, so a write on one does not reach another's cache:
// use redisStore() when several instances serve the same database.

import { checkOptionKeys, optionKeys } from "../../core/option-keys.ts";
import type { CacheLookup, CacheStore } from "./cache-store.ts";

export interface MemoryStoreOptions {
  /** @default 10000 */
  maxEntries?: number;
  /** Bytes of keys and bodies together. @default 64 MiB */
  maxBytes?: number;
}

interface Entry {
  generation: string;
  body: string;
  expires: number;
  bytes: number;
  used: boolean;
}

const MEMORY_STORE_OPTION_KEYS = optionKeys<MemoryStoreOptions>()("maxEntries maxBytes");

/**
 * A cache store in this process's memory, bounded by entries and bytes (least recently used go
 * first). The default store of `cache()`.
 *
 * @example
 * cache({ store: memoryStore({ maxEntries: 5_000, maxBytes: 32 * 1024 * 1024 }) })
 */
export function memoryStore(options: MemoryStoreOptions = {}): CacheStore {
  checkOptionKeys(options, MEMORY_STORE_OPTION_KEYS, "memoryStore()");
  const maxEntries = options.maxEntries ?? 10_000;
  const maxBytes = options.maxBytes ?? 64 * 1024 * 1024;
  if (!(maxEntries >= 1) || !(maxBytes >= 1))
    throw new Error("memoryStore(): maxEntries and maxBytes must be at least 1.");
  // Maps iterate in insertion order, so the first entries are the oldest saved (or passed over).
  const entries = new Map<string, Entry>();
  const generations = new Map<string, string>();
  let bytes = 0;

  const generationOf = (resource: string) => generations.get(resource) ?? "0";
  const remove = (id: string, entry: Entry) => {
    entries.delete(id);
    bytes -= entry.bytes;
  };
  // An entry moved to the back is met again in the same pass, now without its flag, so one
  // pass always makes room.
  const evict = () => {
    for (const [id, entry] of entries) {
      if (entries.size <= maxEntries && bytes <= maxBytes) return;
      if (entry.used) {
        // Used since saved: a second chance, at the back of the line.
        entry.used = false;
        entries.delete(id);
        entries.set(id, entry);
      } else remove(id, entry);
    }
  };

  return {
    kind: "memory",
    lookup(resource, key): CacheLookup {
      const generation = generationOf(resource);
      const id = `${resource}\0${key}`;
      const entry = entries.get(id);
      if (!entry) return { generation, body: undefined };
      if (entry.generation !== generation || entry.expires <= Date.now()) {
        remove(id, entry);
        return { generation, body: undefined };
      }
      entry.used = true;
      return { generation, body: entry.body };
    },
    async save(resource, key, generation, body, ttlMs) {
      // Loaded before a write that has since committed: not worth keeping.
      if (generation !== generationOf(resource)) return;
      const id = `${resource}\0${key}`;
      // Strings are UTF-16 in memory: two bytes a character is what they really cost.
      const size = 2 * (id.length + body.length) + 64;
      if (size > maxBytes) return;
      const old = entries.get(id);
      if (old) remove(id, old);
      entries.set(id, { generation, body, expires: Date.now() + ttlMs, bytes: size, used: false });
      bytes += size;
      evict();
    },
    async invalidate(resource) {
      generations.set(resource, String(Number(generationOf(resource)) + 1));
    },
    usage: () => ({ entries: entries.size, bytes }),
  };
}
