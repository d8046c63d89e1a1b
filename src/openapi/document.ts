// The OpenAPI 3.1 document, built from the same endpoint list as the router: every resource
// operation with its schemas and list parameters, every plugin endpoint, the error body on every
// error answer, and the security schemes the identity plugins bring.

import type { Endpoint, EndpointDoc, JsonSchema } from "../core/endpoint.ts";
import { ERROR_STATUS } from "../core/errors.ts";
import type { WrappedDoc } from "../core/plugin.ts";
import type { RelationGraph } from "../resource/relations.ts";
import type { AnyResource } from "../resource/types.ts";
import { inputSchema, recordSchema, schemaName } from "./resource-schemas.ts";

export interface OpenApiSource {
  basePath: string;
  resources: readonly AnyResource[];
  relations: RelationGraph;
  endpoints: readonly Endpoint[];
  /** From the identity plugins: `{ ApiKey: { type: "apiKey", in: "header", name: "x-api-key" } }`. */
  securitySchemes: Readonly<Record<string, JsonSchema>>;
  /** What wrapping plugins add to an endpoint (their headers and errors). */
  wrappedDocs?: (endpoint: Endpoint) => readonly WrappedDoc[];
  title?: string;
  version?: string;
}

export type OpenApiDocument = Record<string, unknown> & { paths: Record<string, Record<string, unknown>> };

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: JsonSchema) => ({ "application/json": { schema } });

const ERROR_RESPONSE = { description: "The error body", content: json(ref("Error")) };
/** Which errors each kind of operation may answer. */
const ERRORS = {
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

/** The paging parameters every plugin list takes, for its `doc.query`. */
export const PAGE_QUERY: Readonly<Record<string, JsonSchema>> = {
  page: { type: "integer", minimum: 1 },
  limit: { type: "integer", minimum: 1 },
  count: { type: "string", enum: ["exact", "estimated", "none"] },
};

/** A page of plugin records: `{ items, pagination }`. */
export function pageOf(items: JsonSchema): JsonSchema {
  return {
    type: "object",
    properties: { items: { type: "array", items }, pagination: { $ref: "#/components/schemas/Pagination" } },
    required: ["items", "pagination"],
  };
}

const PAGINATION: JsonSchema = {
  type: "object",
  properties: {
    page: { type: "integer" },
    limit: { type: "integer" },
    total: { type: ["integer", "null"] },
    totalPages: { type: ["integer", "null"] },
    hasNext: { type: "boolean" },
    hasPrev: { type: "boolean" },
    nextCursor: { type: ["string", "null"] },
    prevCursor: { type: ["string", "null"] },
  },
  required: ["page", "limit", "total", "totalPages", "hasNext", "hasPrev"],
};

const FILE_RECORD: JsonSchema = {
  type: "object",
  properties: {
    id: { type: "string" },
    filename: { type: "string" },
    originalName: { type: "string" },
    mimeType: { type: "string" },
    size: { type: "integer" },
    url: { type: ["string", "null"] },
    uploadedBy: { type: ["string", "null"] },
    uploadedAt: { type: "string", format: "date-time" },
    metadata: { anyOf: [{ type: "object" }, { type: "null" }] },
  },
  required: [
    "id",
    "filename",
    "originalName",
    "mimeType",
    "size",
    "url",
    "uploadedBy",
    "uploadedAt",
    "metadata",
  ],
};

export function buildOpenApi(source: OpenApiSource): OpenApiDocument {
  const schemas: Record<string, JsonSchema> = {
    Error: {
      type: "object",
      properties: {
        code: { type: "string", enum: Object.keys(ERROR_STATUS) },
        message: { type: "string" },
        details: {
          type: "array",
          items: {
            type: "object",
            properties: { path: { type: "string" }, message: { type: "string" } },
            required: ["path", "message"],
          },
        },
      },
      required: ["code", "message"],
    },
    Pagination: PAGINATION,
    UploadedFile: FILE_RECORD,
    DeleteResult: {
      type: "object",
      properties: { success: { const: true }, id: { type: "string" } },
      required: ["success", "id"],
    },
  };
  const byName = new Map(source.resources.map((r) => [r.name, r]));
  for (const resource of source.resources) {
    const name = schemaName(resource.name);
    schemas[name] = recordSchema(resource, source.relations.expandable(resource.name));
    schemas[`${name}Create`] = inputSchema(resource, false);
    schemas[`${name}Update`] = inputSchema(resource, true);
  }
  const paths: OpenApiDocument["paths"] = {};
  for (const endpoint of source.endpoints) {
    const { path, parameters } = openApiPath(source.basePath + endpoint.path);
    const resource = endpoint.doc?.resource ? byName.get(endpoint.doc.resource.name) : undefined;
    const operation: Record<string, unknown> & { parameters?: unknown[] } = resource
      ? resourceOperation(endpoint, resource, source.relations)
      : pluginOperation(endpoint, endpoint.doc ?? {});
    operation.parameters = [...parameters, ...(operation.parameters ?? [])];
    for (const added of source.wrappedDocs?.(endpoint) ?? []) addWrapped(operation, added);
    if (operation.parameters.length === 0) delete operation.parameters;
    if (endpoint.doc?.public) operation.security = [];
    paths[path] ??= {};
    paths[path][endpoint.method.toLowerCase()] = operation;
  }
  const securitySchemes = { ...source.securitySchemes };
  return {
    openapi: "3.1.0",
    info: { title: source.title ?? "crudkit API", version: source.version ?? "1.0.0" },
    paths,
    components: { schemas, ...(Object.keys(securitySchemes).length ? { securitySchemes } : {}) },
    // Any one scheme, or none: each operation's access rule decides what an anonymous caller gets.
    security: [...Object.keys(securitySchemes).map((name) => ({ [name]: [] })), {}],
  };
}

/** What a wrapping plugin (idempotency, rate limits) adds: its headers and its errors. */
function addWrapped(
  operation: Record<string, unknown> & { parameters?: unknown[] },
  added: WrappedDoc,
): void {
  for (const [name, description] of Object.entries(added.requestHeaders ?? {}))
    operation.parameters!.push({ name, in: "header", schema: { type: "string" }, description });
  const responses = operation.responses as Record<
    string,
    Record<string, unknown> & { headers?: Record<string, unknown> }
  >;
  for (const code of added.errors ?? []) responses[String(code)] ??= { ...ERROR_RESPONSE };
  const headers = Object.entries(added.responseHeaders ?? {});
  if (headers.length === 0) return;
  for (const [status, response] of Object.entries(responses)) {
    // Shared objects (the error body) are copied before they get headers of their own.
    const own: Record<string, unknown> = { ...response.headers };
    for (const [name, description] of headers) own[name] = { description, schema: { type: "string" } };
    responses[status] = { ...response, headers: own };
  }
}

/** `/api/product/:id` → `/api/product/{id}`, and its path parameters. */
function openApiPath(path: string): { path: string; parameters: Record<string, unknown>[] } {
  const parameters: Record<string, unknown>[] = [];
  const converted = path.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, (_, name: string) => {
    parameters.push({ name, in: "path", required: true, schema: { type: "string" } });
    return `{${name}}`;
  });
  return { path: converted || "/", parameters };
}

