// crudkit-api/client: a typed client for a crudkit API, inferred from the server's type.

export { createClient } from "./client.ts";
export type {
  Callbacks,
  CallOptions,
  ClientError,
  ClientOptions,
  ClientResult,
  FetchOptions,
  RequestContext,
  WriteOptions,
} from "./request.ts";
export type { RealtimeEvent, SubscribeOptions } from "./subscribe.ts";
export type { Client, Fetch, FetchCallOptions, PluginMethod, ResourceClient } from "./types.ts";
