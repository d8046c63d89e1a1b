// A cache that lives as long as one request: rules that look something up (a user's memberships,
// a plan's limits) ask it, so the lookup runs once however many rules, resources and expansions
// of the request need it. Nothing is kept past the request, so nothing goes stale.

/**
 * One request's memo, handed to access rules, field rules and hooks as `cache`.
 *
 * @example
 * const teams = (ctx: { user: { id: string } | null; cache: RequestCache }) =>
 *   ctx.cache.get(`teams:${ctx.user?.id}`, async () => ["a", "b"]);
 */
export class RequestCache {
  // Made on first use: most requests never ask.
  #values: Map<string, unknown> | undefined;

  /** The value kept under `key`, or what `load` gives (a promise is kept as it is, so callers share it). */
  get<T>(key: string, load: () => T): T {
    this.#values ??= new Map();
    if (this.#values.has(key)) return this.#values.get(key) as T;
    const value = load();
    this.#values.set(key, value);
    return value;
  }

  has(key: string): boolean {
    return this.#values?.has(key) === true;
  }

  delete(key: string): boolean {
    return this.#values?.delete(key) === true;
  }
}
