// PostgreSQL through pg's Pool. The driver is loaded on first use, so only apps that use
// PostgreSQL need it installed (`npm install pg`).

import { type Dialect, Kysely, PostgresDialect, type QueryResult } from "kysely";
import type { Client as PgClient, Pool as PgPool, QueryResult as PgResult } from "pg";
import { type DirectPath, registerDirectPath } from "../../direct-path.ts";
import { driverMissing } from "../../driver-missing.ts";
import { MAX_ATTEMPTS, mayRunAgain, retryingDialect } from "../../lost-connection-retry.ts";
import { registerPoolLevels } from "../../pool-levels.ts";
import { postgresErrors } from "./errors.ts";
import { preparedName, unusableStatement } from "./prepared-names.ts";
import { isoFromTimestamptz } from "./timestamps.ts";

/** JSON and JSONB arrive as text (the record codec parses them): a JSON string value stays a string. */
const RAW_TEXT_TYPES = new Set([114, 3802]);
const TIMESTAMPTZ = 1184;

/** pg's Date as ISO text; what is not a valid Date (infinity arrives as a number) is left as is. */
const isoFromDate = (value: unknown) =>
  value instanceof Date && !Number.isNaN(value.getTime()) ? value.toISOString() : value;

export function openPostgres(
  url: string,
  log: (message: string, error?: unknown) => void,
  /** Milliseconds a statement may run before the server cancels it; 0 for no limit. */
  statementTimeout = 0,
  /** Wraps the dialect (observed-statements.ts times and traces each statement). */
  wrap: (dialect: Dialect) => Dialect = (dialect) => dialect,
  /**
   * `url` is a pooler in transaction mode (PgBouncer): no session state is sent through it, and
   * the statement timeout goes with each transaction (see `pooledTimeouts`).
   */
  pooled = false,
): Kysely<any> {
  const kysely: Kysely<any> = new Kysely<any>({
    dialect: wrap(
      retryingDialect(
        new PostgresDialect({
          pool: async () => {
            const pg = await import("pg").catch((error: unknown) => driverMissing("pg", "postgres", error));
            const { Pool, Client, types } = pg.default ?? pg;
            const pool = new Pool({
              Client: pooled
                ? pooledTimeouts(callbackQueries(Client), statementTimeout)
                : poolerRefusals(callbackQueries(Client)),
              connectionString: url,
              max: 10,
              // Fail fast when the server is gone, so requests get a 503 instead of hanging.
              connectionTimeoutMillis: 5000,
              // A startup parameter of the session: a pooler in transaction mode refuses it.
              ...(statementTimeout > 0 && !pooled ? { statement_timeout: statementTimeout } : {}),
              types: {
                getTypeParser: ((oid: number, format?: "text" | "binary") => {
                  if (RAW_TEXT_TYPES.has(oid)) return (value: string) => value;
                  const parse = types.getTypeParser(oid, format);
                  // timestamptz reads as the ISO text records carry, as SQLite stores dates.
                  if (oid === TIMESTAMPTZ && format !== "binary")
                    return (value: string) => isoFromTimestamptz(value) ?? isoFromDate(parse(value));
                  return parse;
                }) as typeof types.getTypeParser,
              },
            });
            // A connection losing its server must not crash the process. The pool guards idle clients
            // only; a client in use reports through its own 'error' event, and its query fails (503).
            pool.on("error", (error) => log("crudkit: a PostgreSQL connection failed", error));
            pool.on("connect", (client) =>
              client.on("error", (error) => log("crudkit: a PostgreSQL connection failed", error)),
            );
            // A transaction or a pinned connection (`db.connection()`) has an executor of its own:
            // it never runs here. A pool being closed answers through Kysely, which reports it
            // closed its own way.
            const root = kysely.getExecutor();
            // Through a pooler in transaction mode, statements are sent unnamed: a session's
            // prepared statements would not follow its next transaction to another connection.
            const naming = { on: !pooled };
            const path: DirectPath = {
              run: (sql, parameters) => runOnPool(pool, sql, parameters as unknown[], naming),
              first: async (sql, parameters) =>
                (await runOnPool(pool, sql, parameters as unknown[], naming)).rows[0] as never,
            };
            registerDirectPath(kysely, (db) =>
              db.getExecutor() === root && !pool.ending ? path : undefined,
            );
            registerPoolLevels(kysely, () => ({
              inUse: pool.totalCount - pool.idleCount,
              idle: pool.idleCount,
              waiting: pool.waitingCount,
            }));
            return pool;
          },
        }),
        postgresErrors,
      ),
    ),
  });
  return kysely;
}

