// A batch's creates of one resource, sent as one multi-row INSERT instead of one statement each.
// On PostgreSQL and MySQL a statement is a round trip, and the driver's work for it (about 70 µs
// of CPU with pg on the bench machine) bounds a batch at under twice the rows per second of
// separate requests; one INSERT of 50 rows costs about as much as one of a single row.
//
// Nothing may see the difference. The batch turns coalescing on for its transaction's connection
// (`coalesceInserts`), and from then on an insert the record store offers (`holdInsert`) is held
// instead of sent: no statement, no trip through Kysely's executor. Any other statement on that connection (a hook's read, a
// reference check, another resource's write, a savepoint, COMMIT) first sends what is held, in
// order: whatever runs in the transaction sees every earlier write, as it would have.
//
// When a multi-row INSERT fails, it is undone to a savepoint and its rows are sent one by one, so
// the failure belongs to the row that caused it: its batch step, and its own explanation (a unique
// conflict, a missing reference). From then on the connection refuses every statement with that
// failure, COMMIT included, so a hook that caught the error cannot let the batch commit without it.
//
// SQLite is not wrapped: its statements are calls into the process, with no round trip to save.

import {
  CompiledQuery,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type Kysely,
  type QueryResult,
} from "kysely";

const SESSION = Symbol("crudkit.coalescing");

/** One table's INSERT, for any number of rows of the same columns. */
export interface InsertShape {
  /** Parameters one row binds. */
  readonly width: number;
  /** The statement for `rows` rows, each row's parameters in the one-row statement's order. */
  many(rows: number): string;
}

/** What a deferrable INSERT carries beside its statement. */
export interface Deferrable {
  readonly shape: InsertShape;
  /** What a failure of this row means to its caller (as its own statement's catch would have said). */
  explain(error: unknown): Promise<unknown>;
}

/** The batch's side of coalescing: the step whose writes are being made, so a failure names it. */
export class CoalescingSession {
  step = 0;
  /** The transaction's connection, once it took the session. */
  connection: CoalescingConnection | undefined;
}

/** A held INSERT failed when it was finally sent: the step it belongs to, and what went wrong. */
export class CoalescedInsertFailed extends Error {
  constructor(
    readonly step: number,
    readonly error: unknown,
    private readonly explanation: Deferrable["explain"],
  ) {
    super("A coalesced INSERT failed.", { cause: error });
  }

  /** The error its own statement would have thrown (a 409, a 400 naming a reference, a 503). */
  explain(): Promise<unknown> {
    return this.explanation(this.error);
  }
}

/** Bound on the parameters of one multi-row statement (far below every engine's limit). */
const MAX_PARAMETERS = 1_000;
const SAVEPOINT = "ck_coalesced";
const HELD: QueryResult<never> = Object.freeze({ rows: [], numAffectedRows: 1n }) as QueryResult<never>;

/** The roots whose transactions can coalesce (their dialect is wrapped). */
const coalescing = new WeakSet<Kysely<any>>();
/** The transactions coalescing now, and their sessions. */
const sessions = new WeakMap<Kysely<any>, CoalescingSession>();

/** Notes that `db`'s dialect was wrapped by `coalescingDialect`. */
export function registerCoalescing(db: Kysely<any>): Kysely<any> {
  coalescing.add(db);
  return db;
}

/**
 * Turns coalescing on for the rest of `trx`, a transaction of `root`, and returns its session; or
 * undefined where the database cannot (SQLite, a Kysely instance the app made itself).
 */
export async function coalesceInserts(
  root: Kysely<any>,
  trx: Kysely<any>,
): Promise<CoalescingSession | undefined> {
  if (!coalescing.has(root) || !trx.isTransaction) return undefined;
  const session = new CoalescingSession();
  await trx.executeQuery(control({ session }));
  sessions.set(trx, session);
  return session;
}

/**
 * Holds `statement` (an INSERT of one row) on `db`'s connection when `db` is a transaction that
 * coalesces; false when it is not, and the caller runs it as usual.
 */
export function holdInsert(
  db: Kysely<any>,
  statement: CompiledQuery,
  parameters: readonly unknown[],
  deferrable: Deferrable,
): boolean {
  const session = sessions.get(db);
  return session?.connection?.hold(session, statement, parameters, deferrable) ?? false;
}

/** Sends what `trx` holds; throws the `CoalescedInsertFailed` of a row that failed, now or before. */
export async function flushInserts(trx: Kysely<any>): Promise<void> {
  await trx.executeQuery(control({ session: undefined }));
}

interface Control {
  /** Coalescing on (a session) or, with undefined, a flush only. */
  session: CoalescingSession | undefined;
}

/** A statement only the wrapper reads; it never reaches the database. */
function control(value: Control): CompiledQuery {
  return { ...CompiledQuery.raw("select 1"), [SESSION]: value } as CompiledQuery;
}

/** `dialect` with inserts that its transactions' connections may coalesce (see the file's comment). */
export function coalescingDialect(dialect: Dialect): Dialect {
  return {
    createAdapter: () => dialect.createAdapter(),
    createDriver: () => coalescingDriver(dialect.createDriver()),
    createQueryCompiler: () => dialect.createQueryCompiler(),
    createIntrospector: (db: Kysely<any>) => dialect.createIntrospector(db),
  };
}

