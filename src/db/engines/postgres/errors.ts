// PostgreSQL's errors, as pg raises them: SQLSTATE codes, and a few messages of pg's own for a
// connection it already knows is broken.

import { type DriverErrors, isNetworkError, messageMatches, someCause } from "../../../core/driver-errors.ts";

/** Admin shutdown, crash shutdown, cannot connect now, and class 08, connection exceptions. */
const UNAVAILABLE = new Set([
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
]);

const LOST = [
  /Connection terminated/i,
  /Client has encountered a connection error and is not queryable/,
  // A client ended after its connection failed (a ROLLBACK after a lost statement, say).
  /Client was closed and is not queryable/,
  /timeout exceeded when trying to connect/i,
];

export const postgresErrors: DriverErrors = {
  unavailable: (error) =>
    isNetworkError(error) ||
    someCause(
      error,
      ({ code, message }) =>
        (typeof code === "string" && UNAVAILABLE.has(code)) || messageMatches(message, LOST),
    ),
  // deadlock_detected and serialization_failure: the transaction was rolled back.
  collided: (error) => someCause(error, ({ code }) => code === "40P01" || code === "40001"),
  // query_canceled, which is what statement_timeout raises.
  timedOut: (error) => (error as { code?: unknown } | null)?.code === "57014",
  misfit(error) {
    const { code, column } = (error ?? {}) as { code?: unknown; column?: unknown };
    // Class 22, "data exception", and 23514, a CHECK that failed.
    if (typeof code !== "string" || code.length !== 5 || !(code.startsWith("22") || code === "23514")) return;
    return { column: typeof column === "string" ? column : undefined };
  },
  foreignKey(error) {
    const { code, constraint } = (error ?? {}) as { code?: unknown; constraint?: unknown };
    if (code !== "23503") return;
    return { constraint: typeof constraint === "string" ? constraint : undefined };
  },
};
