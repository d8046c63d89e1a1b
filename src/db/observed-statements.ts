// Every statement the app runs, timed and traced for whoever listens (metrics(), an OpenTelemetry
// SDK): through Kysely's connections (a dialect wrapped around the engine's) and through the direct
// path (direct-path.ts), which skips Kysely's executor. When nobody listens, a statement costs one
// call that answers undefined.

import type { CompiledQuery, DatabaseConnection, Dialect, Driver, Kysely, QueryResult } from "kysely";

/** Ends one statement's observation, with its error when it failed. */
export type StatementEnd = (error?: unknown) => void;

export interface StatementProbe {
  /** Starts observing `sql` (its text with placeholders), or undefined when nobody listens. */
  start(sql: string): StatementEnd | undefined;
}

/** `dialect`, with each statement its connections run observed by `probe`. */
export function observedDialect(dialect: Dialect, probe: StatementProbe): Dialect {
  return {
    createAdapter: () => dialect.createAdapter(),
    createDriver: () => observedDriver(dialect.createDriver(), probe),
    createQueryCompiler: () => dialect.createQueryCompiler(),
    createIntrospector: (db: Kysely<any>) => dialect.createIntrospector(db),
  };
}

function observedDriver(driver: Driver, probe: StatementProbe): Driver {
  const observed = new WeakMap<DatabaseConnection, DatabaseConnection>();
  return {
    init: () => driver.init(),
    destroy: () => driver.destroy(),
    // The engines' drivers run BEGIN, COMMIT, ROLLBACK and savepoints through the connection
    // they are given: ours, so those are observed too. Only its release needs the engine's own.
    beginTransaction: (connection, settings) => driver.beginTransaction(connection, settings),
    commitTransaction: (connection) => driver.commitTransaction(connection),
    rollbackTransaction: (connection) => driver.rollbackTransaction(connection),
    releaseConnection: (connection) => driver.releaseConnection(inner(connection)),
    async acquireConnection() {
      const connection = await driver.acquireConnection();
      let wrapper = observed.get(connection);
      if (!wrapper) {
        wrapper = new ObservedConnection(connection, probe);
        observed.set(connection, wrapper);
      }
      return wrapper;
    },
    ...(driver.savepoint
      ? {
          savepoint: (connection: DatabaseConnection, name: string, compile: never) =>
            driver.savepoint!(connection, name, compile),
        }
      : {}),
    ...(driver.rollbackToSavepoint
      ? {
          rollbackToSavepoint: (connection: DatabaseConnection, name: string, compile: never) =>
            driver.rollbackToSavepoint!(connection, name, compile),
        }
      : {}),
    ...(driver.releaseSavepoint
      ? {
          releaseSavepoint: (connection: DatabaseConnection, name: string, compile: never) =>
            driver.releaseSavepoint!(connection, name, compile),
        }
      : {}),
  } as Driver;
}

/** The engine's own connection behind ours: its driver releases that one to its pool. */
function inner(connection: DatabaseConnection): DatabaseConnection {
  return connection instanceof ObservedConnection ? connection.connection : connection;
}

class ObservedConnection implements DatabaseConnection {
  constructor(
    readonly connection: DatabaseConnection,
    private readonly probe: StatementProbe,
  ) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const end = this.probe.start(query.sql);
    if (!end) return this.connection.executeQuery<R>(query);
    try {
      const result = await this.connection.executeQuery<R>(query);
      end();
      return result;
    } catch (error) {
      end(error);
      throw error;
    }
  }

  streamQuery<R>(query: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    return this.connection.streamQuery<R>(query, chunkSize);
  }
}

/**
 * A statement that may answer synchronously (SQLite's direct path), observed without making it
 * asynchronous: `end` once it has answered or failed.
 */
export function observedRun<T>(end: StatementEnd, run: () => T | Promise<T>): T | Promise<T> {
  let result: T | Promise<T>;
  try {
    result = run();
  } catch (error) {
    end(error);
    throw error;
  }
  if (!(result instanceof Promise)) {
    end();
    return result;
  }
  return result.then(
    (value) => {
      end();
      return value;
    },
    (error: unknown) => {
      end(error);
      throw error;
    },
  );
}
