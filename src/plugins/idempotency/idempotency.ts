// idempotency(): `Idempotency-Key` on creates and uploads. The first request with a key runs and
// its answer is kept (per caller, for a ttl); a retry with the same key and the same request gets
// that answer again, status and body, and nothing is created twice. The same key with another
// request is a 422. Retries arriving while the first still runs wait for its answer.

import { createHash } from "node:crypto";
import { addressKey } from "../../core/client-address.ts";
import type { Endpoint, EndpointContext } from "../../core/endpoint.ts";
import { APIError } from "../../core/errors.ts";
import { Versioned } from "../../core/etag.ts";
import { checkOptionKeys, optionKeys } from "../../core/option-keys.ts";
import type { CrudkitPlugin, PluginContext } from "../../core/plugin.ts";
import { type Fingerprint, fingerprintOf, observed } from "./request-fingerprint.ts";
import { databaseStore, type IdempotencyStore, idempotencyKeysTable, type StoredAnswer } from "./store.ts";

export interface IdempotencyOptions {
  /** Seconds a key and its answer are kept. @default 86400 (a day) */
  ttl?: number;
  /** Where keys are kept. @default the app's database (table `crudkit_idempotency_keys`) */
  store?: IdempotencyStore;
  /** Seconds a retry waits for the first request with its key to finish before answering 409. @default 10 */
  wait?: number;
  /**
   * Seconds after which a key whose first request never finished (its instance stopped) is free
   * again. @default 60
   */
  staleAfter?: number;
}

const HEADER = "idempotency-key";
/** 1 to 255 visible ASCII characters: a UUID, a ULID, or any token a client makes. */
const VALID_KEY = /^[\x21-\x7e]{1,255}$/;
const CLAIM_ATTEMPTS = 3;

const IDEMPOTENCY_OPTION_KEYS = optionKeys<IdempotencyOptions>()("ttl store wait staleAfter");

/**
 * Lets clients retry creates and uploads safely: a request carrying `Idempotency-Key` is answered
 * once, and every retry with the same key and body gets the same answer (status and body) without
 * creating anything again. Keys are per caller (her user id, or her address when anonymous).
 *
 * @example
 * crudkit({ database, resources, plugins: [idempotency({ ttl: 24 * 3600 })] });
 * // curl -X POST …/api/order -H 'Idempotency-Key: 4f1c…' -d '{…}'   (send it again: same answer)
 */
export function idempotency(options: IdempotencyOptions = {}) {
  checkOptionKeys(options, IDEMPOTENCY_OPTION_KEYS, "idempotency()");
  const ttlMs = seconds(options.ttl ?? 86_400, "ttl");
  const waitMs = seconds(options.wait ?? 10, "wait");
  const staleMs = seconds(options.staleAfter ?? 60, "staleAfter");
  let db: PluginContext["db"] | undefined;
  const store =
    options.store ??
    databaseStore(() => {
      if (!db) throw new Error("idempotency(): the app is not ready.");
      return db;
    });

  function wrap(endpoint: Endpoint, handler: Endpoint["handler"], app: PluginContext) {
    if (!endpoint.idempotent) return undefined;
    const status = endpoint.status ?? 200;

    async function first(key: string, token: string, ctx: EndpointContext): Promise<unknown> {
      const watched = observed(ctx, app);
      let result: unknown;
      try {
        result = await handler(watched.ctx);
      } catch (error) {
        // The database went away mid-request: the write may have committed, so the key stays
        // claimed, and a retry waits (409) until it goes stale rather than running again at once.
        if (!app.profile.errors.unavailable(error))
          await store
            .release(key, token)
            .catch((e) => app.log("crudkit: could not release an idempotency key", e));
        throw error;
      }
      const fingerprint = await watched.fingerprint();
      const answer = fingerprint === undefined ? undefined : await answerOf(result, status);
      // An answer that cannot be kept leaves the key free: a retry runs again rather than failing.
      const kept = answer ? store.answer(key, token, fingerprint!, answer, ttlMs) : store.release(key, token);
      await kept.catch((e) => app.log("crudkit: could not keep an idempotency key's answer", e));
      return result;
    }

    return async (ctx: EndpointContext): Promise<unknown> => {
      const given = ctx.headers.get(HEADER);
      if (given === null) return handler(ctx);
      if (!VALID_KEY.test(given))
        throw new APIError(
          "BAD_REQUEST",
          "Idempotency-Key must be 1 to 255 visible ASCII characters (a UUID, say).",
        );
      // Credentials are checked first (401), and keys never cross callers.
      const user = await ctx.getUser();
      const scope = user ? `user\0${user.id}` : `address\0${addressKey(ctx.ip)}`;
      const key = createHash("sha256")
        .update(`${scope}\0${endpoint.method} ${endpoint.path}\0${given}`)
        .digest("base64url");
      for (let attempt = 0; attempt < CLAIM_ATTEMPTS; attempt++) {
        const token = await store.claim(key, ttlMs);
        if (token !== undefined) return first(key, token, ctx);
        const entry = await answered(store, key, waitMs, staleMs);
        if (entry === "busy")
          throw new APIError(
            "CONFLICT",
            "A request with this Idempotency-Key is still being processed; retry it shortly.",
            { headers: { "retry-after": "1" } },
          );
        // Released (the first failed) or gone stale: claim it again.
        if (entry === undefined) continue;
        if ((await fingerprintOf(ctx, entry.fingerprint)) !== entry.fingerprint)
          throw new APIError(
            "IDEMPOTENCY_KEY_REUSED",
            "This Idempotency-Key was used for a different request; use a new key for a new request.",
          );
        app.telemetry.count("idempotency.replayed");
        return replay(entry.answer, ctx);
      }
      throw new APIError("CONFLICT", "Requests with this Idempotency-Key keep failing; retry it shortly.", {
        headers: { "retry-after": "1" },
      });
    };
  }

  return {
    id: "idempotency",
    tables: options.store ? [] : [idempotencyKeysTable],
    init(app: PluginContext) {
      db = app.db;
    },
    wrap,
    describeWrapped: (endpoint: Endpoint) =>
      endpoint.idempotent
        ? {
            requestHeaders: {
              "Idempotency-Key":
                "Makes the request safe to retry: the same key and body get the first answer again, and nothing is created twice; the same key with another body is a 422.",
            },
            responseHeaders: { "Idempotent-Replayed": "`true` on an answer replayed for a retry." },
            errors: [409, 422],
          }
        : undefined,
    health: store.ping ? () => store.ping!() : undefined,
  } satisfies CrudkitPlugin;
}

