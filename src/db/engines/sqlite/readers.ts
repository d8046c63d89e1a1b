// Reader threads for SQLite. better-sqlite3 runs a statement synchronously, so one slow list (a
// search too short for the index, a count over a million rows) would hold up every other request
// while it runs. Lists over big tables run instead on worker threads, each with its own read-only
// connection to the same file: WAL lets them read while the main connection writes, and the event
// loop stays free for everything else. Writes, transactions and reads by id stay on the main
// connection, where they are fastest.

import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";
import {
  type CompiledQuery,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  Kysely,
  type QueryResult,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
} from "kysely";
import { APIError } from "../../../core/errors.ts";
import type { ReaderThreads } from "../../reader-threads.ts";
import { tableSize, walksIndex } from "./plan.ts";

// Plain JavaScript, run with `eval`: the same code whether crudkit runs from TypeScript sources
// (tsx, vitest) or from its build, with no file of its own to locate.
const READER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
const Database = require(workerData.driver);
const db = new Database(workerData.path, { readonly: true, fileMustExist: true });
db.pragma("busy_timeout = 5000");
const statements = new Map();
parentPort.on("message", ([id, sql, parameters]) => {
  try {
    let statement = statements.get(sql);
    if (!statement) {
      statement = db.prepare(sql);
      if (statements.size < 500) statements.set(sql, statement);
    }
    parentPort.postMessage([id, statement.all(parameters)]);
  } catch (error) {
    parentPort.postMessage([id, undefined, { message: String(error && error.message), code: error && error.code }]);
  }
});
`;

interface Pending {
  resolve(rows: Record<string, unknown>[]): void;
  reject(error: Error): void;
}

/** One reader thread and the queries it has in hand. */
class Reader {
  readonly worker: Worker;
  readonly pending = new Map<number, Pending>();
  readonly kysely: Kysely<any>;
  /** Set once the thread has ended: by `close()`, or by a crash the pool replaces it after. */
  ended: APIError | undefined;
  private next = 0;

  constructor(path: string, driver: string, closing: () => boolean, wrap: (dialect: Dialect) => Dialect) {
    this.worker = new Worker(READER_SOURCE, { eval: true, workerData: { path, driver } });
    // A reader never keeps the process alive by itself; closing the app ends it.
    this.worker.unref();
    this.worker.on("message", ([id, rows, error]: [number, Record<string, unknown>[], ReaderError?]) => {
      const pending = this.pending.get(id);
      this.pending.delete(id);
      if (error) pending?.reject(Object.assign(new Error(error.message), { code: error.code }));
      else pending?.resolve(rows);
    });
    // A thread that ends answers its lists in flight with a 503 (they may be retried), and takes no
    // more: a message posted to an ended thread is dropped without an error, so its query would
    // never settle. The pool starts another thread in its place.
    const end = () => {
      this.ended ??= closing()
        ? new APIError("SERVICE_UNAVAILABLE", "The service is shutting down; try again shortly.")
        : new APIError("SERVICE_UNAVAILABLE", "A database reader stopped; try again shortly.");
      for (const pending of this.pending.values()) pending.reject(this.ended);
      this.pending.clear();
    };
    this.worker.on("error", end);
    this.worker.on("exit", end);
    this.kysely = new Kysely<any>({ dialect: wrap(readerDialect(this)) });
  }

  run(sql: string, parameters: readonly unknown[]): Promise<Record<string, unknown>[]> {
    if (this.ended) return Promise.reject(this.ended);
    const id = this.next++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage([id, sql, parameters]);
    });
  }
}

interface ReaderError {
  message: string;
  code?: string;
}

/** `count` reader threads on the SQLite file at `path`. */
export function createSqliteReaders(
  path: string,
  count: number,
  main: Kysely<any>,
  /** Wraps each thread's dialect (observed-statements.ts times and traces each statement). */
  wrap: (dialect: Dialect) => Dialect = (dialect) => dialect,
): ReaderThreads {
  // Resolved when the first reader starts: by then the main connection has loaded the driver.
  let driver: string | undefined;
  const readers: Reader[] = [];
  let closing = false;
  return {
    pick() {
      // A thread that ended is dropped here; a new one starts below when it is needed.
      for (let i = readers.length - 1; i >= 0; i--) if (readers[i]!.ended) readers.splice(i, 1);
      if (readers.length < count) {
        const idle = readers.find((r) => r.pending.size === 0);
        if (idle) return idle.kysely;
        driver ??= createRequire(import.meta.url).resolve("better-sqlite3");
        const reader = new Reader(path, driver, () => closing, wrap);
        readers.push(reader);
        return reader.kysely;
      }
      let best = readers[0]!;
      for (const reader of readers) if (reader.pending.size < best.pending.size) best = reader;
      return best.kysely;
    },
    tableSize: (table) => tableSize(main, table),
    walksIndex,
    threads: () => readers.filter((r) => !r.ended).map((r) => r.worker),
    queued: () => readers.reduce((sum, reader) => sum + reader.pending.size, 0),
    async close() {
      closing = true;
      await Promise.all(readers.splice(0).map((r) => r.worker.terminate()));
    },
  };
}

function readerDialect(reader: Reader) {
  const connection: DatabaseConnection = {
    async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
      return { rows: (await reader.run(query.sql, query.parameters)) as R[] };
    },
    // biome-ignore lint/correctness/useYield: lists never stream
    async *streamQuery() {
      throw new Error("SQLite reader threads do not stream.");
    },
  };
  const driver: Driver = {
    async init() {},
    async acquireConnection() {
      return connection;
    },
    async beginTransaction() {
      throw new Error("SQLite reader threads only read; transactions run on the main connection.");
    },
    async commitTransaction() {},
    async rollbackTransaction() {},
    async releaseConnection() {},
    async destroy() {},
  };
  return {
    createAdapter: () => new SqliteAdapter(),
    createDriver: () => driver,
    createQueryCompiler: () => new SqliteQueryCompiler(),
    createIntrospector: (db: Kysely<any>) => new SqliteIntrospector(db),
  };
}
