// The OpenAPI 3.1 document, built from the same endpoint list as the router: every resource
// operation with its schemas and list parameters, every plugin endpoint, the error body on every
// error answer, and the security schemes the identity plugins bring. Pages and files for browsers
// (the docs page, the admin, this document itself) are not API operations and are left out. Paths
// start after the basePath, which the server URL carries (see servers.ts).

import type { Endpoint, EndpointDoc, JsonSchema } from "../core/endpoint.ts";
import { ERROR_STATUS } from "../core/errors.ts";
import type { WrappedDoc } from "../core/plugin.ts";
import { FILE_RECORD_FIELDS } from "../resource/references.ts";
import type { RelationGraph } from "../resource/relations.ts";
import type { AnyResource } from "../resource/types.ts";
import { filterSchemas } from "./filter-schema.ts";
import type { ListLanguage, ListShape } from "./list-language.ts";
import { ERROR_RESPONSE, ERRORS, json, resourceOperation, responses } from "./resource-operations.ts";
import { inputSchema, recordSchema, schemaName } from "./resource-schemas.ts";
import { relativeServer } from "./servers.ts";

export interface OpenApiSource {
  basePath: string;
  resources: readonly AnyResource[];
  relations: RelationGraph;
  /** Each resource's list rules as its list endpoint enforces them. */
  listRules(resource: string): ListShape;
  /** The list query language's operators and limits (from query/). */
  language: ListLanguage;
  /** The app's page sizes, for the plugin lists that take `PAGE_QUERY`. */
  pageLimits: { defaultLimit: number; maxLimit: number };
  endpoints: readonly Endpoint[];
  /** From the identity plugins: `{ ApiKey: { type: "apiKey", in: "header", name: "x-api-key" } }`. */
  securitySchemes: Readonly<Record<string, JsonSchema>>;
  /** What wrapping plugins add to an endpoint (their headers and errors). */
  wrappedDocs?: (endpoint: Endpoint) => readonly WrappedDoc[];
  title?: string;
  version?: string;
}

export type OpenApiDocument = Record<string, unknown> & { paths: Record<string, Record<string, unknown>> };

/** The paging parameters every plugin list takes, for its `doc.query`. */
export const PAGE_QUERY: Readonly<Record<string, JsonSchema>> = {
  page: { type: "integer", minimum: 1 },
  limit: { type: "integer", minimum: 1 },
  count: { type: "string", enum: ["exact", "estimated", "none"] },
};

/** `PAGE_QUERY`'s page and limit with the app's bounds (a larger limit is clamped to maxLimit). */
function pageSchema(schema: JsonSchema, source: OpenApiSource): JsonSchema {
  if (schema === PAGE_QUERY.page) return { ...schema, maximum: source.language.maxPage, default: 1 };
  if (schema !== PAGE_QUERY.limit) return schema;
  return { ...schema, maximum: source.pageLimits.maxLimit, default: source.pageLimits.defaultLimit };
}

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
  required: [...FILE_RECORD_FIELDS],
};

export function buildOpenApi(source: OpenApiSource): OpenApiDocument {
  const schemas: Record<string, JsonSchema> = {
    Error: {
      type: "object",
      properties: {
        code: { type: "string", enum: Object.keys(ERROR_STATUS) },
        message: { type: "string" },
        requestId: {
          type: "string",
          description: "On a 5xx: the request's id, as in the X-Request-Id header, for the user to quote.",
        },
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
    const filterable = source.listRules(resource.name).filterable;
    Object.assign(schemas, filterSchemas(filterable, `${name}Filter`, source.language));
  }
  const paths: OpenApiDocument["paths"] = {};
  for (const endpoint of source.endpoints) {
    if (endpoint.doc?.unlisted) continue;
    const { path, parameters } = openApiPath(endpoint.path);
    const resource = endpoint.doc?.resource ? byName.get(endpoint.doc.resource.name) : undefined;
    const operation: Record<string, unknown> & { parameters?: unknown[] } = resource
      ? resourceOperation(endpoint, {
          resource,
          relations: source.relations,
          listRules: source.listRules(resource.name),
          language: source.language,
        })
      : pluginOperation(endpoint, endpoint.doc ?? {}, source);
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
    // Built without a request: the basePath, relative to wherever the document is read from.
    // Served at GET <basePath>/openapi.json, it names the request's origin (see servers.ts).
    servers: [{ url: relativeServer(source.basePath) }],
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

/** `/product/:id` → `/product/{id}`, and its path parameters. */
function openApiPath(path: string): { path: string; parameters: Record<string, unknown>[] } {
  const parameters: Record<string, unknown>[] = [];
  const converted = path.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, (_, name: string) => {
    parameters.push({ name, in: "path", required: true, schema: { type: "string" } });
    return `{${name}}`;
  });
  return { path: converted || "/", parameters };
}

function pluginOperation(endpoint: Endpoint, doc: EndpointDoc, source: OpenApiSource) {
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
      ...Object.entries(doc.query ?? {}).map(([name, schema]) => ({
        name,
        in: "query",
        // An object is read from brackets, `filter[status]=open`, as every list reads it.
        ...(schema.type === "object" ? { style: "deepObject", explode: true } : {}),
        schema: pageSchema(schema, source),
      })),
      ...Object.entries(doc.headers ?? {}).map(([name, description]) => ({
        name,
        in: "header",
        schema: { type: "string" },
        description,
      })),
    ],
    // A body when the endpoint reads one; a DELETE reads none.
    ...(doc.body
      ? { requestBody: { required: true, content: json(doc.body) } }
      : writes && endpoint.method !== "DELETE"
        ? { requestBody: { required: false, content: json({}) } }
        : {}),
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
