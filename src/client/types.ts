// Types of the client, inferred from the server app's type alone (`createClient<typeof app>`).
// Only `import type` here: nothing of the server reaches the client bundle.

import type { DeleteResult, ExpandInput, ListQueryInput } from "../core/api-types.ts";
import type { ListResult } from "../query/list-query.ts";
import type { AggregateInput, AggregateResult } from "../resource/aggregate-types.ts";
import type { Expanded, ExpandPath } from "../resource/relation-types.ts";
import type {
  AnyObjectSchema,
  AnyResource,
  CreateInputOf,
  RecordOf,
  Resource,
  UpdateInputOf,
} from "../resource/types.ts";
import type { Batch } from "./batch.ts";
import type { CallOptions, ClientResult, FetchOptions, WriteOptions } from "./request.ts";
import type { RealtimeEvent, SubscribeOptions } from "./subscribe.ts";

/**
 * A server resource as this copy of crudkit-api types it, from its name, plural, schema and
 * timestamps: all the client reads. The server's own type also holds its rules and hooks, whose
 * contexts carry classes with private members (Kysely, the request cache); a client on its own
 * install (another version of crudkit-api or Kysely) would find those apart from its own.
 */
type ClientView<R> = R extends {
  readonly name: infer N extends string;
  readonly plural: infer P extends string;
  readonly schema: infer S extends AnyObjectSchema;
  readonly timestamps: infer T extends boolean;
}
  ? Resource<N, S, P, T>
  : never;
type ResourcesOf<App> = App extends { resources: readonly (infer R)[] } ? ClientView<R> : never;
type PluginsOf<App> = App extends { plugins: readonly (infer P)[] } ? P : never;
type ElementOf<T> = T extends readonly (infer X)[] ? X : never;
type EndpointsOf<P> = P extends { endpoints?: infer E }
  ? ElementOf<E extends (...args: any[]) => infer R ? R : E>
  : never;
type PluginEndpoints<App> = EndpointsOf<PluginsOf<App>>;

type MethodNameOf<E> = E extends { clientMethod?: infer N }
  ? N extends string
    ? string extends N
      ? never
      : N
    : never
  : never;
type InputOf<E> = E extends { $types?: { input: infer I } } ? I : never;
type OutputOf<E> = E extends { $types?: { output: infer O } } ? O : unknown;
type StaticPathOf<E> = E extends { path: infer P extends string }
  ? string extends P
    ? never
    : P extends `${string}:${string}`
      ? never
      : P
  : never;

interface IfMatchOption {
  /** The `etag` of the version this change is meant for (sent as `If-Match`). */
  ifMatch?: string;
}

interface OnConflictOption<R extends AnyResource> {
  /** A field declared unique on its own: when a record holds the body's value, it is updated instead. */
  onConflict?: Exclude<keyof RecordOf<R>, "id"> & string;
}

/** A write answered without its record (`Prefer: return=minimal`). */
type MinimalOptions = WriteOptions<null> & { returning: "minimal" };
type RepresentationOptions<T> = WriteOptions<T> & { returning?: "representation" };
/** `returning` known only at run time: the record, or null when it was "minimal". */
type EitherOptions<T> = WriteOptions<T | null> & { returning: "minimal" | "representation" };

