// Opens the configured database and says which dialect it speaks.

import { type Dialect, Kysely, MysqlAdapter, PostgresAdapter, SqliteAdapter } from "kysely";
import { ConfigError } from "../core/errors.ts";
import { coalescingDialect, registerCoalescing } from "./coalesced-inserts.ts";
import { type DialectName, type DialectProfile, dialectProfile } from "./dialect.ts";
import { observeDirectPath } from "./direct-path.ts";
import { openMysql } from "./engines/mysql/driver.ts";
import { mysqlReplication } from "./engines/mysql/replication.ts";
import { openPostgres } from "./engines/postgres/driver.ts";
import { postgresReplication } from "./engines/postgres/replication.ts";
import { openSqlite, sqlitePath } from "./engines/sqlite/driver.ts";
import { createSqliteReaders } from "./engines/sqlite/readers.ts";
import { observedDialect, type StatementProbe } from "./observed-statements.ts";
import type { ReaderThreads } from "./reader-threads.ts";
import { type ReplicaSet, replicaSet } from "./replica-set.ts";
import type { Replication } from "./replication.ts";

export type DatabaseOptions =
  | {
      provider: "sqlite";
      url: string;
      /**
       * Threads that run lists over big tables (past 10,000 rows) with read-only connections of
       * their own, so a slow list never holds up other requests. 0 runs every query on the main
       * connection. An in-memory database has none.
       * @default 2
       */
      readers?: number;
    }
  | ({
      provider: "postgres";
      url: string;
      /**
       * A URL straight to PostgreSQL, when `url` goes through a pooler in transaction mode
       * (PgBouncer, Supabase's and Neon's poolers). crudkit then sends no session state through
       * `url`: the statement timeout travels with each transaction, and what needs a session of
       * its own (the migration lock) runs on `directUrl`. Prisma names it the same.
       */
      directUrl?: string;
    } & ReplicaOptions)
  | ({ provider: "mysql"; url: string } & ReplicaOptions)
  | Kysely<any>
  | Dialect;

/** Read replicas of a PostgreSQL or MySQL/MariaDB primary (see replica-set.ts). */
export interface ReplicaOptions {
  /**
   * URLs of replicas that follow `url` (PostgreSQL streaming replicas, MariaDB GTID replicas). Reads
   * outside a transaction go to one that is within `maxLag`, and has the caller's own writes.
   */
  replicas?: readonly string[];
  /** Seconds a replica may lag behind the primary and still serve reads. @default 5 */
  maxLag?: number;
}

export interface Database {
  readonly kysely: Kysely<any>;
  readonly dialect: DialectName;
  /** What this engine can do and how it spells things. */
  readonly profile: DialectProfile;
  /** `INSERT/UPDATE/DELETE … RETURNING` is available (the profile's, at hand). */
  readonly returning: boolean;
  /**
   * Where what needs a session of its own runs (the migration lock's advisory lock): a
   * connection straight to PostgreSQL when `kysely` goes through a pooler (`directUrl`).
   */
  readonly session?: Kysely<any>;
  /** SQLite files: the reader threads lists over big tables run on. */
  readonly readers?: ReaderThreads;
  /** `database.replicas`: the read replicas and how far each is behind. */
  readonly replicas?: ReplicaSet;
}

export function openDatabase(
  options: DatabaseOptions,
  log: (message: string, error?: unknown) => void,
  /** PostgreSQL and MySQL: milliseconds a statement may run (0: no limit). */
  statementTimeout = 0,
  /**
   * Observes every statement (metrics, traces). A Kysely instance given as it is keeps its own
   * executor: only its direct-path statements would be seen, so none are.
   */
  probe?: StatementProbe,
): Database {
  if (isKysely(options)) return describe(options);
  const wrap = (dialect: Dialect) => (probe ? observedDialect(dialect, probe) : dialect);
  const observed = (kysely: Kysely<any>) => {
    if (probe) observeDirectPath(kysely, probe);
    return kysely;
  };
  if (typeof (options as Partial<Dialect> | null)?.createDriver === "function") {
    return describe(observed(new Kysely<any>({ dialect: wrap(options as Dialect) })));
  }
  const { provider, url } = (options ?? {}) as { provider?: unknown; url?: unknown };
  if (provider !== "sqlite" && provider !== "postgres" && provider !== "mysql") {
    throw new ConfigError(
      `Unknown database provider "${String(provider)}"; use "sqlite", "postgres" or "mysql".`,
    );
  }
  if (typeof url !== "string" || url === "") {
    throw new ConfigError(`database.url must be a string such as "${EXAMPLE_URLS[provider]}".`);
  }
  // Round trips cost there: a batch's inserts may go as one statement (coalesced-inserts.ts).
  const coalesced = (dialect: Dialect) => coalescingDialect(wrap(dialect));
  const directUrl = (options as { directUrl?: unknown }).directUrl;
  if (
    directUrl !== undefined &&
    (provider !== "postgres" || typeof directUrl !== "string" || directUrl === "")
  )
    throw new ConfigError(
      provider === "postgres"
        ? `database.directUrl must be a URL such as "${EXAMPLE_URLS.postgres}".`
        : "database.directUrl is for PostgreSQL behind a pooler in transaction mode; remove it.",
    );
  const replicas = replicaOptions(options as ReplicaOptions, provider);
  // Each replica's Kysely: the engine's driver, the app's statement timeout and probes.
  const withReplicas = (main: Kysely<any>, replication: Replication, open: (url: string) => Kysely<any>) =>
    replicas
      ? { replicas: replicaSet(main, replicas.urls, { maxLag: replicas.maxLag, replication, open, log }) }
      : {};
  if (provider === "postgres") {
    const pooled = typeof directUrl === "string";
    const main = registerCoalescing(observed(openPostgres(url, log, statementTimeout, coalesced, pooled)));
    return {
      ...described(main, "postgres"),
      ...(pooled ? { session: openPostgres(directUrl, log) } : {}),
      ...withReplicas(main, postgresReplication, (replica) =>
        observed(openPostgres(replica, log, statementTimeout, wrap)),
      ),
    };
  }
  if (provider === "mysql") {
    const main = registerCoalescing(observed(openMysql(url, log, statementTimeout, coalesced)));
    return {
      ...described(main, "mysql"),
      ...withReplicas(main, mysqlReplication, (replica) =>
        observed(openMysql(replica, log, statementTimeout, wrap)),
      ),
    };
  }
  const readers = (options as { readers?: unknown }).readers ?? 2;
  if (typeof readers !== "number" || !Number.isInteger(readers) || readers < 0 || readers > 64)
    throw new ConfigError(`database.readers must be a whole number from 0 to 64, got ${String(readers)}.`);
  const path = sqlitePath(url);
  const main = observed(openSqlite(url, wrap));
  return {
    ...describe(main),
    ...(readers > 0 && path !== ":memory:"
      ? { readers: createSqliteReaders(path, readers, main, wrap) }
      : {}),
  };
}