function coalescingDriver(driver: Driver): Driver {
  const wrappers = new WeakMap<DatabaseConnection, CoalescingConnection>();
  const own = (connection: DatabaseConnection) => connection as CoalescingConnection;
  return {
    init: () => driver.init(),
    destroy: () => driver.destroy(),
    async acquireConnection() {
      const connection = await driver.acquireConnection();
      let wrapper = wrappers.get(connection);
      if (!wrapper) {
        wrapper = new CoalescingConnection(connection);
        wrappers.set(connection, wrapper);
      }
      return wrapper;
    },
    releaseConnection(connection) {
      own(connection).end();
      return driver.releaseConnection(own(connection).connection);
    },
    beginTransaction: (connection, settings) => driver.beginTransaction(connection, settings),
    async commitTransaction(connection) {
      await own(connection).flush();
      own(connection).end();
      await driver.commitTransaction(connection);
    },
    async rollbackTransaction(connection) {
      own(connection).end();
      await driver.rollbackTransaction(connection);
    },
    // Kysely's own savepoints run through the connection given, so what is held is sent first.
    ...(driver.savepoint ? { savepoint: driver.savepoint.bind(driver) } : {}),
    ...(driver.rollbackToSavepoint ? { rollbackToSavepoint: driver.rollbackToSavepoint.bind(driver) } : {}),
    ...(driver.releaseSavepoint ? { releaseSavepoint: driver.releaseSavepoint.bind(driver) } : {}),
  };
}

interface Held {
  statement: CompiledQuery;
  parameters: readonly unknown[];
  deferrable: Deferrable;
  step: number;
}

/** +1 for a statement that opens a savepoint, -1 for one that ends it, 0 for any other. */
function nestingOf(sql: string): number {
  if (!/^\s*(savepoint|release|rollback\s+to)\b/i.test(sql)) return 0;
  return /^\s*savepoint\b/i.test(sql) ? 1 : -1;
}

class CoalescingConnection implements DatabaseConnection {
  private session: CoalescingSession | undefined;
  private held: Held[] = [];
  /** Savepoints open in the session (a nested write's): nothing is held inside one. */
  private nested = 0;
  private failure: CoalescedInsertFailed | undefined;

  constructor(readonly connection: DatabaseConnection) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const control = (query as { [SESSION]?: Control })[SESSION];
    if (control) {
      await this.flush();
      if (control.session) {
        this.session = control.session;
        control.session.connection = this;
      }
      return HELD as QueryResult<R>;
    }
    if (this.session) {
      await this.flush();
      this.nested += nestingOf(query.sql);
    }
    return this.connection.executeQuery<R>(query);
  }

  /** Holds an INSERT for the session under way; false when it is over or a held row failed. */
  hold(
    session: CoalescingSession,
    statement: CompiledQuery,
    parameters: readonly unknown[],
    deferrable: Deferrable,
  ): boolean {
    // Inside a savepoint (a hook's write, an upsert's attempt) a write's failure is caught there
    // and may be gone on from: it runs at once, where its own catch sees it.
    if (session !== this.session || this.failure || this.nested > 0) return false;
    this.held.push({ statement, parameters, deferrable, step: session.step });
    return true;
  }

  async *streamQuery<R>(query: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    await this.flush();
    yield* this.connection.streamQuery<R>(query, chunkSize);
  }

  /**
   * Sends what is held, each run of one table's rows as one statement (or a few, past the bound).
   * Kysely runs a transaction's statements one at a time (its single-connection provider waits
   * for the one under way), so no other statement overtakes a flush.
   */
  async flush(): Promise<void> {
    if (this.failure) throw this.failure;
    if (this.held.length === 0) return;
    const held = this.held;
    this.held = [];
    for (let start = 0; start < held.length; ) {
      const shape = held[start]!.deferrable.shape;
      const most = Math.max(1, Math.floor(MAX_PARAMETERS / shape.width));
      let end = start + 1;
      while (end < held.length && end - start < most && held[end]!.deferrable.shape === shape) end++;
      await this.send(held.slice(start, end));
      start = end;
    }
  }

  /** The transaction ended: nothing held survives it, nor its failure. */
  end(): void {
    if (this.session) this.session.connection = undefined;
    this.session = undefined;
    this.held = [];
    this.failure = undefined;
    this.nested = 0;
  }

  private async send(rows: Held[]): Promise<void> {
    if (rows.length === 1) return this.sendOne(rows[0]!);
    const parameters = rows.flatMap((row) => row.parameters);
    const many = CompiledQuery.raw(rows[0]!.deferrable.shape.many(rows.length), parameters);
    // Whatever fails here leaves the rows unsent: it blocks the connection as a refused row does.
    await this.guarded(rows[0]!, `savepoint ${SAVEPOINT}`);
    try {
      await this.connection.executeQuery(many);
    } catch (error) {
      // Undo it and send the rows one by one: the one that fails is the one to blame. When even
      // the undo fails (the connection is gone, or MySQL undid the whole transaction after a
      // deadlock), the first row's step answers for them all.
      try {
        await this.connection.executeQuery(CompiledQuery.raw(`rollback to savepoint ${SAVEPOINT}`));
      } catch {
        throw this.fail(rows[0]!, error);
      }
      for (const row of rows) await this.sendOne(row);
    }
    await this.guarded(rows[0]!, `release savepoint ${SAVEPOINT}`);
  }

  private async guarded(row: Held, sql: string): Promise<void> {
    try {
      await this.connection.executeQuery(CompiledQuery.raw(sql));
    } catch (error) {
      throw this.fail(row, error);
    }
  }

  private async sendOne(row: Held): Promise<void> {
    try {
      const { query, queryId, sql } = row.statement;
      await this.connection.executeQuery({ query, queryId, sql, parameters: row.parameters });
    } catch (error) {
      throw this.fail(row, error);
    }
  }

  private fail(row: Held, error: unknown): CoalescedInsertFailed {
    this.failure = new CoalescedInsertFailed(row.step, error, row.deferrable.explain);
    return this.failure;
  }
}
