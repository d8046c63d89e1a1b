// A unique violation as the 409 that names the field(s), whatever the driver reports (columns on
// SQLite, the constraint's name on PostgreSQL and MySQL).

import { APIError } from "../core/errors.ts";
import { isUniqueViolation, violatedUnique } from "../db/database.ts";
import { indexName } from "../db/table-definition.ts";
import type { AnyResource } from "./types.ts";

export function uniqueConflicts(resource: AnyResource): (error: unknown) => unknown {
  const table = resource.name;
  // Unique sets by index name, so a violation names the fields whatever the driver reports.
  const uniqueSets = new Map(resource.unique.map((columns) => [indexName(table, columns, true), columns]));
  /** A unique violation as a 409 naming the field(s); any other error as it is. */
  return (error: unknown): unknown => {
    if (!isUniqueViolation(error)) return error;
    const { columns, constraint } = violatedUnique(error);
    const fields = columns ?? (constraint ? uniqueSets.get(constraint) : undefined);
    if (!fields) return new APIError("CONFLICT", `This ${resource.name} conflicts with an existing one.`);
    const named = fields.map((f) => `"${f}"`).join(" and ");
    return new APIError(
      "CONFLICT",
      fields.length === 1 && fields[0] === "id"
        ? `A ${resource.name} with this id already exists.`
        : `Another ${resource.name} already has this ${named}: ${fields.length > 1 ? "together they" : "it"} must be unique.`,
      { details: fields.map((path) => ({ path, message: "Must be unique." })) },
    );
  };
}
