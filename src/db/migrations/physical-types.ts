// How each engine reports the column types crudkit creates, to tell a real type change from
// two names for the same thing.

import type { DialectName } from "../dialect.ts";
import type { ColumnType } from "../table-definition.ts";

const NAMES: Record<DialectName, Record<ColumnType, readonly string[]>> = {
  sqlite: {
    text: ["text"],
    integer: ["integer"],
    number: ["real"],
    boolean: ["integer"],
    date: ["text"],
    json: ["text"],
  },
  postgres: {
    text: ["text", "varchar"],
    integer: ["int8", "int4", "int2"],
    number: ["float8", "float4", "numeric"],
    boolean: ["bool"],
    date: ["timestamptz", "timestamp"],
    json: ["jsonb", "json"],
  },
  mysql: {
    text: ["text", "varchar", "longtext", "mediumtext"],
    integer: ["bigint", "int"],
    number: ["double", "float", "decimal"],
    boolean: ["tinyint"],
    date: ["datetime", "timestamp"],
    json: ["json", "longtext"],
  },
};

export function sameType(dialect: DialectName, desired: ColumnType, live: string): boolean {
  return NAMES[dialect][desired].includes(live);
}
