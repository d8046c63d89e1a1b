// Errors that mean "this value does not fit its column", whatever the driver: a string longer than
// a MySQL TEXT, a number or date out of a column's range. Input checks refuse what they know of
// first; this is the net under them, so such input answers 400 and never 500.

const MYSQL_CODES = new Set([
  "ER_DATA_TOO_LONG",
  "ER_WARN_DATA_OUT_OF_RANGE",
  "ER_TRUNCATED_WRONG_VALUE",
  "ER_TRUNCATED_WRONG_VALUE_FOR_FIELD",
  "ER_INVALID_JSON_TEXT",
  "ER_DATETIME_FUNCTION_OVERFLOW",
  // MySQL 8: a CHECK failed.
  "ER_CHECK_CONSTRAINT_VIOLATED",
]);

export function isDataError(error: unknown): boolean {
  const { code, errno, sqlMessage } = (error ?? {}) as {
    code?: unknown;
    errno?: unknown;
    sqlMessage?: unknown;
  };
  // MariaDB's ER_CONSTRAINT_FAILED (a CHECK, such as a JSON column's json_valid: too deep, say);
  // mysql2 names errno 4025 after MySQL's error of that number, so it is read by number and text.
  if (errno === 4025 && typeof sqlMessage === "string" && /^CONSTRAINT `[^`]+` failed/.test(sqlMessage))
    return true;
  if (typeof code !== "string") return false;
  // PostgreSQL: SQLSTATE class 22, "data exception", and 23514, a CHECK that failed.
  if (code.length === 5 && (code.startsWith("22") || code === "23514")) return true;
  return MYSQL_CODES.has(code) || code === "SQLITE_TOOBIG" || code === "SQLITE_CONSTRAINT_CHECK";
}

/**
 * The column a data error names, where the driver says: MySQL's "for column 'name'", MariaDB's
 * "CONSTRAINT `table.column` failed", SQLite's "CHECK constraint failed: column", PostgreSQL's
 * `column`. Undefined otherwise.
 */
export function dataErrorColumn(error: unknown): string | undefined {
  const { column, sqlMessage, message } = (error ?? {}) as {
    column?: unknown;
    sqlMessage?: string;
    message?: string;
  };
  if (typeof column === "string") return column;
  const text = sqlMessage ?? message ?? "";
  const named =
    /for column [`']([^`']+)[`']/.exec(text) ??
    /CONSTRAINT `(?:[^`.]*\.)?([^`]+)` failed/.exec(text) ??
    /CHECK constraint failed: (\w+)$/.exec(text);
  return named?.[1];
}

/**
 * A foreign key violation, whatever the driver, and the constraint it names where the driver
 * says (PostgreSQL's `constraint`, MySQL's "CONSTRAINT `name`"); SQLite names none.
 */
export function violatedForeignKey(error: unknown): { constraint: string | undefined } | undefined {
  const { code, constraint, sqlMessage, message } = (error ?? {}) as {
    code?: unknown;
    constraint?: unknown;
    sqlMessage?: string;
    message?: string;
  };
  // SQLite reports a RESTRICT key as a trigger.
  if (
    code === "SQLITE_CONSTRAINT_FOREIGNKEY" ||
    (code === "SQLITE_CONSTRAINT_TRIGGER" && /FOREIGN KEY/.test(message ?? ""))
  )
    return { constraint: undefined };
  if (code === "23503") return { constraint: typeof constraint === "string" ? constraint : undefined };
  if (code === "ER_NO_REFERENCED_ROW_2" || code === "ER_ROW_IS_REFERENCED_2") {
    const named = /CONSTRAINT `([^`]+)`/.exec(sqlMessage ?? message ?? "");
    return { constraint: named?.[1] };
  }
  return undefined;
}