export interface ResourceClient<R extends AnyResource, All extends AnyResource = R> {
  /** With `{ returning: "minimal" }` the server sends no record back: `data` is null, `etag` is set. */
  create(body: CreateInputOf<R>, options: MinimalOptions & OnConflictOption<R>): Promise<ClientResult<null>>;
  create(
    body: CreateInputOf<R>,
    options: EitherOptions<RecordOf<R>> & OnConflictOption<R>,
  ): Promise<ClientResult<RecordOf<R> | null>>;
  /** With `onConflict` (a unique field), the record already holding the body's value is updated instead. */
  create(
    body: CreateInputOf<R>,
    options?: RepresentationOptions<RecordOf<R>> & OnConflictOption<R>,
  ): Promise<ClientResult<RecordOf<R>>>;
  /** One record; `expand` adds related records beside it: `read(id, { expand: ["author"] })`. */
  read<const E extends ExpandPath<R, All> = never>(
    id: string,
    options?: CallOptions<Expanded<R, All, E>> & ExpandInput<E>,
  ): Promise<ClientResult<Expanded<R, All, E>>>;
  // Last, for `ReturnType`, which reads the last signature: the record without expansions.
  read(id: string, options?: CallOptions<RecordOf<R>>): Promise<ClientResult<RecordOf<R>>>;
  /** With `ifMatch` (a read's `etag`), only if the record is still that version: otherwise 412. */
  update(
    id: string,
    body: UpdateInputOf<R>,
    options: MinimalOptions & IfMatchOption,
  ): Promise<ClientResult<null>>;
  update(
    id: string,
    body: UpdateInputOf<R>,
    options: EitherOptions<RecordOf<R>> & IfMatchOption,
  ): Promise<ClientResult<RecordOf<R> | null>>;
  update(
    id: string,
    body: UpdateInputOf<R>,
    options?: RepresentationOptions<RecordOf<R>> & IfMatchOption,
  ): Promise<ClientResult<RecordOf<R>>>;
  /**
   * Creates the record with this id (201), or replaces it whole (200): the fields left out take
   * their defaults. With `ifMatch`, replaces only that version; otherwise 412.
   */
  upsert(
    id: string,
    body: CreateInputOf<R>,
    options?: CallOptions<RecordOf<R>> & IfMatchOption,
  ): Promise<ClientResult<RecordOf<R>>>;
  /** With `ifMatch` (a read's `etag`), only if the record is still that version: otherwise 412. */
  delete(id: string, options: MinimalOptions & IfMatchOption): Promise<ClientResult<null>>;
  delete(
    id: string,
    options: EitherOptions<DeleteResult> & IfMatchOption,
  ): Promise<ClientResult<DeleteResult | null>>;
  delete(
    id: string,
    options?: RepresentationOptions<DeleteResult> & IfMatchOption,
  ): Promise<ClientResult<DeleteResult>>;
  list<const E extends ExpandPath<R, All> = never>(
    query?: ListQueryInput<R, All> & ExpandInput<E>,
    options?: CallOptions<ListResult<Expanded<R, All, E>>>,
  ): Promise<ClientResult<ListResult<Expanded<R, All, E>>>>;
  list(
    query?: ListQueryInput<R, All>,
    options?: CallOptions<ListResult<RecordOf<R>>>,
  ): Promise<ClientResult<ListResult<RecordOf<R>>>>;
  /**
   * Live changes to the records you may list (and that match `where`), as they commit:
   * `const stop = client.product.subscribe({ where: { price: { gte: 10 } } }, (e) => …)`.
   * Reconnects by itself and resumes where it left off. Needs `realtime` on the server.
   */
  subscribe(
    query: { where?: ListQueryInput<R, All>["where"] } | undefined,
    onEvent: (event: RealtimeEvent<RecordOf<R>>) => void,
    options?: SubscribeOptions,
  ): () => void;
  /**
   * Every page of a list, by cursor: `for await (const page of client.product.pages({ where }))`.
   * A failed request throws its error.
   */
  pages<const E extends ExpandPath<R, All> = never>(
    query?: Omit<ListQueryInput<R, All>, "page" | "cursor"> & ExpandInput<E>,
    options?: CallOptions<ListResult<Expanded<R, All, E>>>,
  ): AsyncIterable<ListResult<Expanded<R, All, E>>>;
}

/**
 * One change of a record, as `client.<resource>.history(id)` lists it (the server's `audit()`).
 * Fields hidden from you are absent from `before`, `after` and `changes`; a field the server
 * redacts reads "[redacted]" whatever its type. All three are null for a version outside the rows
 * your read rule lets you see.
 */
export interface HistoryEntry<Rec> {
  /** The audit entry's id. */
  id: string;
  /** ISO 8601. */
  createdAt: string;
  operation: "create" | "update" | "delete";
  userId: string | null;
  /** `http`, `server` (`app.api`), `override` (`overrideAccess`), or `cascade` (followed another change). */
  source: "http" | "server" | "override" | "cascade";
  /** On update, each changed field: `{ price: { from: 10, to: 12 } }`. */
  changes: { [K in keyof Rec]?: { from: unknown; to: unknown } } | null;
  before: Partial<Rec> | null;
  after: Partial<Rec> | null;
}

