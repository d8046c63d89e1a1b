// cache(): answers resource reads and lists over HTTP from a store, after their access rules have
// run, keyed by resource, operation, the normal form of the query and who is asking. Every
// create, update and delete (HTTP or app.api) moves the resource's generation on after it commits
// (afterWriteCommit, which asks for no record, so updates read nothing extra for it).

import type { Kysely } from "kysely";
import type { Endpoint } from "../../core/endpoint.ts";
import { Versioned } from "../../core/etag.ts";
import type { User } from "../../core/identity.ts";
import { checkOptionKeys, optionKeys } from "../../core/option-keys.ts";
import type { CachedRead, CrudkitPlugin, PluginContext } from "../../core/plugin.ts";
import type { RequestCache } from "../../core/request-cache.ts";
import { PRIVATE, versionedResponse } from "../../core/respond.ts";
import { traced, tracing } from "../../core/tracing.ts";
import {
  type AnyResourceHooks,
  authorizePluginRoute,
  type HookContext,
  type PluginRule,
} from "../../kit/index.ts";
import type { CacheStore } from "./cache-store.ts";
import { memoryStore } from "./memory-store.ts";

export interface CacheAccessContext {
  user: User | null;
  headers: Headers;
  /** The database, with the server's authority. */
  db: Kysely<any>;
  /** This request's memo: a lookup made through it runs once however many rules ask. */
  cache: RequestCache;
}

export interface CacheOptions {
  /** @default memoryStore() */
  store?: CacheStore;
  /** Seconds an answer may be served. @default 60 */
  ttl?: number;
  /** Resources to cache. @default every resource */
  resources?: readonly string[];
  /**
   * The part of the caller an answer depends on. Callers with different values never share an
   * entry. @default the user's id and roles: each caller has entries of their own.
   * Return a constant when answers are the same for everyone who passes the rules.
   */
  varyBy?: (user: User | null) => string;
  /** Who may read GET /cache/stats. Denied when unset. */
  access?: { stats?: PluginRule<CacheAccessContext> };
}

export interface CacheStats {
  store: string;
  hits: number;
  misses: number;
  /** Lookups or saves the store failed; the request was answered from the database. */
  errors: number;
  /** Held by this process's memory store; null for shared stores. */
  entries: number | null;
  bytes: number | null;
}

const HIT_HEADERS = { "content-type": "application/json", "x-cache": "HIT" } as const;
const MISS_HEADERS = { "content-type": "application/json", "x-cache": "MISS" } as const;
// For an identified caller, built with the answer (see the handler's `Cache-Control: private`).
const PRIVATE_HIT = { ...HIT_HEADERS, "cache-control": PRIVATE } as const;
const PRIVATE_MISS = { ...MISS_HEADERS, "cache-control": PRIVATE } as const;

const CACHE_OPTION_KEYS = optionKeys<CacheOptions>()("store ttl resources varyBy access");

/**
 * Caches resource reads and lists over HTTP after their access rules ran, per caller and scope;
 * every write moves the resource's generation on. In memory, or shared in Redis.
 *
 * @example
 * cache({ ttl: 60, store: redisStore(new Redis(process.env.REDIS_URL!)), access: { stats: isAdmin } })
 */
