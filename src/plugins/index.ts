// crudkit-api/plugins: the server plugins.

export { type ApiKeyOptions, apiKey } from "./api-key/api-key.ts";
export { type AuditedOperation, type AuditOptions, audit } from "./audit/audit.ts";
export type { AuditAccessContext, AuditAccessRule } from "./audit/audit-logs-route.ts";
export type { AuditEntry, AuditSource } from "./audit/audit-table.ts";
export {
  type BetterAuthLike,
  type BetterAuthOptions,
  type BetterAuthSession,
  betterAuth,
} from "./better-auth/better-auth.ts";
export { type CacheAccessContext, type CacheOptions, type CacheStats, cache } from "./cache/cache.ts";
export type { CacheLookup, CacheStore } from "./cache/cache-store.ts";
export { type MemoryStoreOptions, memoryStore } from "./cache/memory-store.ts";
export { type RedisLike, type RedisStoreOptions, redisStore } from "./cache/redis-store.ts";
export { type IdempotencyOptions, idempotency } from "./idempotency/idempotency.ts";
export { type IdempotencyRedis, redisIdempotencyStore } from "./idempotency/redis-store.ts";
export type { IdempotencyStore, KeyEntry, StoredAnswer } from "./idempotency/store.ts";
export { type JwtOptions, jwt } from "./jwt/jwt.ts";
export { type MetricsOptions, type MetricsPlugin, metrics } from "./metrics/metrics.ts";
export {
  type RateLimitBy,
  type RateLimitOptions,
  rateLimit,
} from "./rate-limit/rate-limit.ts";
export { type RateLimitRedis, redisRateLimitStore } from "./rate-limit/redis-store.ts";
export {
  type MemoryRateLimitOptions,
  memoryRateLimitStore,
  type RateLimitStore,
  type WindowCount,
} from "./rate-limit/store.ts";
export { extensionOf, type FileNaming, sanitizeFilename } from "./upload/file-naming.ts";
export type {
  UploadAccess,
  UploadAccessContext,
  UploadAccessRule,
  UploadedFileInfo,
  UploadOperation,
  UploadOptions,
  UploadRowRule,
} from "./upload/options.ts";
export type { ListFilesInput, UploadFileInput } from "./upload/routes.ts";
export { upload } from "./upload/upload.ts";
export type { UploadedFileRecord } from "./upload/uploaded-files-table.ts";
export type { ChangeEvent as WebhookChangeEvent } from "./webhooks/event-routing.ts";
export type { RetryOptions as WebhookRetryOptions } from "./webhooks/retry-schedule.ts";
export type { WebhookEndpoint, WebhooksOptions } from "./webhooks/webhook-options.ts";
export { type WebhookStatus, type WebhooksControl, webhooks } from "./webhooks/webhooks.ts";
