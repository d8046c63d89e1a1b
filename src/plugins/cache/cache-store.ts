// Where cache() keeps answers. Each resource has a generation; every write to the resource moves
// it on, and an entry answers only while the generation it was saved under is still current.
// A read takes the generation before it loads, so a write that lands during the load leaves the
// saved entry already stale instead of serving old data.

export interface CacheLookup {
  /** The resource's generation now; save what you load under it. */
  generation: string;
  /** The cached JSON body, when there is a current one. */
  body: string | undefined;
}

export interface CacheStore {
  /** For the stats route: `memory`, `redis`. */
  readonly kind: string;
  /** May answer synchronously (the memory store does), which saves a turn of the event loop on hits. */
  lookup(resource: string, key: string): CacheLookup | Promise<CacheLookup>;
  save(resource: string, key: string, generation: string, body: string, ttlMs: number): Promise<void>;
  /** Makes every cached answer of the resource stale, on every instance sharing the store. */
  invalidate(resource: string): Promise<void>;
  /** Resolves when a shared store answers (readiness, `GET /health`). */
  ping?(): Promise<unknown>;
  /** What the store holds, if it can tell cheaply. */
  usage?(): { entries: number; bytes: number };
}