/** At most this many replicas: each keeps a pool of its own, and the poller asks each in turn. */
const MAX_REPLICAS = 16;

/** `replicas` and `maxLag`, checked; undefined without replicas. */
function replicaOptions(
  options: ReplicaOptions,
  provider: "sqlite" | "postgres" | "mysql",
): { urls: readonly string[]; maxLag: number } | undefined {
  const { replicas, maxLag = 5 } = options;
  if (typeof maxLag !== "number" || !Number.isFinite(maxLag) || maxLag <= 0 || maxLag > 3600)
    throw new ConfigError(
      `database.maxLag must be a number of seconds above 0 (at most 3600), got ${String(maxLag)}.`,
    );
  if (replicas === undefined) return undefined;
  if (provider === "sqlite")
    throw new ConfigError(
      "database.replicas is for PostgreSQL and MySQL/MariaDB; an SQLite database has no replicas.",
    );
  if (!Array.isArray(replicas) || replicas.length > MAX_REPLICAS)
    throw new ConfigError(
      `database.replicas must be a list of at most ${MAX_REPLICAS} URLs such as "${EXAMPLE_URLS[provider]}".`,
    );
  const schemes = provider === "postgres" ? ["postgres:", "postgresql:"] : ["mysql:"];
  for (const [i, url] of replicas.entries()) {
    let scheme: string | undefined;
    try {
      scheme = typeof url === "string" ? new URL(url).protocol : undefined;
    } catch {}
    if (!scheme || !schemes.includes(scheme))
      throw new ConfigError(
        `database.replicas[${i}] must be a ${provider} URL such as "${EXAMPLE_URLS[provider]}".`,
      );
  }
  return replicas.length ? { urls: replicas, maxLag } : undefined;
}

const EXAMPLE_URLS = {
  sqlite: "file:./data/app.db",
  postgres: "postgres://user:password@127.0.0.1:5432/app",
  mysql: "mysql://user:password@127.0.0.1:3306/app",
};

/** Structural, not instanceof: the app may hold its own copy of kysely. */
function isKysely(value: unknown): value is Kysely<any> {
  const candidate = value as Partial<Kysely<any>> | null;
  return typeof candidate?.selectFrom === "function" && typeof candidate.getExecutor === "function";
}

function described(kysely: Kysely<any>, dialect: DialectName): Database {
  const profile = dialectProfile(dialect);
  return { kysely, dialect, profile, returning: profile.returning };
}

function describe(kysely: Kysely<any>): Database {
  const adapter = kysely.getExecutor().adapter;
  const is = (type: abstract new (...args: never[]) => unknown) =>
    adapter instanceof type || adapter.constructor.name === type.name;
  if (is(SqliteAdapter)) return described(kysely, "sqlite");
  if (is(PostgresAdapter)) return described(kysely, "postgres");
  if (is(MysqlAdapter)) return described(kysely, "mysql");
  throw new ConfigError(
    "The Kysely instance uses a dialect crudkit does not know (sqlite, postgres, mysql).",
  );
}

/**
 * What a unique violation names, as far as the driver says: the columns (SQLite: "UNIQUE
 * constraint failed: t.a, t.b") or the constraint (PostgreSQL's `constraint`, MySQL's "for key
 * 'name'"). The primary key reads as the column `id`.
 */
export function violatedUnique(error: unknown): { columns?: string[]; constraint?: string } {
  const {
    message = "",
    constraint,
    sqlMessage,
  } = (error ?? {}) as {
    message?: string;
    constraint?: string;
    sqlMessage?: string;
  };
  const sqlite = /UNIQUE constraint failed: (.+)$/.exec(message);
  if (sqlite) return { columns: sqlite[1]!.split(", ").map((c) => c.slice(c.lastIndexOf(".") + 1)) };
  if (typeof constraint === "string")
    return constraint.endsWith("_pkey") ? { columns: ["id"] } : { constraint };
  const mysql = /for key '(?:[^'.]*\.)?([^']+)'/.exec(sqlMessage ?? message);
  if (mysql) return mysql[1] === "PRIMARY" ? { columns: ["id"] } : { constraint: mysql[1] };
  return {};
}

/** A unique or primary key violation, whatever the driver. */
export function isUniqueViolation(error: unknown): boolean {
  const code = (error as { code?: unknown })?.code;
  return (
    code === "SQLITE_CONSTRAINT_PRIMARYKEY" ||
    code === "SQLITE_CONSTRAINT_UNIQUE" ||
    code === "23505" ||
    code === "ER_DUP_ENTRY"
  );
}
