// Opens the configured database and says which dialect it speaks.

import { type Kysely, MysqlAdapter, PostgresAdapter, SqliteAdapter } from "kysely";
import { ConfigError } from "../core/errors.ts";
import type { DialectName } from "./dialect.ts";
import { openSqlite } from "./sqlite.ts";

export type DatabaseOptions = { provider: "sqlite"; url: string } | Kysely<any>;

export interface Database {
  readonly kysely: Kysely<any>;
  readonly dialect: DialectName;
  /** `INSERT/UPDATE/DELETE … RETURNING` is available. */
  readonly returning: boolean;
}

export function openDatabase(options: DatabaseOptions): Database {
  if (isKysely(options)) return describe(options);
  if (options?.provider === "sqlite") {
    if (typeof options.url !== "string")
      throw new ConfigError('database.url must be a string such as "file:./data/app.db".');
    return describe(openSqlite(options.url));
  }
  throw new ConfigError(
    `Unknown database provider "${String((options as { provider?: unknown })?.provider)}"; use "sqlite".`,
  );
}

/** Structural, not instanceof: the app may hold its own copy of kysely. */
function isKysely(value: unknown): value is Kysely<any> {
  const candidate = value as Partial<Kysely<any>> | null;
  return typeof candidate?.selectFrom === "function" && typeof candidate.getExecutor === "function";
}

function describe(kysely: Kysely<any>): Database {
  const adapter = kysely.getExecutor().adapter;
  const is = (type: abstract new (...args: never[]) => unknown) =>
    adapter instanceof type || adapter.constructor.name === type.name;
  if (is(SqliteAdapter)) return { kysely, dialect: "sqlite", returning: true };
  if (is(PostgresAdapter)) return { kysely, dialect: "postgres", returning: true };
  if (is(MysqlAdapter)) return { kysely, dialect: "mysql", returning: false };
  throw new ConfigError(
    "The Kysely instance uses a dialect crudkit does not know (sqlite, postgres, mysql).",
  );
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
