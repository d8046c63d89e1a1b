// A connection can die while it waits in the pool: the server restarted, an operator ended the
// session, a proxy dropped it. The pools drop a connection once they notice, but a request may be
// handed one before the driver has read the news. Such a statement runs again on the next
// connection, when that is certainly harmless:
//
// - it never left the process (the driver refused it on a connection it knew was closed), or
// - it is a read or a BEGIN, and nothing else ran on the connection yet.
//
// A write that may have reached the server is never run twice: its outcome is unknown, the caller
// gets 503. With `Idempotency-Key` the key stays claimed, so the client's retry waits (409) instead
// of running again at once (see idempotency()). Inside a transaction only its
// BEGIN can be retried: the statements after it ran on the connection that is gone.
//
// When the server restarted, every idle connection in the pool is dead, and the next one handed out
// may be too. Each dead one is destroyed as it fails, so the attempts are bounded by the pool's size:
// past `MAX_ATTEMPTS`, or once the pool cannot connect at all, the caller gets 503.

import type {
  CompiledQuery,
  DatabaseConnection,
  Dialect,
  Driver,
  Kysely,
  QueryResult,
  TransactionSettings,
} from "kysely";
import type { DriverErrors } from "../core/driver-errors.ts";

/** The pools hold at most 10 connections: every one of them dead, then a fresh one. */
export const MAX_ATTEMPTS = 11;

/** Errors a driver raises before sending anything: the statement certainly did not run. */
const NEVER_SENT = [
  /Client has encountered a connection error and is not queryable/,
  /Client was closed and is not queryable/,
  /Can't add new command when connection is in closed state/,
];

/** The statement never reached the server: the driver refused it, or the socket did. */
export function neverSent(error: unknown): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  if (code === "EPIPE") return true;
  return typeof message === "string" && NEVER_SENT.some((pattern) => pattern.test(message));
}

/** A statement that changes nothing when run twice: a plain read, or opening a transaction. */
export function harmlessTwice(sql: string): boolean {
  return /^\s*(select\b|begin\b|start transaction\b)/i.test(sql) && !/\bfor (update|share)\b/i.test(sql);
}

/** Whether a statement that failed with `error` may run again on a fresh connection. */
export function mayRunAgain(error: unknown, sql: string, driver: DriverErrors): boolean {
  return driver.unavailable(error) && (neverSent(error) || harmlessTwice(sql));
}

/** Used after the connection was lost and none could replace it: the database is away (503). */
function lost(): never {
  throw Object.assign(new Error("The database connection was lost."), { code: "ECONNRESET" });
}

/** One checkout of a pooled connection, which may trade a dead connection for a fresh one once. */
class RetryingConnection implements DatabaseConnection {
  /** A statement succeeded on this checkout: session state now lives on this connection. */
  private used = false;

  constructor(
    private readonly driver: Driver,
    private readonly errors: DriverErrors,
    /** Undefined while a fresh connection is being acquired, or after acquiring it failed. */
    public inner: DatabaseConnection | undefined,
  ) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    for (let attempt = 1; ; attempt++) {
      const inner = this.inner ?? lost();
      try {
        const result = await inner.executeQuery<R>(query);
        this.used = true;
        return result;
      } catch (error) {
        if (this.used || attempt >= MAX_ATTEMPTS || !mayRunAgain(error, query.sql, this.errors)) throw error;
        // The driver has already closed the dead connection (see the engines' pools): giving it
        // back only forgets it. Given back once: the checkout holds nothing until the next arrives.
        this.inner = undefined;
        await this.driver.releaseConnection(inner).catch(() => {});
        this.inner = await this.driver.acquireConnection();
      }
    }
  }

  streamQuery<R>(query: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    this.used = true;
    return (this.inner ?? lost()).streamQuery<R>(query, chunkSize);
  }
}

/** `driver`, with each checkout able to run its first statement again on another connection. */
function retryingDriver(driver: Driver, errors: DriverErrors): Driver {
  const inner = (connection: DatabaseConnection) => (connection as RetryingConnection).inner;
  return {
    init: () => driver.init(),
    acquireConnection: async () => new RetryingConnection(driver, errors, await driver.acquireConnection()),
    // The engine's driver runs BEGIN, COMMIT and savepoints through the connection it is given, so
    // they go through the retrying one.
    beginTransaction: (connection, settings: TransactionSettings) =>
      driver.beginTransaction(connection, settings),
    commitTransaction: (connection) => driver.commitTransaction(connection),
    rollbackTransaction: (connection) => driver.rollbackTransaction(connection),
    ...(driver.savepoint && {
      savepoint: driver.savepoint.bind(driver),
      rollbackToSavepoint: driver.rollbackToSavepoint?.bind(driver),
      releaseSavepoint: driver.releaseSavepoint?.bind(driver),
    }),
    releaseConnection: async (connection) => {
      const held = inner(connection);
      if (held) await driver.releaseConnection(held);
    },
    destroy: () => driver.destroy(),
  };
}

/**
 * `dialect` with lost connections retried where harmless (see above). For the pooled engines
 * (PostgreSQL, MySQL); SQLite's connection is in the process and cannot be lost.
 */
export function retryingDialect(dialect: Dialect, errors: DriverErrors): Dialect {
  return {
    createAdapter: () => dialect.createAdapter(),
    createDriver: () => retryingDriver(dialect.createDriver(), errors),
    createQueryCompiler: () => dialect.createQueryCompiler(),
    createIntrospector: (db: Kysely<any>) => dialect.createIntrospector(db),
  };
}
