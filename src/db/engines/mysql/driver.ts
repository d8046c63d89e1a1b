// MySQL and MariaDB through mysql2's pool. The driver is loaded on first use, so only apps that use
// MySQL need it installed (`npm install mysql2`).

import { type Dialect, Kysely, MysqlDialect } from "kysely";
import { driverMissing } from "../../driver-missing.ts";
import { retryingDialect } from "../../lost-connection-retry.ts";
import { registerPoolLevels } from "../../pool-levels.ts";
import { mysqlErrors } from "./errors.ts";

export function openMysql(
  url: string,
  log: (message: string, error?: unknown) => void,
  /** Milliseconds a statement may run before the server stops it; 0 for no limit. */
  statementTimeout = 0,
  /** Wraps the dialect (observed-statements.ts times and traces each statement). */
  wrap: (dialect: Dialect) => Dialect = (dialect) => dialect,
): Kysely<any> {
  const kysely: Kysely<any> = new Kysely<any>({
    dialect: wrap(
      retryingDialect(
        new MysqlDialect({
          pool: async () => {
            const mysql = await import("mysql2").catch((error: unknown) =>
              driverMissing("mysql2", "mysql", error),
            );
            const pool = (mysql.default ?? mysql).createPool({
              uri: url,
              connectionLimit: 10,
              connectTimeout: 5000,
              // Dates are written and read in UTC, whatever the server's time zone.
              timezone: "Z",
              // JSON arrives as text (the record codec parses it), so a JSON string value is not parsed twice.
              jsonStrings: true,
              supportBigNumbers: true,
            });
            // mysql2 guards a pooled connection with a one-time 'error' listener; a connection that
            // fails twice while dying must not crash the process.
            pool.on("connection", (connection) => {
              connection.on("error", (error) => log("crudkit: a MySQL connection failed", error));
              destroyWhenLost(connection);
              // Queued before the connection's first statement. MariaDB counts seconds
              // (max_statement_time); MySQL counts milliseconds, for SELECT only (max_execution_time).
              if (statementTimeout > 0)
                connection.query(`set session max_statement_time = ${statementTimeout / 1000}`, (error) => {
                  if (error)
                    connection.query(
                      `set session max_execution_time = ${Math.round(statementTimeout)}`,
                      () => {},
                    );
                });
            });
            // mysql2 keeps its counts in queues it does not document; read defensively.
            const queues = pool as unknown as Record<string, { length?: number } | undefined>;
            const size = (name: string) => queues[name]?.length ?? 0;
            registerPoolLevels(kysely, () => ({
              inUse: size("_allConnections") - size("_freeConnections"),
              idle: size("_freeConnections"),
              waiting: size("_connectionQueue"),
            }));
            return pool as never;
          },
        }),
        mysqlErrors,
      ),
    ),
  });
  return kysely;
}

/** What is used of mysql2's pooled connection here. */
interface PooledConnection {
  query(...args: unknown[]): unknown;
  destroy(): void;
}

/**
 * A connection whose statement failed because the connection itself did is destroyed at once, so
 * the pool never hands it to another request ("Can't add new command when connection is in
 * closed state"). Kysely gives a connection back with `release()`, which cannot say it broke.
 */
function destroyWhenLost(connection: PooledConnection): void {
  const query = connection.query;
  connection.query = function (this: PooledConnection, ...args: unknown[]) {
    const callback = args.at(-1);
    if (typeof callback === "function")
      args[args.length - 1] = (error: unknown, ...rest: unknown[]) => {
        if (error && mysqlErrors.unavailable(error)) connection.destroy();
        callback(error, ...rest);
      };
    return query.apply(this, args);
  };
}
