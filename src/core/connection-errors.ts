// Errors that mean "the database cannot be reached right now", whatever the driver: requests
// answer 503 SERVICE_UNAVAILABLE for them, and the app recovers when the database is back.

const CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EPIPE",
  "ENOTFOUND",
  "EHOSTUNREACH",
  // PostgreSQL: admin shutdown, crash shutdown, cannot connect now, connection failures.
  "57P01",
  "57P02",
  "57P03",
  "08000",
  "08001",
  "08003",
  "08004",
  "08006",
  "08007",
  "08P01",
  // mysql2, and the MySQL client errors "server has gone away" (2006) and "lost connection" (2013)
  "PROTOCOL_CONNECTION_LOST",
  "ER_CON_COUNT_ERROR",
  "ER_SERVER_SHUTDOWN",
  "CR_SERVER_GONE_ERROR",
  "CR_SERVER_LOST",
  "SQLITE_BUSY",
]);

/** MySQL server and client error numbers for the same: shutdown (1053), gone (2006), lost (2013). */
const ERRNOS = new Set([1053, 2006, 2013]);

// Errors the drivers raise without a code, each from one fixed place in the driver: a connection
// already broken that was used again (pg: "not queryable"; mysql2: "closed state"). They mean the
// same as the codes above: the database went away, not a bug.
const MESSAGES = [
  /Connection terminated/i,
  /Client has encountered a connection error and is not queryable/,
  // pg, for a client ended after its connection failed (a ROLLBACK after a lost statement, say).
  /Client was closed and is not queryable/,
  /Can't add new command when connection is in closed state/,
  /This socket has been ended by the other party/,
  /timeout exceeded when trying to connect/i,
  /Pool is closed/i,
  /connect ETIMEDOUT/i,
  // Kysely, once the app is closed.
  /driver has already been destroyed/i,
];

export function isConnectionError(error: unknown): boolean {
  for (let current = error, depth = 0; current && depth < 4; depth++) {
    const { code, errno, message } = current as { code?: unknown; errno?: unknown; message?: unknown };
    if (typeof code === "string" && CODES.has(code)) return true;
    if (typeof errno === "number" && ERRNOS.has(errno)) return true;
    if (typeof message === "string" && MESSAGES.some((pattern) => pattern.test(message))) return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}

/** The server stopped a statement that ran past the statement timeout, whatever the driver. */
export function isStatementTimeout(error: unknown): boolean {
  const { code, errno } = (error ?? {}) as { code?: unknown; errno?: unknown };
  // PostgreSQL query_canceled; MariaDB ER_STATEMENT_TIMEOUT; MySQL ER_QUERY_TIMEOUT.
  return code === "57014" || errno === 1969 || errno === 3024;
}
