// crudkit: resource definitions become a REST API on a real SQL database.

export type { AdminOptions } from "./admin/admin.ts";
export { type CrudkitApp, type CrudkitOptions, crudkit } from "./app/app.ts";
export { BatchFailure, type BatchOptions } from "./app/batch-endpoint.ts";
export type {
  AggregateMethod,
  ApiMethod,
  DeleteResult,
  ListQueryInput,
  OptionalApiMethod,
  ResourceApi,
} from "./core/api-types.ts";
export type { CallOptions } from "./core/context.ts";
export type { CorsOptions } from "./core/cors.ts";
export {
  defineEndpoint,
  type EndpointDefinition,
  type EndpointInput,
  type PathParams,
} from "./core/define-endpoint.ts";
export type { Endpoint, EndpointContext, HttpMethod } from "./core/endpoint.ts";
export {
  APIError,
  ConfigError,
  ERROR_STATUS,
  type ErrorBody,
  type ErrorCode,
  type ErrorDetail,
} from "./core/errors.ts";
export { etagOf } from "./core/etag.ts";
export type { LogFields } from "./core/flood-guard.ts";
export type { ConnectionInfo, RequestHandler, RequestRecord } from "./core/http-handler.ts";
export type { Identify, User } from "./core/identity.ts";
export { type JsonLoggerOptions, jsonLogger, type Logger } from "./core/logger.ts";
export type { CachedRead, CrudkitPlugin, PluginContext, ReadCache } from "./core/plugin.ts";
export { RequestCache } from "./core/request-cache.ts";
export type { DatabaseOptions } from "./db/database.ts";
export { type DatabaseUrlOptions, databaseFromUrl, maskUrl } from "./db/database-url.ts";
export type {
  ColumnDefinition,
  ColumnType,
  IndexDefinition,
  TableDefinition,
} from "./db/table-definition.ts";
export { type ApiKeyOptions, apiKey } from "./plugins/api-key/api-key.ts";
export type { ListQuery, ListResult, Pagination } from "./query/list-query.ts";
export type { FieldFilter, Where } from "./query/where.ts";
export { type ChangeEvent, type ChangeType, memoryBus, type RealtimeBus } from "./realtime/bus.ts";
export type { RealtimeOptions, RealtimeStats } from "./realtime/hub.ts";
export { postgresBus } from "./realtime/postgres-bus.ts";
export { type RedisPublisher, type RedisSubscriber, redisBus } from "./realtime/redis-bus.ts";
export type {
  AccessContext,
  AccessRule,
  FieldAccess,
  FieldAccessContext,
  FieldRule,
  Operation,
  ResourceAccess,
  RowRule,
} from "./resource/access.ts";
export type { AggregateInput, AggregateItem, AggregateResult } from "./resource/aggregate-types.ts";
export type { CanOptions, Permission } from "./resource/can.ts";
export { createResource, type ResourceConfig, withId } from "./resource/create-resource.ts";
export type { HookContext, ResourceHooks } from "./resource/hooks.ts";
export { type MemberOfOptions, type MemberRule, memberOf } from "./resource/member-of.ts";
export { type OwnedByOptions, ownedBy } from "./resource/owned-by.ts";
export type { PluginAdmission, PluginRowRule, PluginRule, PluginRuleSite } from "./resource/plugin-access.ts";
export { admitPluginRows, authorizePluginRoute } from "./resource/plugin-access.ts";
export type { Pluralize } from "./resource/plural.ts";
export {
  // Named so that an app's declaration files (`declaration: true`) can write its resources' types.
  type FileBrand,
  type FileRefOptions,
  type FileRefSchema,
  fileRef,
  type ManyBrand,
  type OnDelete,
  type ReferenceBrand,
  type ReferenceOptions,
  type ReferenceSchema,
  type ReferencesManyOptions,
  type ReferencesManySchema,
  type ReverseOptions,
  references,
  referencesMany,
} from "./resource/references.ts";
export type {
  AggregatesOption,
  AnyResource,
  CreateInputOf,
  RecordOf,
  Resource,
  SortableOf,
  UpdateInputOf,
} from "./resource/types.ts";
export {
  assertPlainName,
  type ByteRange,
  type StorableFile,
  type StorageAdapter,
  type StoredFile,
  type StoreOptions,
  UnsafeFilenameError,
} from "./storage/adapter.ts";
export { LocalStorage } from "./storage/local/local-storage.ts";
export { MemoryStorage } from "./storage/memory/memory-storage.ts";
