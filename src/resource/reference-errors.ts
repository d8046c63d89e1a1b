// A write that names a record that does not exist: the database's foreign key refuses it, and the
// caller gets a 400 naming the field, never the driver's words.

import type { Kysely } from "kysely";
import type { DriverErrors } from "../core/driver-errors.ts";
import { APIError } from "../core/errors.ts";
import { foreignKeyName } from "../db/table-definition.ts";
import type { Field } from "../schema/field-model.ts";
import type { AnyResource } from "./types.ts";

type Row = Record<string, unknown>;

/**
 * Turns a foreign key violation of an insert or update into a 400 VALIDATION_ERROR naming the
 * field; other errors come back as they are. Where the driver names no constraint (SQLite), the
 * written ids are looked up; a failed SQLite statement leaves its transaction usable.
 */
export function referenceErrors(resource: AnyResource, driver: DriverErrors) {
  const fields = resource.fields.filter((f) => f.reference);
  const byKey = new Map(fields.map((f) => [foreignKeyName(resource.name, f.name), f]));
  return async (error: unknown, db: Kysely<any>, written: Row): Promise<unknown> => {
    const violation = fields.length > 0 ? driver.foreignKey(error) : undefined;
    if (!violation) return error;
    const named = violation.constraint ? byKey.get(violation.constraint) : undefined;
    let missing = named ? [named] : [];
    if (!named) {
      missing = [];
      for (const field of fields) {
        const id = written[field.name];
        if (typeof id !== "string") continue;
        const found = await db
          .selectFrom(field.reference!.target)
          .select("id")
          .where("id", "=", id)
          .executeTakeFirst()
          .catch(() => undefined);
        if (!found) missing.push(field);
      }
      // A record removed between the write and the lookup: name every reference written.
      if (missing.length === 0) missing = fields.filter((f) => typeof written[f.name] === "string");
    }
    return missingReferences(missing);
  };
}

/**
 * The 400 for reference fields naming no record the caller may read. A missing id and a record
 * outside the caller's read rule get this same answer, byte for byte: it must not tell them apart.
 */
export function missingReferences(missing: readonly Field[]): APIError {
  return new APIError(
    "VALIDATION_ERROR",
    `${missing.map((f) => `"${f.name}"`).join(" and ")} must be the id of an existing ${missing.map(targetOf).join(" / ")}.`,
    {
      details: missing.map((f) => ({
        path: f.name,
        message: `No ${targetOf(f)} with this id exists.`,
      })),
    },
  );
}

/** What a reference field, or a list of them (`referencesMany`), points at. */
function targetOf(field: Field): string {
  return (field.reference ?? field.many)!.target;
}
