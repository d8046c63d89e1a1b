// What differs between SQL engines, as data: one profile object per database (like Kysely's
// DialectAdapter). Code asks the profile what its engine can do or how it spells a thing, and
// never compares dialect names.

import type { ColumnDataType, Expression, Kysely, RawBuilder, SqlBool } from "kysely";
import type { DriverErrors } from "../core/driver-errors.ts";
import { mysqlProfile } from "./engines/mysql/profile.ts";
import { postgresProfile } from "./engines/postgres/profile.ts";
import { sqliteProfile } from "./engines/sqlite/profile.ts";
import type { ColumnType } from "./table-definition.ts";

export type DialectName = "sqlite" | "postgres" | "mysql";

export interface DialectProfile {
  readonly name: DialectName;
  /**
   * Which of the driver's errors mean the database is away (503), a statement timed out, a value
   * does not fit its column (400) or a reference is missing: every engine answers each.
   */
  readonly errors: DriverErrors;
  /**
   * The names the engine reports (in its catalog) for the column types crudkit creates, to tell a
   * real type change from two names for the same type.
   */
  readonly physicalTypes: Readonly<Record<ColumnType, readonly string[]>>;
  /** `INSERT/UPDATE/DELETE … RETURNING` exists. */
  readonly returning: boolean;
  /**
   * `SELECT … FOR UPDATE` exists. SQLite has none and needs none: its write transactions already
   * run one at a time.
   */
  readonly rowLocks: boolean;
  /**
   * How a read keeps its rows from changing until the transaction ends while letting others read
   * and lock them too (`FOR SHARE`; MariaDB spells it `LOCK IN SHARE MODE`); undefined without
   * row locks.
   */
  readonly shareLock: RawBuilder<unknown> | undefined;
  /**
   * How deep a JSON column may nest (brackets), where the engine checks it: MariaDB's `json_valid`
   * refuses 32 levels. crudkit stores a caller's JSON inside wrappers of its own (an audit entry's
   * `changes` holds a field's value two levels down), so the request depth it accepts is lower.
   * Undefined where the engine's limit is far past any request's (SQLite 1,000, PostgreSQL's jsonb).
   */
  readonly jsonNestingLimit: number | undefined;
  /**
   * How a column's type or nullability changes: in place (`ALTER COLUMN`, or MySQL's `MODIFY
   * COLUMN`), or by copying the table into a new one (SQLite), which renumbers rowids.
   */
  readonly alterColumns: "alter column" | "modify column" | "rebuild";
  /** How a migration runs without the statement timeout requests have (index builds take long). */
  readonly untimedMigration:
    | { scope: "transaction"; statement: RawBuilder<unknown> }
    | { scope: "session"; read: RawBuilder<{ t: unknown }>; set(ms: number): RawBuilder<unknown> }
    | undefined;
  /** A date as a SQL literal, in the form the engine takes it. */
  dateLiteral(date: Date): string;
  /** `DROP INDEX` names the table (MySQL); elsewhere index names are unique in the schema. */
  readonly dropIndexOnTable: boolean;
  /** Indexed text must be a bounded VARCHAR (MySQL indexes no TEXT whole). */
  readonly boundedIndexedText: boolean;
  /** Booleans are stored as 0/1 (SQLite). */
  readonly booleansAsIntegers: boolean;
  /** Dates are stored as ISO 8601 text, which sorts as time (SQLite); elsewhere as timestamps. */
  readonly datesAsText: boolean;
  /**
   * A timestamp is bound as ISO 8601 text, which the server parses (PostgreSQL), not as a Date the
   * driver formats: pg formats a Date in local time by hand, about 1 µs a value.
   */
  readonly datesBoundAsText: boolean;
  /** Text columns and bound parameters come back as they went in, no conversion needed. */
  readonly readsAsWritten: boolean;
  /**
   * Equality of text compares bytes only when told (MySQL's collations ignore case and trailing
   * spaces, as search wants); elsewhere `=` is exact.
   */
  readonly textEqualityIgnoresCase: boolean;
  /**
   * How `?search=` is served by an index: an FTS5 trigram table (SQLite), a pg_trgm GIN index per
   * column (PostgreSQL), or none, a scan (MySQL/MariaDB: FULLTEXT matches words, not substrings).
   */
  readonly searchIndex: "fts5 trigram" | "pg_trgm" | "none";
  /**
   * How lists query the search index themselves, where the engine's LIKE does not use it (SQLite's
   * FTS5 table narrows the rows, then the LIKE decides); undefined where the LIKE is what an index
   * serves, or nothing does.
   */
  readonly textIndex: TextIndex | undefined;
  /**
   * Keyset pages compare row values, `(sort, id) > (?, ?)`, which the engine answers with one
   * index range (SQLite, PostgreSQL); otherwise the comparison is spelled out with OR.
   */
  readonly rowValueKeyset: boolean;
  /** Nulls sort first ascending only when told (PostgreSQL sorts them last). */
  readonly explicitNullsOrder: boolean;
  /**
   * A page narrowed through another table (a rule path) picks its ids first, then reads those
   * rows: `where id in (select id … order by … limit ?)`. PostgreSQL then sorts the matches from
   * an index alone and reads only the page's rows, not every match's (a member of 3 of 1,000
   * organizations: 3,000 rows read and sorted for 20). MySQL refuses LIMIT in an IN subquery;
   * SQLite's planner already walks the reference's index.
   */
  readonly lateRowLookup: boolean;
  /**
   * A list page's LIMIT is written into its statement (one statement per page size), and a first
   * page has no OFFSET. PostgreSQL keeps one generic plan for a named statement only when it costs
   * no more than a plan for the values at hand, and a generic plan cannot know how many rows a
   * LIMIT parameter stops at: every page was planned again (0.8 ms of planning against 1.3 ms of
   * running, a member's page under a record-aware field rule).
   */
  readonly literalLimit: boolean;

