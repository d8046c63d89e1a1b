// A resource's JSON Schemas for its OpenAPI document: the record as every answer gives it (with
// the relations `expand` may add), the body of a create, the body of an update. The field model
// decides each field's type, whether it is required and whether it takes null; Zod's own JSON
// Schema conversion adds what the schema says beyond that (a JSON field's shape and its item
// rules, a description, a default). They describe the wire: dates are ISO 8601 strings.

import { z } from "zod";
import type { JsonSchema } from "../core/endpoint.ts";
import type { Relation } from "../resource/relations.ts";
import type { AnyResource } from "../resource/types.ts";
import type { Field } from "../schema/field-model.ts";

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/** Component names: `Product`, `ProductCreate`, `ProductUpdate`. */
export function schemaName(resource: string, suffix = ""): string {
  return `${resource.charAt(0).toUpperCase()}${resource.slice(1)}${suffix}`;
}

/**
 * A field's schema with what a generic client needs to link it: `x-crudkit-references` names the
 * resource a reference (or an array of ids) points at, `x-crudkit-file` marks an uploaded file's id (the admin page
 * builds its pickers and links from these).
 */
function valueSchema(field: Field, io: Io): JsonSchema {
  const converted = zodSchema(field, io);
  const schema = plainValueSchema(field, converted);
  if (typeof converted.description === "string") schema.description = converted.description;
  if (field.reference) return { ...schema, "x-crudkit-references": field.reference.target };
  // A list of ids (`referencesMany`): the array names what its ids point at.
  if (field.many) return { ...schema, "x-crudkit-references": field.many.target };
  if (field.file) return { ...schema, "x-crudkit-file": true };
  return schema;
}

type Io = "input" | "output";

/**
 * The field's schema by Zod's conversion (dates at any depth as ISO 8601 strings, as the wire
 * carries them), without the null Zod adds for `.nullable()`: the field model says that. A schema
 * Zod cannot convert on its own (a recursive one, another copy of zod) is any value.
 */
function zodSchema(field: Field, io: Io): JsonSchema {
  let converted: JsonSchema;
  try {
    converted = z.toJSONSchema(field.schema, {
      io,
      unrepresentable: "any",
      override: ({ zodSchema, jsonSchema }) => {
        if ((zodSchema as unknown as { _zod: { def: { type: string } } })._zod.def.type !== "date") return;
        jsonSchema.type = "string";
        jsonSchema.format = "date-time";
      },
    }) as JsonSchema;
  } catch {
    return {};
  }
  const { $schema: _, ...schema } = converted;
  // References into the conversion's own $defs mean nothing inside the OpenAPI document.
  if (JSON.stringify(schema).includes('"$ref"')) return {};
  const options = schema.anyOf as JsonSchema[] | undefined;
  if (field.nullable && options?.length === 2) {
    const value = options.filter((o) => o.type !== "null");
    if (value.length === 1) {
      const { anyOf: _options, ...rest } = schema;
      return { ...value[0], ...rest };
    }
  }
  return schema;
}

function plainValueSchema(field: Field, converted: JsonSchema): JsonSchema {
  switch (field.kind) {
    case "string":
      return { type: "string", ...field.constraints };
    case "enum":
      return { type: "string", enum: [...(field.enumValues ?? [])] };
    case "integer":
      return { type: "integer", ...field.constraints };
    case "number":
      return { type: "number", ...field.constraints };
    case "boolean":
      return { type: "boolean" };
    case "date":
      return { type: "string", format: "date-time" };
    case "json": {
      const { default: _default, description: _description, ...shape } = converted;
      return shape;
    }
  }
}

function orNull(schema: JsonSchema): JsonSchema {
  return Object.keys(schema).length === 0 ? schema : { anyOf: [schema, { type: "null" }] };
}

/** The record: fields that may be hidden by field rules, or absent when optional, are not required. */
export function recordSchema(resource: AnyResource, relations: ReadonlyMap<string, Relation>): JsonSchema {
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  const ruled = new Set(Object.keys(resource.access.fields ?? {}));
  for (const field of [...resource.fields, ...resource.many]) {
    const value = valueSchema(field, "output");
    // A JSON value the database holds but cannot give back whole (edited by hand) is read as null;
    // a list of ids (referencesMany) is read from its junction table, always a list.
    properties[field.name] = field.nullable || (field.kind === "json" && !field.many) ? orNull(value) : value;
    if (!field.optional && !ruled.has(field.name)) required.push(field.name);
  }
  // What `expand` adds, when asked for: absent otherwise.
  for (const relation of relations.values()) properties[relation.name] = expansionSchema(relation);
  return { type: "object", properties, required };
}

/**
 * A relation as `expand=<name>` answers it: a reference's record (null when it is missing or the
 * caller may not read it), a reverse relation's records (those she may read, in its order), a
 * file's record in place of its id (null when missing or not readable).
 */
function expansionSchema(relation: Relation): JsonSchema {
  const description = `With expand=${relation.name}.`;
  switch (relation.kind) {
    case "forward":
      return { description, anyOf: [ref(schemaName(relation.target)), { type: "null" }] };
    case "reverse":
      return {
        description,
        type: "array",
        items: ref(schemaName(relation.source)),
        // The records of `source` whose `field` holds this record's id (or lists it: `list`).
        "x-crudkit-reverse": {
          resource: relation.source,
          field: relation.field,
          ...(relation.through && { list: true }),
        },
      };
    case "list":
      return {
        description: `${description} The records of the list the caller may read, in its order.`,
        type: "array",
        items: ref(schemaName(relation.target)),
      };
    case "file":
      // Under the file field's own name, the id stays a string until it is expanded.
      return { description, anyOf: [ref("UploadedFile"), { type: "null" }, { type: "string" }] };
  }
}

const SERVER_MANAGED = new Set(["createdAt", "updatedAt"]);

/** The body of a create (`partial: false`) or an update (`partial: true`). */
export function inputSchema(resource: AnyResource, partial: boolean): JsonSchema {
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  for (const field of [...resource.fields, ...resource.many]) {
    if (resource.timestamps && SERVER_MANAGED.has(field.name)) continue;
    if (partial && field.name === "id") continue;
    let schema = valueSchema(field, "input");
    // What a create fills in when the body leaves the field out (a value Zod computes each time,
    // a new date or id, is not one default and is not written).
    if (!partial && field.kind !== "date") Object.assign(schema, constantDefault(field));
    // An update clears an optional field with null; a nullable one takes null anyway.
    if (field.nullable || (partial && field.optional)) schema = orNull(schema);
    properties[field.name] = schema;
    if (!partial && field.name !== "id" && !field.optional && !field.hasDefault) required.push(field.name);
  }
  return { type: "object", properties, required, additionalProperties: false };
}

/** `{ default }` when the field's default is one JSON value, the same every time it is asked. */
function constantDefault(field: Field): JsonSchema {
  if (!field.hasDefault) return {};
  const once = zodSchema(field, "input").default;
  const again = zodSchema(field, "input").default;
  if (once === undefined || JSON.stringify(once) !== JSON.stringify(again)) return {};
  return { default: once };
}