// Statements outside a transaction run straight on the pool (see direct-path.ts): on the bench
// machine about 4 µs less CPU per statement with the built package (7–8 µs from the sources), of
// about 80 µs for a read by id.

const WRITES = new Set(["INSERT", "UPDATE", "DELETE", "MERGE"]);

/**
 * What Kysely's executor would answer: the rows, and for a write how many it changed. A
 * connection found dead is dropped, and the statement runs once more on a fresh one when that is
 * harmless (see `lost-connection-retry.ts`).
 */
function runOnPool<Row>(
  pool: PgPool,
  text: string,
  parameters: unknown[],
  /** Whether reads go as named prepared statements (prepared-names.ts): off for a pooler. */
  naming: { on: boolean },
  attempt = 1,
): Promise<QueryResult<Row>> {
  return new Promise((resolve, reject) => {
    pool.connect((error, client, release) => {
      if (error || !client) return reject(error);
      const name = naming.on && attempt === 1 ? preparedName(text) : undefined;
      const done = (error: Error | null, result?: PgResult) => {
        const unusable = name === undefined ? undefined : unusableStatement(error);
        // Something between us and PostgreSQL shares sessions: no names from now on.
        if (unusable === "shared") naming.on = false;
        // A failed statement leaves the connection usable, unless the connection itself failed
        // (or holds a statement it can no longer use): then it is destroyed, never handed on.
        release(error && (postgresErrors.unavailable(error) || unusable) ? error : undefined);
        if (unusable) return resolve(runOnPool<Row>(pool, text, parameters, naming, attempt + 1));
        if (error && attempt < MAX_ATTEMPTS && mayRunAgain(error, text, postgresErrors))
          return resolve(runOnPool<Row>(pool, text, parameters, naming, attempt + 1));
        if (error || !result) return reject(error ?? new Error("PostgreSQL returned no result."));
        resolve({
          rows: (result.rows ?? []) as Row[],
          numAffectedRows: WRITES.has(result.command) ? BigInt(result.rowCount ?? 0) : undefined,
        });
      };
      try {
        if (name === undefined) client.query(text, parameters, done);
        else client.query({ name, text, values: parameters }, done);
      } catch (error) {
        done(error as Error);
      }
    });
  });
}

/**
 * pg's Client with `query(text, values)` answered through pg's callback form, wrapped in a plain
 * Promise. Kysely calls `query(text, values)` and awaits the promise pg makes for it. Measured on
 * Node 20 with a 20-row list loop, that route made V8 pretenure allocation sites on the query path
 * (allocate their objects straight in the old generation; `--trace-pretenuring-statistics`), after
 * which every page's rows and strings were kept until the next full GC: scavenges of 4.4–4.8 ms
 * instead of 1.4–1.8 ms, and a heap that grew about 1 MB per scavenge. Which object of the promise
 * route outlives the scavenge was not pinned down; the callback form, as `pool.query` uses it,
 * tenures nothing. Anything else (a cursor, a callback of the caller's own, a config object)
 * goes to pg as it is.
 */
function callbackQueries(Client: typeof PgClient): typeof PgClient {
  // pg types `query` as a set of overloads; this override keeps every one, so it is typed loosely.
  const Base = Client as unknown as new (
    config?: unknown,
  ) => { query(...args: unknown[]): unknown; end(): Promise<void> };
  class CallbackQueries extends Base {
    override query(config?: unknown, values?: unknown, callback?: unknown): unknown {
      if (
        typeof config !== "string" ||
        callback !== undefined ||
        !(values === undefined || Array.isArray(values))
      )
        return super.query(config, values, callback);
      return new Promise((resolve, reject) =>
        super.query(config, values, (error: Error | null, result: unknown) => {
          if (!error) return resolve(result);
          // A connection that failed is closed at once: pg's pool then drops it when it is given
          // back, instead of handing it to the next request before the socket's end is read.
          if (postgresErrors.unavailable(error)) this.end().catch(() => {});
          reject(error);
        }),
      );
    }
  }
  return CallbackQueries as unknown as typeof PgClient;
}

/** A client of pg's, as the pool makes them: what the wrappers below build on. */
type ClientClass = typeof PgClient;
type QueryCallback = (error: Error | null, result?: unknown) => void;

/**
 * Connecting straight to a pooler in transaction mode, with a statement timeout: PgBouncer refuses
 * the timeout's startup parameter. The error says what to do instead of what PgBouncer said.
 */