function responses(status: number, success: unknown, errors: readonly number[]): Record<string, unknown> {
  const out: Record<string, unknown> = { [String(status)]: success };
  for (const code of errors) out[String(code)] = ERROR_RESPONSE;
  return out;
}

function resourceOperation(endpoint: Endpoint, resource: AnyResource, relations: RelationGraph) {
  const operation = endpoint.doc!.resource!.operation;
  const name = schemaName(resource.name);
  const record = ref(name);
  const expand = expandParameter(resource, relations);
  const base = {
    operationId: endpoint.operationName ?? `${operation}${name}Alias`,
    tags: [resource.name],
  };
  switch (operation) {
    case "create":
      return {
        ...base,
        summary: `Create a ${resource.name}`,
        requestBody: { required: true, content: json(ref(`${name}Create`)) },
        responses: responses(
          201,
          { description: `The ${resource.name} created`, headers: ETAG_HEADER, content: json(record) },
          ERRORS.write,
        ),
      };
    case "read":
      return {
        ...base,
        summary: `Read a ${resource.name}`,
        parameters: expand ? [expand, IF_NONE_MATCH] : [IF_NONE_MATCH],
        responses: {
          ...responses(
            200,
            { description: `The ${resource.name}`, headers: ETAG_HEADER, content: json(record) },
            ERRORS.read,
          ),
          304: {
            description: "Not modified: the copy named by If-None-Match is current",
            headers: ETAG_HEADER,
          },
        },
      };
    case "update":
      return {
        ...base,
        summary: `Update a ${resource.name} (only the fields sent change)`,
        parameters: [IF_MATCH],
        requestBody: { required: true, content: json(ref(`${name}Update`)) },
        responses: responses(
          200,
          { description: `The ${resource.name} after`, headers: ETAG_HEADER, content: json(record) },
          ERRORS.change,
        ),
      };
    case "delete":
      return {
        ...base,
        summary: `Delete a ${resource.name}`,
        parameters: [IF_MATCH],
        responses: responses(
          200,
          { description: "Deleted", content: json(ref("DeleteResult")) },
          ERRORS.change,
        ),
      };
    case "list":
      return {
        ...base,
        summary: `List ${resource.plural}`,
        parameters: [...listParameters(resource), ...(expand ? [expand] : [])],
        responses: responses(
          200,
          {
            description: `A page of ${resource.plural}`,
            content: json({
              type: "object",
              properties: { items: { type: "array", items: record }, pagination: ref("Pagination") },
              required: ["items", "pagination"],
            }),
          },
          ERRORS.list,
        ),
      };
  }
}

