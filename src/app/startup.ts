// The app's startup (migrations, plugin init) as a gate every request passes: free once open, a
// wait during the first attempt, and a 503 while it has failed. A startup that could not reach
// the database can be run again (serve() does, with backoff) and carries on from the step that
// failed, so nothing done before is done twice.

import type { DriverErrors } from "../core/driver-errors.ts";
import { APIError } from "../core/errors.ts";
import type { StartupGate } from "../core/http-handler.ts";

export type { StartupGate };

/**
 * `app.ready` rejects with this when the database cannot be reached at startup: a crudkit error
 * with the host and the driver's cause, instead of the driver's stack.
 */
export class DatabaseUnreachableError extends Error {
  readonly code = "DATABASE_UNREACHABLE";
  /** `host:port` (never the user or password). */
  readonly host: string;
  constructor(host: string, cause: unknown) {
    super(`crudkit: cannot reach the database at ${host} (${causeOf(cause)}).`, { cause });
    this.name = "DatabaseUnreachableError";
    this.host = host;
    // One readable line where the process prints it: the driver's frames say nothing useful here.
    this.stack = `${this.name}: ${this.message}`;
  }
}

/** `host:port` a connection error names (a Redis or bus connection, say), when it names one. */
function addressOf(error: unknown): string | undefined {
  for (let current = error, depth = 0; current && depth < 4; depth++) {
    const { address, port } = current as { address?: unknown; port?: unknown };
    if (typeof address === "string" && typeof port === "number") return `${address}:${port}`;
    current =
      (current as { cause?: unknown; errors?: unknown[] }).errors?.[0] ??
      (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/** The driver's own words, short: a code such as ECONNREFUSED, or the first line of its message. */
function causeOf(cause: unknown): string {
  for (let current = cause, depth = 0; current && depth < 4; depth++) {
    const { code, message, errors } = current as { code?: unknown; message?: unknown; errors?: unknown };
    if (typeof code === "string" && /^[A-Z_]+$/.test(code)) return code;
    if (Array.isArray(errors) && errors.length > 0) return causeOf(errors[0]);
    if (typeof message === "string" && message !== "") return message.split("\n")[0]!.slice(0, 200);
    current = (current as { cause?: unknown }).cause;
  }
  return "no answer";
}

export interface Startup {
  /** The first attempt: `app.ready`. */
  readonly ready: Promise<void>;
  readonly gate: StartupGate;
  /** Whether startup has finished. */
  readonly open: boolean;
  /**
   * Runs startup again after it could not reach the database, from the step that failed.
   * Resolves once open; rejects as `ready` did (DatabaseUnreachableError, or the step's error).
   */
  retry(): Promise<void>;
}

/** Seconds a caller is told to wait while the database is unreachable at startup. */
const RETRY_AFTER_S = "5";

export function createStartup(
  steps: readonly (() => unknown)[],
  host: string,
  log: (message: string, error: unknown) => void,
  /** The database engine's reading of its errors: which mean it cannot be reached. */
  driverErrors: DriverErrors,
): Startup {
  let next = 0;
  let state: "starting" | "open" | "unreachable" | "failed" = "starting";
  let failure: unknown;
  let failureLogged = false;
  const run = async () => {
    try {
      for (; next < steps.length; next++) await steps[next]!();
      state = "open";
    } catch (error) {
      failureLogged = false;
      if (driverErrors.unavailable(error)) {
        state = "unreachable";
        failure = new DatabaseUnreachableError(addressOf(error) ?? host, error);
      } else {
        state = "failed";
        failure = error;
      }
      throw failure;
    }
  };
  let current = run();
  let retrying: Promise<void> | undefined;
  const ready = current;
  // Callers that never await `ready` must not crash the process; the handler reports the failure.
  ready.catch(() => {});

  /** The 503 while startup has failed; the cause is logged once per failed attempt. */
  const refused = () => {
    if (!failureLogged) log("crudkit: startup failed (migrations or plugin init)", failure);
    failureLogged = true;
    return state === "unreachable"
      ? new APIError("SERVICE_UNAVAILABLE", "The database is not reachable yet; try again shortly.", {
          headers: { "retry-after": RETRY_AFTER_S },
        })
      : new APIError("SERVICE_UNAVAILABLE", "The service could not start; try again later.");
  };
  const wait = async () => {
    try {
      await current;
    } catch {
      throw refused();
    }
  };
  return {
    ready,
    get open() {
      return state === "open";
    },
    // Once open, no promise is made per request; while a failed startup is retried, requests are
    // answered at once instead of waiting on a connection attempt.
    gate: () => (state === "open" ? undefined : state === "starting" ? wait() : Promise.reject(refused())),
    retry() {
      if (state === "open") return Promise.resolve();
      if (state !== "unreachable") return current;
      // One retry at a time: a second caller waits for the one under way (the steps are not run twice).
      retrying ??= run().finally(() => {
        retrying = undefined;
      });
      current = retrying;
      current.catch(() => {});
      return current;
    },
  };
}
