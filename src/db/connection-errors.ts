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
  "08006",
  // mysql2
  "PROTOCOL_CONNECTION_LOST",
  "ER_CON_COUNT_ERROR",
  "ER_SERVER_SHUTDOWN",
  "SQLITE_BUSY",
]);

const MESSAGES = [
  /Connection terminated/i,
  /timeout exceeded when trying to connect/i,
  /Pool is closed/i,
  /connect ETIMEDOUT/i,
  // Kysely, once the app is closed.
  /driver has already been destroyed/i,
];

export function isConnectionError(error: unknown): boolean {
  for (let current = error, depth = 0; current && depth < 4; depth++) {
    const { code, message } = current as { code?: unknown; message?: unknown };
    if (typeof code === "string" && CODES.has(code)) return true;
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
