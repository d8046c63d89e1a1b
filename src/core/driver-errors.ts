// How a database's errors read. Each engine's profile answers `DriverErrors` for its driver
// (db/engines/<name>/errors.ts), so a new engine does not compile until it says which of its errors
// mean "the database is away" (503), "too slow" (the statement timeout), "this value does not fit"
// (400) and "that reference does not exist" (409/400). What no engine owns lives here: the
// network's errors, which any socket raises (a database's, Redis's), and Kysely's own.

export interface DriverErrors {
  /** The database cannot be reached now (restarting, session ended, socket lost): answer 503, retry later. */
  unavailable(error: unknown): boolean;
  /** The server stopped a statement that ran past the statement timeout. */
  timedOut(error: unknown): boolean;
  /**
   * The server undid the transaction to settle a lock conflict with another (a deadlock, a
   * serialization failure): nothing was stored, and the same write may succeed when sent again.
   */
  collided(error: unknown): boolean;
  /** A value that does not fit its column (too long, out of range), and the column where the driver names it. */
  misfit(error: unknown): { column: string | undefined } | undefined;
  /** A foreign key violation, and the constraint where the driver names it. */
  foreignKey(error: unknown): { constraint: string | undefined } | undefined;
}

/** The fields drivers put on their errors (pg, mysql2, better-sqlite3, Node's sockets). */
export interface ErrorFields {
  code?: unknown;
  errno?: unknown;
  message?: unknown;
  sqlMessage?: unknown;
  column?: unknown;
  constraint?: unknown;
}

/** Whether `error` or one of its causes (drivers and Kysely wrap errors) passes `test`. */
export function someCause(error: unknown, test: (fields: ErrorFields) => boolean): boolean {
  for (let current = error, depth = 0; current && depth < 4; depth++) {
    if (test(current as ErrorFields)) return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}

/** Whether `message` is a string one of `patterns` matches. */
export function messageMatches(message: unknown, patterns: readonly RegExp[]): boolean {
  return typeof message === "string" && patterns.some((pattern) => pattern.test(message));
}

const NETWORK_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EPIPE",
  "ENOTFOUND",
  "EHOSTUNREACH",
]);

const NETWORK_MESSAGES = [
  /connect ETIMEDOUT/i,
  // Kysely, once the app is closed.
  /driver has already been destroyed/i,
];

/**
 * A socket that could not connect or was lost, whatever is behind it, or a Kysely instance already
 * destroyed. Every engine's `unavailable` includes it.
 */
export function isNetworkError(error: unknown): boolean {
  return someCause(
    error,
    ({ code, message }) =>
      (typeof code === "string" && NETWORK_CODES.has(code)) || messageMatches(message, NETWORK_MESSAGES),
  );
}