export function cache(options: CacheOptions = {}) {
  checkOptionKeys(options, CACHE_OPTION_KEYS, "cache()");
  const store = options.store ?? memoryStore();
  const ttlMs = Math.round((options.ttl ?? 60) * 1000);
  if (!(ttlMs >= 1)) throw new Error("cache(): ttl must be a positive number of seconds.");
  const only = options.resources ? new Set(options.resources) : undefined;
  const varyBy = options.varyBy ?? byUser;
  const counts = { hits: 0, misses: 0, errors: 0 };
  let log: PluginContext["log"] = (message, error) => console.error(message, error);
  let telemetry: PluginContext["telemetry"] | undefined;

  async function serve(read: CachedRead, load: (read: CachedRead) => Promise<unknown>): Promise<unknown> {
    if (only && !only.has(read.resource)) return load(read);
    const key = `${read.operation}\0${varyBy(read.user)}\0${read.scope}\0${read.key}`;
    let generation: string;
    try {
      const pending = store.lookup(read.resource, key);
      // The memory store answers at once; waiting a turn for it would only add to every hit.
      const found = pending instanceof Promise ? await pending : pending;
      if (found.body !== undefined) {
        counts.hits++;
        telemetry?.count("cache.hit");
        return answer(found.body, read.user ? PRIVATE_HIT : HIT_HEADERS, read);
      }
      generation = found.generation;
    } catch (error) {
      // The store is down: answer from the database, uncached.
      counts.errors++;
      log("crudkit: cache lookup failed", error);
      return load(read);
    }
    counts.misses++;
    telemetry?.count("cache.miss");
    const result = await load(read);
    // A record keeps its version in the entry, in front of its JSON: `"tag"{…}`.
    const body =
      result instanceof Versioned ? result.etag + JSON.stringify(result.data) : JSON.stringify(result);
    await store.save(read.resource, key, generation, body, ttlMs).catch((error) => {
      counts.errors++;
      log("crudkit: cache save failed", error);
    });
    return answer(body, read.user ? PRIVATE_MISS : MISS_HEADERS, read);
  }

  const hooks: AnyResourceHooks = {
    afterWriteCommit: (ctx: HookContext) =>
      only && !only.has(ctx.resource) ? undefined : store.invalidate(ctx.resource),
  };

  const statsRoute: Endpoint<never, unknown, CacheStats, "/cache/stats"> = {
    method: "GET",
    path: "/cache/stats",
    doc: {
      summary: "Cache hits, misses and size",
      tags: ["cache"],
      response: {
        type: "object",
        properties: {
          store: { type: "string" },
          hits: { type: "integer" },
          misses: { type: "integer" },
          errors: { type: "integer" },
          entries: { type: ["integer", "null"] },
          bytes: { type: ["integer", "null"] },
        },
        required: ["store", "hits", "misses", "errors", "entries", "bytes"],
      },
    },
    async handler(ctx) {
      await authorizePluginRoute(options.access?.stats, ctx, {
        plugin: "cache",
        subject: "cache stats",
        operation: "stats",
      });
      const usage = store.usage?.();
      return {
        store: store.kind,
        ...counts,
        entries: usage?.entries ?? null,
        bytes: usage?.bytes ?? null,
      } satisfies CacheStats;
    },
  };

  return {
    id: "cache",
    hooks,
    readCache: {
      serve: (read, load) =>
        tracing()
          ? traced(
              "crudkit.cache",
              { "crudkit.resource": read.resource, "crudkit.operation": read.operation },
              () => serve(read, load),
            )
          : serve(read, load),
    },
    endpoints: [statsRoute],
    health: store.ping ? () => store.ping!() : undefined,
    init(context: PluginContext) {
      log = context.log;
      telemetry = context.telemetry;
    },
  } satisfies CrudkitPlugin;
}

/** An entry as a response: JSON, or a versioned record (its ETag, and 304 when the caller has it). */
function answer(entry: string, headers: Readonly<Record<string, string>>, read: CachedRead): Response {
  if (!entry.startsWith('"')) return new Response(entry, { headers });
  const end = entry.indexOf('"', 1) + 1;
  const method = read.ctx.request?.method;
  const ifNoneMatch = method === "GET" || method === "HEAD" ? read.ctx.headers.get("if-none-match") : null;
  return versionedResponse(entry.slice(end), entry.slice(0, end), 200, ifNoneMatch, headers);
}

function byUser(user: User | null): string {
  if (!user) return "";
  return user.roles?.length ? `${user.id}\0${[...user.roles].sort().join(",")}` : user.id;
}
