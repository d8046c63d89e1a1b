// Database URLs as people type them: `postgres://`, `mysql://`, or a SQLite file (`file:…`, a
// path, `:memory:`). A scheme crudkit does not know is a startup error that names it, never a
// SQLite file whose directory is made from the URL (password included). Wherever a URL is shown,
// its password is masked.

import { ConfigError } from "../core/errors.ts";

/** What a URL opens: the `database` option of `crudkit()`. */
export type DatabaseUrlOptions =
  | { provider: "sqlite"; url: string }
  | { provider: "postgres"; url: string; directUrl?: string; replicas?: readonly string[] }
  | { provider: "mysql"; url: string; replicas?: readonly string[] };

const KNOWN = ["postgres://", "postgresql://", "mysql://", "file:", ":memory:"] as const;

/** Schemes people write for the ones crudkit knows. */
const NEAR_MISSES = new Map(
  Object.entries({
    postgress: "postgres://",
    postgre: "postgres://",
    postgresq: "postgresql://",
    pg: "postgres://",
    psql: "postgres://",
    mariadb: "mysql://",
    maria: "mysql://",
    mysq: "mysql://",
    mysql2: "mysql://",
    sqlite: "file:",
    sqlite3: "file:",
  }),
);

/**
 * The scheme of anything shaped `scheme://` (a Windows drive letter, `C:\`, is a path); a scheme
 * with characters no scheme has is still a URL, and shown as "?".
 */
function schemeOf(url: string): string | undefined {
  const end = url.indexOf("://");
  if (end === -1) return undefined;
  const scheme = url.slice(0, end).toLowerCase();
  return /^[a-z][a-z0-9+.-]{0,30}$/.test(scheme) ? scheme : "?";
}

/**
 * The `database` option for a URL, as `DATABASE_URL` is usually given. `directUrl` (PostgreSQL
 * only) is a URL straight to the server when `url` goes through a pooler in transaction mode
 * (PgBouncer); empty or undefined, as an unset variable reads, it is left out.
 *
 * @example
 * crudkit({ database: databaseFromUrl(process.env.DATABASE_URL ?? "file:./data/app.db"), resources });
 * // Behind PgBouncer:
 * databaseFromUrl(process.env.DATABASE_URL!, { directUrl: process.env.DIRECT_DATABASE_URL });
 */
export function databaseFromUrl(
  url: string,
  options: {
    directUrl?: string | undefined;
    /** Read replicas of a PostgreSQL or MySQL primary (`database.replicas`); empty for none. */
    replicas?: readonly string[] | undefined;
  } = {},
): DatabaseUrlOptions {
  const opened = withReplicas(openedUrl(url), options.replicas);
  const { directUrl } = options;
  if (directUrl === undefined || directUrl === "") return opened;
  if (opened.provider !== "postgres" || !["postgres", "postgresql"].includes(schemeOf(directUrl) ?? ""))
    throw new ConfigError(
      "directUrl is for PostgreSQL behind a pooler in transaction mode: both URLs must be postgres://….",
    );
  return { ...opened, directUrl };
}

function withReplicas(
  opened: DatabaseUrlOptions,
  replicas: readonly string[] | undefined,
): DatabaseUrlOptions {
  if (replicas === undefined || replicas.length === 0) return opened;
  if (opened.provider === "sqlite")
    throw new ConfigError("Read replicas are for PostgreSQL and MySQL/MariaDB; an SQLite database has none.");
  return { ...opened, replicas };
}

function openedUrl(url: string): DatabaseUrlOptions {
  if (typeof url !== "string" || url.trim() === "")
    throw new ConfigError(
      'The database URL is empty; use "file:./data/app.db", "postgres://…" or "mysql://…".',
    );
  if (url.startsWith("file:")) return { provider: "sqlite", url };
  const scheme = schemeOf(url);
  if (scheme === "postgres" || scheme === "postgresql") return { provider: "postgres", url };
  if (scheme === "mysql") return { provider: "mysql", url };
  if (scheme !== undefined) throw unknownScheme(scheme);
  return { provider: "sqlite", url: sqliteUrl(url) };
}

/**
 * A SQLite URL: `file:…`, `:memory:` or a plain path. Anything shaped `scheme://` is refused: it is
 * a typo of another database's URL, and opening it would make a directory out of it.
 */
export function sqliteUrl(url: string): string {
  const scheme = url.startsWith("file:") ? undefined : schemeOf(url);
  if (scheme !== undefined) throw unknownScheme(scheme);
  return url;
}

function unknownScheme(scheme: string): ConfigError {
  const guess = NEAR_MISSES.get(scheme);
  return new ConfigError(
    `The database URL's scheme "${scheme}://" is not one crudkit knows${guess ? `; did you mean "${guess}"?` : "."} ` +
      `Known: ${KNOWN.map((k) => `"${k}"`).join(", ")}, or a file path for SQLite.`,
  );
}

/** The URL with its password (and a `password=` query parameter) replaced by `***`. */
export function maskUrl(url: string): string {
  const masked = url.replace(/([?&]password=)[^&#]*/gi, "$1***");
  const scheme = masked.indexOf("://");
  if (scheme === -1) return masked;
  // The user info ends at the last "@" (a password may hold an unencoded "@", "/" or "?").
  const at = masked.lastIndexOf("@");
  const colon = masked.indexOf(":", scheme + 3);
  if (at === -1 || colon === -1 || colon > at) return masked;
  return `${masked.slice(0, colon + 1)}***${masked.slice(at)}`;
}

/** `host:port` of a server URL, for messages; never the user or password. */
export function hostOf(url: string): string {
  try {
    const parsed = new URL(url);
    return parsed.port ? `${parsed.hostname}:${parsed.port}` : parsed.hostname || "localhost";
  } catch {
    return "the configured host";
  }
}