/** A page of a history: `cursor` from a page's `nextCursor` or `prevCursor`, `limit` up to the server's maxLimit. */
export interface HistoryQuery {
  cursor?: string;
  limit?: number;
}

export interface HistoryClient<Rec> {
  /**
   * The record's changes, newest first, if you may read the record: 404 otherwise, as a read.
   * `const { data } = await client.product.history(id, { limit: 20 })`, then `data.pagination.nextCursor`.
   */
  history(
    id: string,
    query?: HistoryQuery,
    options?: CallOptions<ListResult<HistoryEntry<Rec>>>,
  ): Promise<ClientResult<ListResult<HistoryEntry<Rec>>>>;
}

export interface AggregateClient<R extends AnyResource, All extends AnyResource = R> {
  /**
   * Counts, sums, averages and extremes over the records you may list, by group:
   * `aggregate({ count: true, sum: ["price"], groupBy: ["status"], where })`.
   */
  aggregate<const I extends AggregateInput<R, All>>(
    input: I,
    options?: CallOptions<AggregateResult<R, I>>,
  ): Promise<ClientResult<AggregateResult<R, I>>>;
}

/** Whether a plugin of the app (audit) serves `/<resource>/:id/history`. */
type HistoryRoute<E> = E extends { path: infer P }
  ? 0 extends 1 & P
    ? false
    : P extends `/${string}/:id/history`
      ? true
      : false
  : false;
type HistoryOf<App, R extends AnyResource> =
  true extends HistoryRoute<PluginEndpoints<App>> ? HistoryClient<RecordOf<R>> : unknown;

/** A plugin endpoint's client method: one input object (path parameters, query and body fields). */
export type PluginMethod<Input, Output> = unknown extends Input
  ? (input?: Record<string, never>, options?: CallOptions<Output>) => Promise<ClientResult<Output>>
  : (input: Input, options?: CallOptions<Output>) => Promise<ClientResult<Output>>;

type PluginMethods<App> = {
  [E in PluginEndpoints<App> as MethodNameOf<E>]: PluginMethod<InputOf<E>, OutputOf<E>>;
};

export interface FetchCallOptions<T = unknown> extends CallOptions<T> {
  /** @default "GET", or "POST" when a body is given */
  method?: string;
  query?: Record<string, string | number | boolean | null | undefined>;
  body?: unknown;
}

type KnownPaths<App> = { [E in PluginEndpoints<App> as StaticPathOf<E>]: E };

/** Options for a declared endpoint: a query schema (defineEndpoint's `query`) types the query. */
type KnownFetchOptions<E> = E extends { $query?: infer Q }
  ? unknown extends Q
    ? FetchCallOptions<OutputOf<E>>
    : Omit<FetchCallOptions<OutputOf<E>>, "query"> & { query?: NonNullable<Q> }
  : FetchCallOptions<OutputOf<E>>;

export interface Fetch<App> {
  /** A plugin endpoint the server declares: the result (and a GET's query) is typed from it. */
  <P extends keyof KnownPaths<App> & string>(
    path: P,
    options?: KnownFetchOptions<KnownPaths<App>[P]>,
  ): Promise<ClientResult<OutputOf<KnownPaths<App>[P]>>>;
  /** Any other path under the base URL; say what arrives with `T`. */
  <T = unknown, P extends string = string>(
    path: P & (P extends keyof KnownPaths<App> ? never : unknown),
    options?: FetchCallOptions<T>,
  ): Promise<ClientResult<T>>;
}

export type Client<App> = {
  [R in ResourcesOf<App> as R["name"]]: ResourceClient<R, ResourcesOf<App>> & HistoryOf<App, R>;
} & {
  /** `client.products.aggregate(…)`: on the plural, as its path `/<plural>/aggregate`. */
  [R in ResourcesOf<App> as R["plural"]]: AggregateClient<R, ResourcesOf<App>>;
} & PluginMethods<App> & {
    $fetch: Fetch<App>;
    /** Several writes in one transaction, all or none: `$batch((b) => [b.order.create({…}), …])`. */
    $batch: Batch<ResourcesOf<App>>;
  };

export type { FetchOptions };
