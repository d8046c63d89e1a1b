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
  // MariaDB: a CHECK failed, such as the `json_valid` of a JSON column (too deep, say).
  "ER_CONSTRAINT_FAILED",
  "ER_CHECK_CONSTRAINT_VIOLATED",
]);

export function isDataError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== "string") return false;
  // PostgreSQL: SQLSTATE class 22, "data exception", and 23514, a CHECK that failed.
  if (code.length === 5 && (code.startsWith("22") || code === "23514")) return true;
  return MYSQL_CODES.has(code) || code === "SQLITE_TOOBIG";
}

/**
 * The column a data error names, where the driver says: MySQL's "for column 'name'", MariaDB's
 * "CONSTRAINT `table.column` failed", PostgreSQL's `column`. Undefined otherwise.
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
    /for column [`']([^`']+)[`']/.exec(text) ?? /CONSTRAINT `(?:[^`.]*\.)?([^`]+)` failed/.exec(text);
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
