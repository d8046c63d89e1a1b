// The plugin contract: a plain object that adds endpoints, tables, hooks and identity.

import type { Kysely } from "kysely";
import type { DialectName, DialectProfile } from "../db/dialect.ts";
import type { TableDefinition } from "../db/table-definition.ts";
import type { PageLimits } from "../query/list-query.ts";
import type { Condition } from "../query/where.ts";
import type { AnyResourceHooks, HookChain } from "../resource/hooks.ts";
import type { FileRecord } from "../resource/references.ts";
import type { FileRefSpec } from "../schema/field-marks.ts";
import type { Endpoint, EndpointContext } from "./endpoint.ts";
import type { RequestRecord } from "./http-handler.ts";
import type { Identify, MaybePromise, User } from "./identity.ts";
import type { Telemetry } from "./telemetry.ts";

/** What a plugin may read from the app it is added to. */
export interface PluginContext {
  readonly db: Kysely<any>;
  readonly dialect: DialectName;
  /** What the database can do and how it spells things (dates, booleans, exact equality…). */
  readonly profile: DialectProfile;
  /** Every plugin's hooks, for plugins whose own operations (an upload, say) other plugins record. */
  readonly hooks: HookChain;
  readonly basePath: string;
  readonly log: (message: string, error?: unknown) => void;
  /** What the app reports of its work (statements, plugins' counts and levels), for metrics(). */
  readonly telemetry: Telemetry;
  /**
   * Tells observers (`observeLater`) of the requests answered and not told yet: a plugin reading
   * what they made (a scrape) calls it first.
   */
  settleRequests(): void;
  /** How deep request JSON may nest (the app's `maxJsonDepth`). */
  readonly jsonDepth: number;
  /** Largest JSON request body, in bytes (the app's `bodyLimit`). */
  readonly bodyLimit: number;
  /** The app's `defaultLimit` and `maxLimit`: plugin lists page as resource lists do. */
  readonly listLimits: PageLimits;
  /**
   * The fields of a resource a caller may not read (its field rules), so a plugin that shows
   * records (audit entries) hides them too. Empty for a name that is not a resource.
   */
  hiddenFields(
    resource: string,
    caller: { user: User | null; headers: Headers },
  ): Promise<ReadonlySet<string>>;
  /** Whether the caller of `ctx` may read the record `id` of `resource` (its read rule, row rule included). */
  canReadRecord(resource: string, id: string, ctx: EndpointContext): Promise<boolean>;
  /** Of the records `ids` of `resource`, those the caller of `ctx` may read, in one query. */
  readableRecords(
    resource: string,
    ids: readonly string[],
    ctx: EndpointContext,
  ): Promise<ReadonlySet<string>>;
  /**
   * How the caller of `ctx` may read records of `resource` as they were (snapshots: an audit
   * entry's before or after) under its read rule, row rule included: the rule is asked once and
   * the sets it names read once, then each snapshot is judged in memory; a rule naming a record the
   * snapshot references judges no (`snapshotJudge` asks it).
   */
  snapshotReader(
    resource: string,
    ctx: EndpointContext,
  ): Promise<(record: Readonly<Record<string, unknown>>) => boolean>;
  /**
   * As `snapshotReader`, and a condition on a record a snapshot references (a rule through a
   * relation, `project.orgId`) asks that record, as it is now: each answer is a promise.
   */
  snapshotJudge(
    resource: string,
    ctx: EndpointContext,
  ): Promise<(record: Readonly<Record<string, unknown>>) => Promise<boolean>>;
  /**
   * The value `path` names from a record of `resource`: a field (`orgId`), or a field of a record
   * its references reach, one or two hops (`project.orgId`), read on `db` (pass a hook's `ctx.db`:
   * inside a write, its transaction). Undefined when the resource has no such path.
   */
  valueAt(
    resource: string,
    record: Readonly<Record<string, unknown>>,
    path: string,
    db: Kysely<any>,
  ): Promise<unknown>;
  /**
   * A plugin rule's checked condition with its sets of a resource's values (`memberOf`, `valuesOf`)
   * made SQL: give it to `admitPluginRows` as `sets`.
   */
  ruleSets(condition: Condition): Condition;
  /**
   * The app's resources: each one's name, the plural of its list path, and the fields of its
   * records (stored fields, `id` and timestamps included, and `referencesMany()` lists).
   */
  readonly resources: readonly {
    readonly name: string;
    readonly plural: string;
    readonly fields: readonly string[];
  }[];
  /**
   * What `app.can()` answers the caller of `ctx` about `operation` on `resource` (on the record
   * `id`, for a `body`): her own rules, asked without running the operation. An unknown resource
   * is not allowed.
   */
  can(
    operation: "create" | "read" | "update" | "delete" | "list",
    resource: string,
    ctx: EndpointContext,
    options?: { id?: string; body?: unknown },
  ): Promise<PluginPermission>;
}

/** `app.can()`'s answer, as plugins get it. */
export interface PluginPermission {
  allowed: boolean;
  /** Fields the caller may not read (on the record asked about, when one was). */
  hiddenFields: string[];
  /** Fields whose rules answer per record (asked without a record). */
  fieldsByRecord?: string[];
  /** Why not, when not allowed: the message the request would get. */
  reason?: string;
}

