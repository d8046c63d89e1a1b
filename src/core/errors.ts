// The one error type every endpoint throws, its closed set of codes, and the status each maps to.

import { type DriverErrors, isNetworkError } from "./driver-errors.ts";

/** Status for each error code: the wire contract of DESIGN §3. */
export const ERROR_STATUS = {
  BAD_REQUEST: 400,
  VALIDATION_ERROR: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  REQUEST_TIMEOUT: 408,
  CONFLICT: 409,
  PRECONDITION_FAILED: 412,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  RANGE_NOT_SATISFIABLE: 416,
  IDEMPOTENCY_KEY_REUSED: 422,
  PRECONDITION_REQUIRED: 428,
  RATE_LIMITED: 429,
  HEADERS_TOO_LARGE: 431,
  INTERNAL_ERROR: 500,
  SERVICE_UNAVAILABLE: 503,
  STATEMENT_TIMEOUT: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

/** One problem with one input field; `path` is dotted (`tags.0`), empty for the whole body. */
export interface ErrorDetail {
  path: string;
  message: string;
}

/** The error body every failed request answers with. */
export interface ErrorBody {
  code: ErrorCode;
  message: string;
  details?: ErrorDetail[];
  /** On a 5xx answered over HTTP: the request's id (`X-Request-Id`), for the user to quote. */
  requestId?: string;
}

/** A failure with a status, a code and a sentence meant for the caller. */
export class APIError extends Error {
  readonly status: number;
  readonly code: ErrorCode;
  readonly details: ErrorDetail[] | undefined;
  /** Extra response headers (for example `Allow` on a 405). */
  readonly headers: Record<string, string> | undefined;

  constructor(
    code: ErrorCode,
    message: string,
    options: { details?: ErrorDetail[]; headers?: Record<string, string>; cause?: unknown } = {},
  ) {
    // An APIError is an answer, not a fault: its stack is never sent nor logged, and collecting one
    // was about a fifth of the CPU a 404 costs. Other errors keep theirs.
    const depth = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(message, { cause: options.cause });
    Error.stackTraceLimit = depth;
    this.name = "APIError";
    this.code = code;
    this.status = ERROR_STATUS[code];
    this.details = options.details;
    this.headers = options.headers;
  }

  toJSON(): ErrorBody {
    return this.details
      ? { code: this.code, message: this.message, details: this.details }
      : { code: this.code, message: this.message };
  }
}

/** A mistake in the app's configuration, thrown when the app is built, never at request time. */
export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ConfigError";
  }
}

const GENERIC_ERROR = new APIError("INTERNAL_ERROR", "The server could not complete the request.");
// A retry is what this calls for: clients and load balancers are told when.
const UNAVAILABLE = new APIError("SERVICE_UNAVAILABLE", "The database is unavailable; try again shortly.", {
  headers: { "retry-after": "2" },
});
const COLLIDED = new APIError(
  "SERVICE_UNAVAILABLE",
  "The change collided with a concurrent one and was undone; nothing was stored. Send it again.",
  { headers: { "retry-after": "1" } },
);
const TIMED_OUT = new APIError(
  "STATEMENT_TIMEOUT",
  "The database did not answer within the statement timeout; try again, or narrow the request.",
);
const DOES_NOT_FIT = new APIError(
  "VALIDATION_ERROR",
  "A value does not fit its column (too long, or out of range); nothing was stored.",
);

/**
 * Turns anything thrown into an APIError. Unknown errors become a generic 500 and a database that
 * cannot be reached a 503; their causes are logged here and never sent, so driver messages, SQL
 * and paths stay on the server. `driver` is the database engine's reading of its errors (its
 * profile's); without one, only network errors are recognized.
 */
export function toAPIError(
  error: unknown,
  log: (message: string, error: unknown) => void,
  driver?: DriverErrors,
): APIError {
  if (error instanceof APIError) {
    if (error.status >= 500 && error.cause) log(`crudkit: ${error.message}`, error.cause);
    return error;
  }
  if (driver ? driver.unavailable(error) : isNetworkError(error)) {
    log("crudkit: the database is unavailable", error);
    return UNAVAILABLE;
  }
  if (driver?.collided(error)) {
    log("crudkit: a write collided with a concurrent one and was rolled back", error);
    return COLLIDED;
  }
  if (driver?.timedOut(error)) {
    log("crudkit: a statement ran past the statement timeout", error);
    return TIMED_OUT;
  }
  const misfit = driver?.misfit(error);
  if (misfit) {
    log("crudkit: the database refused a value", error);
    const { column } = misfit;
    // Named when the driver names it: a column name is the field's, or a plugin table's own.
    return column && /^[A-Za-z_][A-Za-z0-9_]{0,63}$/.test(column)
      ? new APIError("VALIDATION_ERROR", DOES_NOT_FIT.message, {
          details: [
            {
              path: column,
              message: "The database refused this value (too long, too deep, or out of range).",
            },
          ],
        })
      : DOES_NOT_FIT;
  }
  log("crudkit: unhandled error while serving a request", error);
  return GENERIC_ERROR;
}

/** The work's value, or `refused` when an access rule said no (403 FORBIDDEN); other errors pass. */
export async function unlessForbidden<T, R>(work: Promise<T>, refused: R): Promise<T | R> {
  try {
    return await work;
  } catch (error) {
    if (error instanceof APIError && error.code === "FORBIDDEN") return refused;
    throw error;
  }
}