function poolerRefusals(Client: ClientClass): ClientClass {
  const Base = Client as unknown as new (config?: unknown) => { connect(callback?: unknown): unknown };
  // The driver's code stays on it (08P01), so the database reads as unavailable (503) as before.
  const explained = (error: unknown) =>
    error instanceof Error && /unsupported startup parameter/i.test(error.message)
      ? Object.assign(
          new Error(
            `Give database.directUrl (a URL straight to PostgreSQL): database.url goes through a pooler in transaction mode, which refuses session settings (${error.message}). crudkit then sends no session state through url.`,
            { cause: error },
          ),
          { code: (error as { code?: unknown }).code },
        )
      : error;
  class PoolerRefusals extends Base {
    // pg's pool connects with a callback; a client of one's own, with a promise.
    override connect(callback?: unknown): unknown {
      if (typeof callback === "function")
        return super.connect((error: unknown, ...rest: unknown[]) =>
          callback(error && explained(error), ...rest),
        );
      return (super.connect() as Promise<void>).catch((error: unknown) => {
        throw explained(error);
      });
    }
  }
  return PoolerRefusals as unknown as ClientClass;
}

const BEGINS = /^\s*(begin|start\s+transaction)\b/i;
/** COMMIT, ROLLBACK (not ROLLBACK TO a savepoint), END, ABORT: the transaction is over. */
const ENDS = /^\s*(commit|end|abort|rollback(?!\s+to\b))\b/i;
/** Statements PostgreSQL refuses inside a transaction block: they run as they are, untimed. */
const OUTSIDE_ONLY =
  /^\s*(vacuum|cluster|reindex\b.*\bconcurrently|(create|drop)\s+(unique\s+)?index\s+concurrently|(create|drop)\s+database|(create|drop)\s+tablespace|alter\s+system)\b/is;

/**
 * A client for a pooler in transaction mode. Each transaction is the unit the pooler gives one
 * server connection to, so the statement timeout travels with it: `SET LOCAL` in the same simple
 * query as BEGIN (no extra round trip), and a statement outside a transaction runs in one of its
 * own to carry it (two more round trips: `statementTimeout: 0` saves them, leaving the limit to
 * PgBouncer's `query_timeout` or the role's `statement_timeout`). Whether a transaction is open is
 * followed from the statements sent (every pg version tells the same), and lone statements take
 * turns, so two never share one transaction.
 */
function pooledTimeouts(Client: ClientClass, statementTimeout: number): ClientClass {
  if (statementTimeout <= 0) return Client;
  const setLocal = `set local statement_timeout = ${Math.round(statementTimeout)}`;
  const Base = Client as unknown as new (config?: unknown) => { query(...args: unknown[]): unknown };
  class PooledTimeouts extends Base {
    private inTransaction = false;
    private lone: Promise<unknown> = Promise.resolve();

    override query(config?: unknown, values?: unknown, callback?: unknown): unknown {
      if (typeof config !== "string") return super.query(config, values, callback);
      const parameters = Array.isArray(values) ? values : [];
      const done = (typeof values === "function" ? values : callback) as QueryCallback | undefined;
      if (BEGINS.test(config) && parameters.length === 0) {
        this.inTransaction = true;
        return super.query(`${config}; ${setLocal}`, [], done);
      }
      if (this.inTransaction || OUTSIDE_ONLY.test(config)) {
        if (ENDS.test(config)) this.inTransaction = false;
        return super.query(config, values, callback);
      }
      const answered = this.lone.then(() => this.alone(config, parameters));
      this.lone = answered.catch(() => {});
      if (done) return void answered.then((result) => done(null, result), done);
      return answered;
    }

    /** One statement in a transaction of its own, which carries the timeout. */
    private async alone(text: string, parameters: unknown[]): Promise<unknown> {
      const run = (sql: string, values: unknown[] = []) =>
        new Promise<unknown>((resolve, reject) =>
          super.query(sql, values, (error: Error | null, result: unknown) =>
            error ? reject(error) : resolve(result),
          ),
        );
      await run(`begin; ${setLocal}`);
      let result: unknown;
      try {
        result = await run(text, parameters);
      } catch (error) {
        // As callbackQueries does: a connection that failed is closed, never handed out again.
        if (postgresErrors.unavailable(error)) (this as unknown as PgClient).end().catch(() => {});
        else await run("rollback").catch(() => {});
        throw error;
      }
      await run("commit");
      return result;
    }
  }
  return PooledTimeouts as unknown as ClientClass;
}