/** The answer of a finished first request, `undefined` when the key is free again, or "busy". */
async function answered(
  store: IdempotencyStore,
  key: string,
  waitMs: number,
  staleMs: number,
): Promise<{ fingerprint: Fingerprint; answer: StoredAnswer } | undefined | "busy"> {
  const deadline = Date.now() + waitMs;
  let pause = 10;
  for (;;) {
    const entry = await store.get(key);
    if (!entry) return undefined;
    if (entry.answer) return { fingerprint: entry.fingerprint, answer: entry.answer };
    if (Date.now() - entry.at > staleMs) {
      // Only the stale claim: if another retry took the key over meanwhile, its claim stays.
      await store.release(key, entry.token);
      return undefined;
    }
    if (Date.now() >= deadline) return "busy";
    await new Promise((resolve) => setTimeout(resolve, pause));
    pause = Math.min(pause * 2, 200);
  }
}

/**
 * What is kept of a first answer. A plugin wrapped inside this one may have turned the answer into
 * a Response (rateLimit() adds its headers so): it is kept as well, read from a copy, when it is a
 * success with a JSON body, so the order plugins are listed in never changes what a key does.
 */
async function answerOf(result: unknown, status: number): Promise<StoredAnswer | undefined> {
  if (result instanceof Response) {
    const type = result.headers.get("content-type") ?? "";
    if (!result.ok || !type.startsWith("application/json") || result.body === null) return undefined;
    const etag = result.headers.get("etag");
    const body = await result.clone().text();
    return etag ? { status: result.status, body, etag } : { status: result.status, body };
  }
  if (result instanceof Versioned) return { status, body: JSON.stringify(result.data), etag: result.etag };
  return { status, body: JSON.stringify(result) };
}

/** The first answer again: as sent over HTTP (marked as replayed), or as data for server code. */
function replay(answer: StoredAnswer, ctx: EndpointContext): unknown {
  if (ctx.request) {
    const headers: Record<string, string> = {
      "content-type": "application/json",
      "idempotent-replayed": "true",
    };
    if (answer.etag) headers.etag = answer.etag;
    return new Response(answer.body, { status: answer.status, headers });
  }
  const data = JSON.parse(answer.body) as object;
  return answer.etag ? new Versioned(data, answer.etag, false) : data;
}

function seconds(value: number, name: string): number {
  if (!(Number.isFinite(value) && value > 0))
    throw new Error(`idempotency(): ${name} must be a positive number of seconds.`);
  return Math.round(value * 1000);
}
