// The default cache store: this process's memory, bounded by entries and bytes, least recently
// used first out. Instances do not share it, so a write on one does not reach another's cache:
// use redisStore() when several instances serve the same database.

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
}

export function memoryStore(options: MemoryStoreOptions = {}): CacheStore {
  const maxEntries = options.maxEntries ?? 10_000;
  const maxBytes = options.maxBytes ?? 64 * 1024 * 1024;
  if (!(maxEntries >= 1) || !(maxBytes >= 1))
    throw new Error("memoryStore(): maxEntries and maxBytes must be at least 1.");
  // A Map iterates in insertion order: re-inserting on every hit keeps the oldest use first.
  const entries = new Map<string, Entry>();
  const generations = new Map<string, number>();
  let bytes = 0;

  const remove = (id: string, entry: Entry) => {
    entries.delete(id);
    bytes -= entry.bytes;
  };

  return {
    kind: "memory",
    async lookup(resource, key): Promise<CacheLookup> {
      const generation = String(generations.get(resource) ?? 0);
      const id = `${resource}\0${key}`;
      const entry = entries.get(id);
      if (!entry) return { generation, body: undefined };
      if (entry.generation !== generation || entry.expires <= Date.now()) {
        remove(id, entry);
        return { generation, body: undefined };
      }
      entries.delete(id);
      entries.set(id, entry);
      return { generation, body: entry.body };
    },
    async save(resource, key, generation, body, ttlMs) {
      // Loaded before a write that has since committed: not worth keeping.
      if (generation !== String(generations.get(resource) ?? 0)) return;
      const id = `${resource}\0${key}`;
      // Strings are UTF-16 in memory: two bytes a character is what they really cost.
      const size = 2 * (id.length + body.length) + 64;
      if (size > maxBytes) return;
      const old = entries.get(id);
      if (old) remove(id, old);
      entries.set(id, { generation, body, expires: Date.now() + ttlMs, bytes: size });
      bytes += size;
      for (const [oldestId, oldest] of entries) {
        if (entries.size <= maxEntries && bytes <= maxBytes) break;
        remove(oldestId, oldest);
      }
    },
    async invalidate(resource) {
      generations.set(resource, (generations.get(resource) ?? 0) + 1);
    },
    usage: () => ({ entries: entries.size, bytes }),
  };
}
