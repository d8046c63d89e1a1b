// MySQL's and MariaDB's errors, as mysql2 raises them: a code name and the server's error number,
// and a few messages of mysql2's own for a connection or pool it already knows is closed.

import { type DriverErrors, isNetworkError, messageMatches, someCause } from "../../../core/driver-errors.ts";

const UNAVAILABLE = new Set([
  "PROTOCOL_CONNECTION_LOST",
  "ER_CON_COUNT_ERROR",
  "ER_SERVER_SHUTDOWN",
  // The client errors "server has gone away" (2006) and "lost connection" (2013).
  "CR_SERVER_GONE_ERROR",
  "CR_SERVER_LOST",
]);

/** The same by number: shutdown (1053), gone (2006), lost (2013). */
const UNAVAILABLE_ERRNOS = new Set([1053, 2006, 2013]);

const CLOSED = [
  /Can't add new command when connection is in closed state/,
  /This socket has been ended by the other party/,
  /Pool is closed/i,
];

const MISFITS = new Set([
  "ER_DATA_TOO_LONG",
  "ER_WARN_DATA_OUT_OF_RANGE",
  "ER_TRUNCATED_WRONG_VALUE",
  "ER_TRUNCATED_WRONG_VALUE_FOR_FIELD",
  "ER_INVALID_JSON_TEXT",
  "ER_DATETIME_FUNCTION_OVERFLOW",
  // MySQL 8: a CHECK failed.
  "ER_CHECK_CONSTRAINT_VIOLATED",
]);

export const mysqlErrors: DriverErrors = {
  unavailable: (error) =>
    isNetworkError(error) ||
    someCause(
      error,
      ({ code, errno, message }) =>
        (typeof code === "string" && UNAVAILABLE.has(code)) ||
        (typeof errno === "number" && UNAVAILABLE_ERRNOS.has(errno)) ||
        messageMatches(message, CLOSED),
    ),
  // ER_LOCK_DEADLOCK: InnoDB rolled the transaction back.
  collided: (error) => someCause(error, ({ errno }) => errno === 1213),
  // MariaDB's ER_STATEMENT_TIMEOUT, MySQL's ER_QUERY_TIMEOUT.
  timedOut(error) {
    const errno = (error as { errno?: unknown } | null)?.errno;
    return errno === 1969 || errno === 3024;
  },
  misfit(error) {
    const { code, errno, sqlMessage, message } = (error ?? {}) as {
      code?: unknown;
      errno?: unknown;
      sqlMessage?: unknown;
      message?: unknown;
    };
    const text = typeof sqlMessage === "string" ? sqlMessage : typeof message === "string" ? message : "";
    // MariaDB's ER_CONSTRAINT_FAILED (a CHECK, such as a JSON column's json_valid: too deep, say);
    // mysql2 names errno 4025 after MySQL's error of that number, so it is read by number and text.
    const failedCheck = errno === 4025 && /^CONSTRAINT `[^`]+` failed/.test(text);
    if (!failedCheck && !(typeof code === "string" && MISFITS.has(code))) return;
    const named =
      /for column [`']([^`']+)[`']/.exec(text) ?? /CONSTRAINT `(?:[^`.]*\.)?([^`]+)` failed/.exec(text);
    return { column: named?.[1] };
  },
  foreignKey(error) {
    const { code, sqlMessage, message } = (error ?? {}) as {
      code?: unknown;
      sqlMessage?: string;
      message?: string;
    };
    if (code !== "ER_NO_REFERENCED_ROW_2" && code !== "ER_ROW_IS_REFERENCED_2") return;
    return { constraint: /CONSTRAINT `([^`]+)`/.exec(sqlMessage ?? message ?? "")?.[1] };
  },
};
