// SQLite's errors, as better-sqlite3 raises them (extended result codes). The database is a file
// in the process: it is never "away", only busy past the busy timeout.

import { type DriverErrors, isNetworkError } from "../../../core/driver-errors.ts";

export const sqliteErrors: DriverErrors = {
  // Network errors still count: a plugin's Redis, say, on an app whose database is SQLite.
  unavailable: (error) =>
    isNetworkError(error) || (error as { code?: unknown } | null)?.code === "SQLITE_BUSY",
  // SQLite has no statement timeout.
  timedOut: () => false,
  // One writer at a time: transactions wait for each other (busy_timeout) rather than deadlock.
  collided: () => false,
  misfit(error) {
    const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
    if (code !== "SQLITE_TOOBIG" && code !== "SQLITE_CONSTRAINT_CHECK") return;
    return {
      column: typeof message === "string" ? /CHECK constraint failed: (\w+)$/.exec(message)?.[1] : undefined,
    };
  },
  foreignKey(error) {
    const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
    // A RESTRICT key is reported as a trigger. SQLite names no constraint.
    const restrict =
      code === "SQLITE_CONSTRAINT_TRIGGER" && typeof message === "string" && /FOREIGN KEY/.test(message);
    return code === "SQLITE_CONSTRAINT_FOREIGNKEY" || restrict ? { constraint: undefined } : undefined;
  },
};
