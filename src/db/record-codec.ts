// Converts between records (booleans, numbers, parsed JSON, dates as ISO 8601 strings) and rows.
// Built once per resource; per row it is one pass over precomputed converters.

import type { Field } from "../schema/field-model.ts";
import { dateFromColumn, dateToColumn, jsonFromColumn } from "./column-values.ts";
import type { DialectProfile } from "./dialect.ts";

export interface RecordCodec {
  toRow(record: Readonly<Record<string, unknown>>): Record<string, unknown>;
  fromRow(row: Readonly<Record<string, unknown>>): Record<string, unknown>;
}

type Convert = (value: unknown) => unknown;

const same: Convert = (v) => v;

/** `log` hears of stored values that cannot be read back (see `jsonFromColumn`). */
export function createRecordCodec(
  fields: readonly Field[],
  profile: DialectProfile,
  log: (message: string, error: unknown) => void,
): RecordCodec {
  const writers = fields.map((f) => [f.name, writer(f, profile)] as const);
  const readers = fields.map((f) => [f.name, reader(f, log), f.nullable] as const);
  // When every column already reads back as its record value, rows are records: no copy per row.
  const rowsAreRecords = fields.every((f) => readsAsIs(f, profile));
  return {
    toRow(record) {
      const row: Record<string, unknown> = {};
      for (const [name, write] of writers) {
        const value = record[name];
        row[name] = value === undefined || value === null ? null : write(value);
      }
      return row;
    },
    fromRow(row) {
      if (rowsAreRecords) return row as Record<string, unknown>;
      const record: Record<string, unknown> = {};
      for (const [name, read, nullable] of readers) {
        const value = row[name];
        // A null in an optional, non-nullable field means "absent", as the schema's type says.
        if (value === null || value === undefined) {
          if (nullable) record[name] = null;
        } else {
          record[name] = read(value);
        }
      }
      return record;
    },
  };
}

function writer(field: Field, profile: DialectProfile): Convert {
  switch (field.kind) {
    case "boolean":
      return profile.booleansAsIntegers ? (v) => (v ? 1 : 0) : same;
    case "date":
      return (v) => dateToColumn(v as string | Date, profile);
    case "json":
      return (v) => JSON.stringify(v);
    default:
      return same;
  }
}

function reader(field: Field, log: (message: string, error: unknown) => void): Convert {
  switch (field.kind) {
    case "boolean":
      return (v) => v === true || v === 1 || v === "1";
    case "date":
      return dateFromColumn;
    case "json":
      return (v) => jsonFromColumn(v, log);
    case "integer":
    case "number":
      return (v) => (typeof v === "number" ? v : Number(v));
    default:
      return same;
  }
}

function readsAsIs(field: Field, profile: DialectProfile): boolean {
  if (!profile.readsAsWritten || field.optional) return false;
  return (
    field.kind === "string" ||
    field.kind === "enum" ||
    field.kind === "number" ||
    field.kind === "date" ||
    field.kind === "integer"
  );
}
