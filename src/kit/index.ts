// crudkit-api/plugin-kit: what a plugin may build on, by name. The built-in plugins use this and
// `core/` and `storage/`, nothing else (a lint rule says so), so whatever one of them does, a
// plugin written outside this package can do too. See docs/plugins/index.md, "Writing a plugin".

// Endpoints: defined with typed input, answered with the one error body.
export { defineEndpoint } from "../core/define-endpoint.ts";
export type { Endpoint, EndpointContext } from "../core/endpoint.ts";
export { APIError } from "../core/errors.ts";
export type { RequestRecord } from "../core/http-handler.ts";
export type { User } from "../core/identity.ts";
// The contract, whole: what a plugin is, and what it is given (every type of core/plugin.ts:
// CrudkitPlugin, PluginContext, CachedRead, ReadCache, OwnedFiles, FileOwner, GarbageReport, WrappedDoc).
export type * from "../core/plugin.ts";
export { RequestCache } from "../core/request-cache.ts";
export type {
  StatementRecord,
  Telemetry,
  TelemetryCount,
  TelemetryLevel,
} from "../core/telemetry.ts";
// Spans under the request's (a no-op unless the app registers an OpenTelemetry SDK).
export { endSpan, startRootSpan, traced, tracing } from "../core/tracing.ts";
// Tables a plugin owns, and values in and out of their columns on every engine.
export { dateFromColumn, dateToColumn, jsonFromColumn } from "../db/column-values.ts";
export { isUniqueViolation } from "../db/database.ts";
export type { DialectProfile } from "../db/dialect.ts";
export { compileTemplate, type QueryTemplate, runTemplate, slot } from "../db/query-template.ts";
export type { TableDefinition } from "../db/table-definition.ts";
// Lists: the query every list reads (page, limit, filter), paging, and the OpenAPI shapes of both.
export { PAGE_QUERY, pageOf } from "../openapi/document.ts";
export {
  type ListResult,
  paginate,
  parseListFilter,
  parseListQuery,
  parsePage,
  unknownParameter,
} from "../query/list-query.ts";
export { newestFirstPage } from "../query/newest-first-page.ts";
// A Where: checked against the fields a caller may filter on, and compiled to SQL.
export { type FilterField, parseWhere, tableFilterFields, type Where } from "../query/where.ts";
export { compileWhere } from "../query/where-sql.ts";
// Hooks and the write pipeline: a plugin's writes tell hooks as a resource's do, in one transaction.
export type { AnyResourceHooks, HookContext } from "../resource/hooks.ts";
// Rules on a plugin's own routes and rows.
export {
  admitPluginRows,
  authorizePluginRoute,
  type PluginAdmission,
  type PluginRowRule,
  type PluginRule,
} from "../resource/plugin-access.ts";
export type { FileRecord } from "../resource/references.ts";
export { FILE_RECORD_FIELDS } from "../resource/references.ts";
export { hookContextOf } from "../resource/runtime.ts";
export { runWrite, type Write } from "../resource/write-pipeline.ts";