  /** The column type for a portable type; `keyed` columns (keys, indexed) may need a bounded one. */
  columnType(type: ColumnType, keyed: boolean): ColumnDataType | Expression<unknown>;
  /** Options after `CREATE TABLE (…)`, such as a character set. */
  readonly tableOptions: Expression<unknown> | undefined;
  /** The current time in the form crudkit stores dates, as a column default. */
  readonly currentTime: Expression<unknown>;
  /** `column` matches a LIKE pattern (with `\` escaping), ignoring case as search does. */
  likeMatch(column: Expression<unknown>, pattern: unknown): Expression<SqlBool>;
  /**
   * What `likeMatch` ignores, for the same match made in memory (event streams): SQLite's LIKE
   * folds ASCII case only, PostgreSQL's ILIKE all case, MySQL's unicode_ci collation case and accents.
   */
  likeFolds: "ascii case" | "case" | "case and accents";
  /** `column = value`, compared exactly (bytes, not collation), while still using the index. */
  equalsExactly(column: string, value: unknown): Expression<SqlBool>;
  /** The table's row count from statistics, as `total`; cheap, and approximate. */
  tableEstimate(table: string): RawBuilder<{ total: unknown }>;
  /**
   * How many rows the planner expects a query to match: the EXPLAIN prefix and how to read its
   * answer. None on SQLite, whose planner keeps no row estimates.
   */
  readonly plannedRows:
    | { prefix: string; read(rows: readonly Record<string, unknown>[]): number | undefined }
    | undefined;
  /** Every index of the current schema, with its table. */
  indexes(): RawBuilder<{ name: string; tableName: string }>;
  /**
   * Every foreign key of the current schema: its name (none on SQLite), table, column, the
   * referenced table and the engine's word for its delete rule.
   */
  foreignKeys(): RawBuilder<LiveForeignKeyRow>;
  /**
   * How a foreign key is added to an existing table and dropped from it: by ALTER TABLE, or by
   * rebuilding the table (SQLite, whose foreign keys are declared with the table).
   */
  readonly foreignKeyChanges: "alter table" | "rebuild";
  /** `DROP FOREIGN KEY` (MySQL/MariaDB) rather than the standard `DROP CONSTRAINT`. */
  readonly dropForeignKeyClause: "constraint" | "foreign key";
  /**
   * SQLite checks foreign keys only outside a migration that rebuilds tables (dropping a
   * referenced table would otherwise cascade): statements to turn the check off around it, and the
   * check of every key before it commits.
   */
  readonly foreignKeyPause:
    | { off: RawBuilder<unknown>; on: RawBuilder<unknown>; check: RawBuilder<Record<string, unknown>> }
    | undefined;
  /**
   * How migrations keep each other out (two `crudkit migrate` runs, instances starting with
   * `autoMigrate`): a lock held by one session while it plans and applies (`tryLock` answers `ok`
   * 1 when it took it, 0 when another session holds it, without waiting: the wait is crudkit's, so
   * no statement timeout cuts it short), or one write transaction taken at once (SQLite's
   * `BEGIN IMMEDIATE`).
   */
  readonly migrationLock:
    | { kind: "session"; tryLock: RawBuilder<{ ok: unknown }>; unlock: RawBuilder<unknown> }
    | { kind: "immediate transaction"; begin: RawBuilder<unknown> };
}

/** A search index that lists query directly (see `DialectProfile.textIndex`). */
export interface TextIndex {
  /** Whether the index can answer `term` (trigrams need three characters, say); else lists scan. */
  answers(term: string): boolean;
  /** The index's query for `term` as one phrase in `columns`, bound as a parameter. */
  query(columns: readonly string[], term: string): string;
  /** The condition that keeps the rows of `table` the index holds for `query`. */
  rows(table: string, query: unknown): Expression<SqlBool>;
  /** The columns `table`'s index covers, read from the database (none until a migration built it). */
  columns(kysely: Kysely<any>, table: string): () => Promise<ReadonlySet<string>>;
  /** Whether the index holds few rows for `match`: then any list searching it is cheap. */
  fewCandidates(kysely: Kysely<any>, table: string): (db: Kysely<any>, match: string) => Promise<boolean>;
}

export interface LiveForeignKeyRow {
  name: string | null;
  tableName: string;
  column: string;
  target: string;
  onDelete: string;
}

const PROFILES: Record<DialectName, DialectProfile> = {
  sqlite: sqliteProfile,
  postgres: postgresProfile,
  mysql: mysqlProfile,
};

/** The profile of a database engine. */
export function dialectProfile(name: DialectName): DialectProfile {
  return PROFILES[name];
}
