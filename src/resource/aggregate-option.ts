// The `aggregates` option of a resource, checked once when it is defined: every field it names
// must be a field of the schema that is not JSON, and none twice.

import { ConfigError } from "../core/errors.ts";
import type { Field } from "../schema/field-model.ts";
import type { AggregatesOption } from "./types.ts";

export function checkedAggregates(
  resource: string,
  fields: readonly Field[],
  option: { fields?: readonly string[]; groupBy?: readonly string[] } | undefined,
): AggregatesOption | undefined {
  if (option === undefined) return undefined;
  if (typeof option !== "object" || option === null || Array.isArray(option))
    throw new ConfigError(`aggregates of "${resource}" takes { fields, groupBy }.`);
  for (const key of Object.keys(option))
    if (key !== "fields" && key !== "groupBy")
      throw new ConfigError(`aggregates of "${resource}" takes fields and groupBy only.`);
  return {
    fields: named(resource, fields, "fields", option.fields),
    groupBy: named(resource, fields, "groupBy", option.groupBy),
  };
}

function named(
  resource: string,
  fields: readonly Field[],
  key: string,
  names: readonly string[] | undefined,
): string[] {
  const list = [...(names ?? [])];
  if (new Set(list).size !== list.length)
    throw new ConfigError(`aggregates.${key} of "${resource}" names a field twice.`);
  for (const name of list) {
    const field = fields.find((f) => f.name === name);
    if (!field || field.kind === "json")
      throw new ConfigError(
        `aggregates.${key} of "${resource}" names "${String(name)}", which is not a field of it that is not JSON.`,
      );
  }
  return list;
}
