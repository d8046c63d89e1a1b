// The five operations of a resource as OpenAPI operations: their summaries, parameters, bodies,
// answers and the errors each may give.

import type { Endpoint, JsonSchema } from "../core/endpoint.ts";
import type { RelationGraph } from "../resource/relations.ts";
import type { AnyResource } from "../resource/types.ts";
import { aggregateParts } from "./aggregate-operation.ts";
import { withArticle } from "./english.ts";
import type { ListLanguage, ListShape } from "./list-language.ts";
import { expandParameter, listParameters } from "./list-parameters.ts";
import { schemaName } from "./resource-schemas.ts";

export const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
export const json = (schema: JsonSchema) => ({ "application/json": { schema } });

export const ERROR_RESPONSE = { description: "The error body", content: json(ref("Error")) };

/** Which errors each kind of operation may answer. */
export const ERRORS = {
  read: [400, 401, 403, 404, 500, 503],
  list: [400, 401, 403, 500, 503],
  write: [400, 401, 403, 404, 409, 413, 415, 500, 503],
  // Changes may name the version they change (If-Match): 412 when it moved on, 428 when required.
  change: [400, 401, 403, 404, 409, 412, 413, 415, 428, 500, 503],
} as const;

/** The record's version, on every answer that carries one record. */
const ETAG_HEADER = {
  ETag: {
    description: "The record's version as this caller sees it; send it back as If-Match to change it.",
    schema: { type: "string" },
  },
};
const IF_MATCH = {
  name: "If-Match",
  in: "header",
  schema: { type: "string" },
  description:
    "Only if the record is still this version (an ETag from a read, create or update); otherwise 412 PRECONDITION_FAILED. Resources with requireIfMatch answer 428 without it.",
};
const IF_NONE_MATCH = {
  name: "If-None-Match",
  in: "header",
  schema: { type: "string" },
  description:
    "The ETag of the copy the caller holds: 304 with no body when it is still current (not with expand).",
};

const IF_MATCH_REPLACE = {
  ...IF_MATCH,
  description:
    "Replace only this version (an ETag from a read, create or update): 412 PRECONDITION_FAILED when the record moved on or does not exist.",
};
const IF_NONE_MATCH_CREATE = {
  name: "If-None-Match",
  in: "header",
  schema: { type: "string" },
  description:
    "`*`: create only; 412 PRECONDITION_FAILED when a record with this id exists that the caller may update. Other values are not read.",
};

/** `onConflict` on a create, for a resource with fields unique on their own. */
function onConflictParameter(resource: AnyResource): Record<string, unknown> | undefined {
  const fields = resource.unique.filter((set) => set.length === 1).map((set) => set[0]!);
  if (fields.length === 0) return undefined;
  return {
    name: "onConflict",
    in: "query",
    schema: { type: "string", enum: fields },
    description:
      "A unique field: when a record already holds the body's value of it and the caller may update it, that record is updated with the fields sent (200) instead of a 409.",
  };
}

export function responses(
  status: number,
  success: unknown,
  errors: readonly number[],
): Record<string, unknown> {
  const out: Record<string, unknown> = { [String(status)]: success };
  for (const code of errors) out[String(code)] = ERROR_RESPONSE;
  return out;
}

export interface ResourceParts {
  resource: AnyResource;
  relations: RelationGraph;
  /** The list's rules as the server holds them (limits, sortable and filterable fields). */
  listRules: ListShape;
  language: ListLanguage;
}

export function resourceOperation(endpoint: Endpoint, parts: ResourceParts): Record<string, unknown> {
  const { resource } = parts;
  const operation = endpoint.doc!.resource!.operation;
  const name = schemaName(resource.name);
  const record = ref(name);
  const one = withArticle(resource.name);
  const base = { operationId: endpoint.operationName ?? `${operation}${name}Alias`, tags: [resource.name] };
  const answer = (description: string) => ({ description, headers: ETAG_HEADER, content: json(record) });
  switch (operation) {
    case "create": {
      const onConflict = onConflictParameter(resource);
      const created = responses(201, answer(`The ${resource.name} created`), ERRORS.write);
      return {
        ...base,
        summary: `Create ${one}`,
        ...(onConflict ? { parameters: [onConflict] } : {}),
        requestBody: { required: true, content: json(ref(`${name}Create`)) },
        responses: onConflict
          ? { ...created, 200: answer(`The ${resource.name} that held the value, updated (onConflict)`) }
          : created,
      };
    }
    case "read": {
      const expand = expandParameter(resource, parts.relations, parts.language.maxExpandDepth);
      return {
        ...base,
        summary: `Read ${one}`,
        parameters: expand ? [expand, IF_NONE_MATCH] : [IF_NONE_MATCH],
        responses: {
          ...responses(200, answer(`The ${resource.name}`), ERRORS.read),
          304: {
            description: "Not modified: the copy named by If-None-Match is current",
            headers: ETAG_HEADER,
          },
        },
      };
    }
    case "update":
      return {
        ...base,
        summary: `Update ${one} (only the fields sent change)`,
        parameters: [IF_MATCH],
        requestBody: { required: true, content: json(ref(`${name}Update`)) },
        responses: responses(200, answer(`The ${resource.name} after`), ERRORS.change),
      };
    case "upsert":
      return {
        ...base,
        summary: `Create ${one} with this id, or replace it whole (the fields left out take their defaults)`,
        parameters: [IF_MATCH_REPLACE, IF_NONE_MATCH_CREATE],
        requestBody: { required: true, content: json(ref(`${name}Create`)) },
        responses: {
          ...responses(200, answer(`The ${resource.name} replaced`), ERRORS.change),
          201: answer(`The ${resource.name} created`),
        },
      };
    case "delete":
      return {
        ...base,
        summary: `Delete ${one}`,
        parameters: [IF_MATCH],
        responses: responses(
          200,
          { description: "Deleted", content: json(ref("DeleteResult")) },
          ERRORS.change,
        ),
      };
    case "list":
      return listOperation(base, parts, endpoint.path !== `/${resource.plural}`);
    case "aggregate": {
      const { summary, parameters, answer } = aggregateParts(resource, parts.listRules, parts.language);
      return { ...base, summary, parameters, responses: responses(200, answer, ERRORS.list) };
    }
  }
}

/** `alias`: `GET /<name>`, which lists too (a client needs no pluralizer to reach the list). */
function listOperation(
  base: Record<string, unknown>,
  parts: ResourceParts,
  alias: boolean,
): Record<string, unknown> {
  const { resource } = parts;
  const name = schemaName(resource.name);
  const expand = expandParameter(resource, parts.relations, parts.language.maxExpandDepth);
  const plural = resource.plural;
  return {
    ...base,
    summary: alias ? `List ${plural} (the same as GET /${plural})` : `List ${plural}`,
    parameters: [
      ...listParameters(resource, parts.listRules, parts.language, `${name}Filter`),
      ...(expand ? [expand] : []),
    ],
    responses: responses(
      200,
      {
        description: `A page of ${plural}`,
        content: json({
          type: "object",
          properties: { items: { type: "array", items: ref(name) }, pagination: ref("Pagination") },
          required: ["items", "pagination"],
        }),
      },
      ERRORS.list,
    ),
  };
}
