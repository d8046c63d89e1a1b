// A resource's JSON Schemas for its OpenAPI document, from the field model: the record as every
// answer gives it (with the relations `expand` may add), the body of a create, the body of an
// update. They describe the wire, so they follow the stored types (dates are ISO 8601 strings).

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
 * resource a reference points at, `x-crudkit-file` marks an uploaded file's id (the admin page
 * builds its pickers and links from these).
 */
function valueSchema(field: Field): JsonSchema {
  const schema = plainValueSchema(field);
  if (field.reference) return { ...schema, "x-crudkit-references": field.reference.target };
  if (field.file) return { ...schema, "x-crudkit-file": true };
  return schema;
}

function plainValueSchema(field: Field): JsonSchema {
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
    case "json":
      return {};
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
  for (const field of resource.fields) {
    properties[field.name] = field.nullable ? orNull(valueSchema(field)) : valueSchema(field);
    if (!field.optional && !ruled.has(field.name)) required.push(field.name);
  }
  // What `expand` adds, when asked for.
  for (const relation of relations.values()) {
    if (relation.kind === "forward")
      properties[relation.name] = { anyOf: [ref(schemaName(relation.target)), { type: "null" }] };
    else if (relation.kind === "reverse")
      properties[relation.name] = {
        type: "array",
        items: ref(schemaName(relation.source)),
        // The records of `source` whose `field` holds this record's id.
        "x-crudkit-reverse": { resource: relation.source, field: relation.field },
      };
    else properties[relation.name] = { anyOf: [ref("UploadedFile"), { type: "null" }, { type: "string" }] };
  }
  return { type: "object", properties, required };
}

const SERVER_MANAGED = new Set(["createdAt", "updatedAt"]);

/** The body of a create (`partial: false`) or an update (`partial: true`). */
export function inputSchema(resource: AnyResource, partial: boolean): JsonSchema {
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  for (const field of resource.fields) {
    if (resource.timestamps && SERVER_MANAGED.has(field.name)) continue;
    if (partial && field.name === "id") continue;
    let schema = valueSchema(field);
    // An update clears an optional field with null; a nullable one takes null anyway.
    if (field.nullable || (partial && field.optional)) schema = orNull(schema);
    properties[field.name] = schema;
    if (!partial && field.name !== "id" && !field.optional && !field.hasDefault) required.push(field.name);
  }
  return { type: "object", properties, required, additionalProperties: false };
}