export interface CrudkitPlugin {
  /** Unique name, for example `audit`. */
  id: string;
  /** Endpoints under the app's basePath. */
  endpoints?:
    | readonly Endpoint<any, any, any, any>[]
    | ((app: PluginContext) => readonly Endpoint<any, any, any, any>[]);
  /** Tables the plugin needs; created by the same migration path as resources. */
  tables?: readonly TableDefinition[];
  /** Hooks run for every resource, after the resource's own hooks. */
  hooks?: AnyResourceHooks;
  /** Identifies callers; asked after the app's `identify` option. */
  identify?: Identify;
  /** Runs once, after migrations, before the first request. */
  init?: (app: PluginContext) => MaybePromise<void>;
  /** Answers reads and lists of resources over HTTP, after their access rules passed (cache()). */
  readCache?: ReadCache;
  /** Readiness of a service the plugin needs (Redis, say): rejects when it is down. `GET /health` asks it. */
  health?: () => Promise<unknown>;
  /**
   * Told of every HTTP request once it is answered: its route template, status, duration, caller.
   * Must not throw, and must be quick: it runs on every request.
   */
  observe?: (record: RequestRecord) => void;
  /**
   * As `observe`, for work whose result is read later (metrics(): at a scrape). Told at the end of
   * the event loop's turn the request was answered in, with the others answered in it: together
   * they cost about a third as much (core/answered-requests.ts), when every observer of the app
   * allows it. `settleRequests()` on the PluginContext tells it of those still waiting (before a read).
   */
  observeLater?: (record: RequestRecord) => void;
  /** Releases timers and connections; `app.close()` calls it. */
  close?: () => MaybePromise<void>;
  /**
   * Ends the plugin's long-lived responses (event streams): called when the Node server shuts down
   * and when the app closes, before it waits for the requests in flight.
   */
  endStreams?: () => MaybePromise<void>;
  /**
   * The server's connection limit (`serve({ maxConnections })`), for a plugin whose responses hold
   * a connection for long (streams) to leave room for ordinary requests.
   */
  reserveConnections?: (maxConnections: number) => void;
  /** Keeps uploaded files owned by the records whose `fileRef` fields hold them (upload()). */
  files?: OwnedFiles;
  /** How callers identify themselves, for the OpenAPI document (identity plugins). */
  securitySchemes?: Readonly<Record<string, Record<string, unknown>>>;
  /**
   * Runs around the endpoints it cares about (idempotency keys, rate limits), over HTTP and
   * `app.api` alike: asked once per endpoint when the app is built, it returns the handler to use
   * instead (calling `handler` within), or undefined to leave the endpoint alone. The first
   * plugin listed runs outermost.
   */
  wrap?: (
    endpoint: Endpoint,
    handler: Endpoint["handler"],
    app: PluginContext,
  ) => Endpoint["handler"] | undefined;
  /** Headers and answers the plugin adds to the endpoints it wraps, for the OpenAPI document. */
  describeWrapped?: (endpoint: Endpoint) => WrappedDoc | undefined;
}

/** What a wrapping plugin adds to an endpoint's description. */
export interface WrappedDoc {
  /** Request headers it reads, as `{ name: description }`. */
  requestHeaders?: Readonly<Record<string, string>>;
  /** Response headers it sends, as `{ name: description }`. */
  responseHeaders?: Readonly<Record<string, string>>;
  /** Error statuses it may answer (with the error body). */
  errors?: readonly number[];
}

/** The record, and its field, that holds a file. */
export interface FileOwner {
  resource: string;
  id: string;
  field: string;
}

/** What `crudkit gc` removed (or, with a dry run, would remove). */
export interface GarbageReport {
  files: { id: string; originalName: string; size: number; reason: "never attached" | "released" }[];
}

/**
 * Files owned by records: a plugin that stores files (upload()) lets records claim them. Claims
 * and releases run in the record's write transaction; the bytes go after it commits.
 */
export interface OwnedFiles {
  /**
   * The file exists, the caller may read it, its type and size fit `rules`, and no other record
   * holds it: it becomes `owner`'s. Otherwise a 400 naming `owner.field`.
   */
  claim(
    db: Kysely<any>,
    ctx: EndpointContext,
    fileId: string,
    owner: FileOwner,
    rules: FileRefSpec,
  ): Promise<void>;
  /** `owner` no longer holds the file: it is marked for collection. */
  release(db: Kysely<any>, fileId: string, owner: FileOwner): Promise<void>;
  /** After commit: removes released files' bytes, then their rows. What fails is left for `gc`. */
  collect(fileIds: readonly string[]): Promise<void>;
  /**
   * The file records the caller may read, for `expand`: those the plugin's read route would give
   * her (its rules, or the owning record's read rule where the plugin lets that decide).
   */
  read(ctx: EndpointContext, ids: readonly string[]): Promise<FileRecord[]>;
  /** Removes released files and files never attached that were uploaded before `olderThan`. */
  collectGarbage(options: { olderThan: Date; dryRun: boolean }): Promise<GarbageReport>;
}

/** A resource read or list that passed its access rule, as a caching plugin sees it. */
export interface CachedRead {
  resource: string;
  operation: "read" | "list";
  /** The record's id, or the list query in a normal form. */
  key: string;
  /**
   * The caller's row filter and hidden fields in a normal form ("" when she sees everything):
   * callers with different scopes never share an entry, whatever `varyBy` says.
   */
  scope: string;
  user: User | null;
  ctx: EndpointContext;
}

export interface ReadCache {
  /** Answers from the cache, or runs `load(read)` (hooks and the database) and may keep its result. */
  serve(read: CachedRead, load: (read: CachedRead) => Promise<unknown>): Promise<unknown>;
}