function listParameters(resource: AnyResource): Record<string, unknown>[] {
  const query = (name: string, schema: JsonSchema, description: string) => ({
    name,
    in: "query",
    schema,
    description,
  });
  const sortable = resource.fields.filter((f) => f.kind !== "json").map((f) => f.name);
  const parameters = [
    query("page", { type: "integer", minimum: 1 }, "Page number, from 1."),
    query("limit", { type: "integer", minimum: 1 }, "Page size; larger values are clamped to maxLimit."),
    query("sortBy", { type: "string", enum: sortable }, "Field to sort by; id breaks ties."),
    query("sortOrder", { type: "string", enum: ["asc", "desc"] }, "@default desc"),
    query("count", { type: "string", enum: ["exact", "estimated", "none"] }, "How `total` is counted."),
    query("cursor", { type: "string" }, "A nextCursor or prevCursor from another page (keyset paging)."),
    {
      name: "filter",
      in: "query",
      style: "deepObject",
      explode: true,
      schema: { type: "object", additionalProperties: true },
      description:
        "filter[field]=value or filter[field][op]=value (eq ne gt gte lt lte in nin contains startsWith endsWith isNull), filter[or][0][…], filter[not][…], filter[relation.field][op] on referenced records.",
    },
  ];
  if (resource.searchable.length > 0)
    parameters.push(
      query("search", { type: "string", maxLength: 200 }, `Matches ${resource.searchable.join(", ")}.`),
    );
  return parameters;
}

function expandParameter(
  resource: AnyResource,
  relations: RelationGraph,
): Record<string, unknown> | undefined {
  const names = [...relations.expandable(resource.name).keys()];
  if (names.length === 0) return undefined;
  return {
    name: "expand",
    in: "query",
    schema: { type: "string" },
    description: `Related records to return, comma-separated, nested with dots up to 3 deep: ${names.join(", ")}.`,
  };
}

function pluginOperation(endpoint: Endpoint, doc: EndpointDoc) {
  const status = endpoint.status ?? 200;
  const success =
    doc.response === "binary"
      ? {
          description: "The file",
          content: { "application/octet-stream": { schema: { type: "string", contentEncoding: "binary" } } },
        }
      : doc.response === "event-stream"
        ? {
            description:
              "Server-Sent Events: `create`, `update` and `delete` (data `{ type, resource, record }`, id for Last-Event-ID), and the control events `reset`, `dropped`, `expired` and `close` (data `{ reason }`).",
            content: { "text/event-stream": { schema: { type: "string" } } },
          }
        : { description: doc.summary ?? "The answer", content: json(doc.response ?? {}) };
  const writes = endpoint.method !== "GET";
  return {
    operationId: endpoint.operationName ?? endpoint.clientMethod ?? operationIdOf(endpoint),
    ...(doc.summary ? { summary: doc.summary } : {}),
    tags: [...(doc.tags ?? [endpoint.path.split("/")[1] ?? "api"])],
    parameters: [
      ...Object.entries(doc.query ?? {}).map(([name, schema]) => ({ name, in: "query", schema })),
      ...Object.entries(doc.headers ?? {}).map(([name, description]) => ({
        name,
        in: "header",
        schema: { type: "string" },
        description,
      })),
    ],
    ...(writes ? { requestBody: { required: true, content: json(doc.body ?? {}) } } : {}),
    responses: Object.assign(
      responses(status, success, writes ? ERRORS.write : ERRORS.read),
      Object.fromEntries(
        Object.entries(doc.otherAnswers ?? {}).map(([code, schema]) => [
          code,
          { description: "The answer", content: json(schema) },
        ]),
      ),
    ),
  };
}

function operationIdOf(endpoint: Endpoint): string {
  const words = endpoint.path.split(/[^A-Za-z0-9]+/).filter(Boolean);
  return endpoint.method.toLowerCase() + words.map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join("");
}
