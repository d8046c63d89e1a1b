// crudkit(): assembles resources and plugins into one list of endpoints, served over HTTP by
// `handler` and in-process by `api`.

import type { Kysely } from "kysely";
import { type AdminOptions, admin } from "../admin/admin.ts";
import type { RealtimeEvent, SubscribeOptions } from "../client/subscribe.ts";
import type { AnsweredRequests } from "../core/answered-requests.ts";
import type { BatchApi, ResourceApi } from "../core/api-types.ts";
import { clientAddressOf, proxyTrust, type TrustProxy } from "../core/client-address.ts";
import { type ContextDeps, HttpContext } from "../core/context.ts";
import { type CorsOptions, createCors } from "../core/cors.ts";
import { credentialVary } from "../core/credential-headers.ts";
import type { Endpoint, EndpointContext } from "../core/endpoint.ts";
import { APIError, ConfigError } from "../core/errors.ts";
import { createHttpHandler, type RequestHandler } from "../core/http-handler.ts";
import { chainIdentify, type Identify } from "../core/identity.ts";
import { InFlight } from "../core/in-flight.ts";
import { DEFAULT_JSON_DEPTH } from "../core/input-checks.ts";
import type { Logger } from "../core/logger.ts";
import { checkOptionKeys, optionKeys } from "../core/option-keys.ts";
import type { CrudkitPlugin, PluginContext } from "../core/plugin.ts";
import { EndpointRouter } from "../core/router.ts";
import { autoMigrate } from "../db/auto-migrate.ts";
import { type Database, type DatabaseOptions, openDatabase } from "../db/database.ts";
import { hostOf } from "../db/database-url.ts";
import type { DialectProfile } from "../db/dialect.ts";
import type { StatementProbe } from "../db/observed-statements.ts";
import type { TableDefinition } from "../db/table-definition.ts";
import { buildOpenApi, type OpenApiDocument } from "../openapi/document.ts";
import type { ListLanguage } from "../openapi/list-language.ts";
import { serverUrl, withServer } from "../openapi/servers.ts";
import { COUNT_MODES, MAX_PAGE, MAX_SEARCH_LENGTH } from "../query/list-query.ts";
import { MAX_FILTER_TEXT, MAX_FILTER_VALUES, OPERATORS_BY_KIND, type Where } from "../query/where.ts";
import type { RealtimeOptions, RealtimeStats } from "../realtime/hub.ts";
import { realtimePlugin } from "../realtime/plugin.ts";
import type { Operation } from "../resource/access.ts";
import { withServerParts } from "../resource/admission.ts";
import {
  type CanOptions,
  can,
  canRead,
  type Permission,
  readableIds,
  snapshotJudge,
  snapshotReader,
} from "../resource/can.ts";
import { MAX_EXPAND_DEPTH } from "../resource/expand.ts";
import { hiddenSomewhere } from "../resource/field-access.ts";
import { chainHooks } from "../resource/hooks.ts";
import { junctionTable } from "../resource/many-fields.ts";
import { readRelations } from "../resource/relations.ts";
import { resourceEndpoints } from "../resource/resource-endpoints.ts";
import { resourceTable } from "../resource/resource-table.ts";
import { ruleIndexes } from "../resource/rule-indexes.ts";
import { pluginRuleSets, valueAt } from "../resource/rule-paths.ts";
import { createResourceRuntime, type Log, type ResourceRuntime } from "../resource/runtime.ts";
import type { AnyResource, RecordOf } from "../resource/types.ts";
import { withAggregateCalls } from "./aggregate-calls.ts";
import { appLogging } from "./app-logging.ts";
import { answeredRequestsOf, appTelemetry } from "./app-telemetry.ts";
import { type BatchOptions, batchEndpoints } from "./batch-endpoint.ts";
import { docsEndpoints } from "./docs-page.ts";
import { databaseCheck, type HealthCheck, healthEndpoints, replicasCheck } from "./health.ts";
import { buildApi, createServerCalls, pagesOf } from "./in-process-api.ts";
import { type AppInternals, INTERNALS } from "./internals.ts";
import { readRouter } from "./read-router.ts";
import { realtimeFacade } from "./realtime-facade.ts";
import { rpcEndpoint } from "./rpc.ts";
import { createStartup } from "./startup.ts";

export interface CrudkitOptions<
  Resources extends readonly AnyResource[],
  Plugins extends readonly CrudkitPlugin[],
> {
  resources: Resources;
  plugins?: Plugins;
  /** `{ provider: "sqlite" | "postgres" | "mysql", url }`, or a Kysely instance. */
  database: DatabaseOptions;
  /** Prefix of every route. @default "/api" */
  basePath?: string;
  /** Finds the caller of a request; asked before identity plugins. */
  identify?: Identify;
  /** Create missing tables, columns and indexes before the first request. @default false */
  autoMigrate?: boolean;
  /** Largest accepted request body, in bytes. @default 1048576 */
  bodyLimit?: number;
  /** How deep request JSON may nest (bodies, JSON fields, upload metadata); deeper is a 400. @default 32 */
  maxJsonDepth?: number;
  /** Page size when a list names none. @default 10 */
  defaultLimit?: number;
  /** Largest page size; larger requests are clamped. @default 100 */
  maxLimit?: number;
  /**
   * PostgreSQL and MySQL/MariaDB: milliseconds a statement may run before the server stops it;
   * the request then answers 503 `STATEMENT_TIMEOUT`. 0 for no limit. Not applied to a Kysely
   * instance or dialect you pass in. @default 10000
   */
  statementTimeout?: number;
  /**
   * Where errors the caller must not see are reported: every one, as it happens. The default
   * writes them to stderr through a flood guard: a message that repeats (the database away under
   * load) is written when it starts, summed up every 5 s while it goes on, and once when it stops;
   * a stack once per distinct error. @default stderr, flood-guarded
   */
  log?: Log;
  /**
   * A structured logger with pino's methods (`pino()` fits as it is): errors go to its `error`
   * (flood-guarded, the cause under `err`) unless `log` is given, and with `requestLogs` a line
   * per request to its `info`. @default with `requestLogs`, JSON lines to stderr that never block
   */
  logger?: Logger;
  /**
   * One line per request, at `info`: method, route template, status, duration, bytes, request id,
   * user id, resource and operation, and the error code of an error answer; nothing the caller
   * sent (no body, query value, header or cookie). @default false
   */
  requestLogs?: boolean;
  /**
   * Spans through `@opentelemetry/api` for each request, its rules, hooks, plugins' work and SQL
   * statements: nothing is recorded until the app registers an OpenTelemetry SDK (see "Operating
   * crudkit"). `false` starts no span even then. @default true
   */
  tracing?: boolean;
  /**
   * The OpenAPI 3.1 document at `GET <basePath>/openapi.json` (and `app.openapi()`); `false` leaves
   * the route out. @default { title: "crudkit API", version: "1.0.0" }
   */
  openapi?: false | { title?: string; version?: string };
  /**
   * An API reference page at `GET <basePath>/docs`, made by Scalar from the OpenAPI document and
   * served from the `@scalar/api-reference` package (install it; no CDN). @default false
   */
  docs?: boolean;
  /**
   * The admin page at `<basePath>/admin`: browse, filter and edit every resource under the
   * signed-in caller's own rules, served from the package's files (no CDN). It reads the OpenAPI
   * document, so `openapi` stays on. @default false
   * @example admin: { title: "Shop admin" }
   */
  admin?: boolean | AdminOptions;
  /**
   * Let browsers on other origins call the API: preflights answer 204, and answers carry
   * `Access-Control-Allow-Origin` for an allowed origin (and `Vary: Origin`). @default none
   * @example cors: { origin: ["https://app.example.com"], credentials: true }
   */
  cors?: CorsOptions;
  /**
   * A weak `ETag` on every page of records (resource lists, the audit log, histories, uploaded
   * files), taken from the caller, the query and the page; a GET or HEAD whose `If-None-Match`
   * names it is a 304 with no body. Off by default: hashing each page costs list throughput (the
   * bench measures how much).
   * @default false
   */
  listETags?: boolean;
  /**
   * The reverse proxies in front of the app, whose `X-Forwarded-For` names the client: their
   * addresses or CIDR ranges (`["127.0.0.1"]`, `["loopback", "10.0.0.0/8"]`), `true` for any (only
   * when nothing else can reach the app), or a function. The chain is read from the right, past
   * trusted proxies only, so a client cannot choose its address. Audit entries, rate limits and
   * idempotency keys all use the address found. @default false (the socket's address)
   */
  trustProxy?: TrustProxy;
  /**
   * Live changes over Server-Sent Events: `GET <basePath>/<plural>/events` (and the list's URL
   * asked with `Accept: text/event-stream`) streams creates, updates and deletes, each checked for
   * each subscriber against her list rule, filter and field rules. `true` for one instance; give a
   * `bus` (redisBus, postgresBus) when several instances serve the app. @default off
   */
  realtime?: boolean | RealtimeOptions;
  /**
   * `POST <basePath>/batch`: up to `maxRequests` creates, updates, upserts and deletes in one
   * transaction, all or none (`false` turns the route off). @default { maxRequests: 50 }
   */
  batch?: false | BatchOptions;
}

export interface CrudkitApp<R extends AnyResource = AnyResource, P extends CrudkitPlugin = CrudkitPlugin> {
  /** Web-standard request handler: `(Request) => Promise<Response>`; hosts may pass the client's address. */
  handler: RequestHandler;
  /** The same endpoints, called from server code. */
  api: ResourceApi<R> & BatchApi;
  /**
   * Settles when migrations and plugin `init` are done; the handler waits for it by itself. An
   * unreachable database rejects it with a `DatabaseUnreachableError` (code, host, cause).
   */
  ready: Promise<void>;
  /**
   * Runs startup again after `ready` rejected because the database could not be reached, from
   * the step that failed; resolves once the app serves. `serve()` calls it with backoff.
   */
  retryStartup(): Promise<void>;
  readonly db: Kysely<any>;
  readonly basePath: string;
  readonly resources: readonly R[];
  readonly plugins: readonly P[];
  readonly endpoints: readonly Endpoint[];
  /**
   * Asks a resource's rules whether `user` may run an operation, without running it: whether it is
   * allowed, the rule's row filter and the fields hidden from her. With `id`, the record must
   * exist within her rows; with `body`, the field write rules are asked too.
   *
   * @example
   * const { allowed } = await app.can("delete", "order", { user, id });
   */
  can(operation: Operation, resource: R["name"], options: CanOptions): Promise<Permission>;
  /** The OpenAPI 3.1 document of every endpoint, built from the same list as the router. */
  openapi(): OpenApiDocument;
  /** Open event streams and dropped slow clients on this instance (with `realtime`). */
  readonly realtime: AppRealtime<R> | undefined;
  /**
   * The `webhooks()` plugin given in `plugins` (its `status`, `replay`, `flush`), or undefined.
   *
   * @example
   * const shop = crudkit({
   *   database: { provider: "sqlite", url: "file:./data/shop.db" },
   *   resources: [product],
   *   plugins: [webhooks({ endpoints: [{ id: "erp", url: "https://erp.example.com/hooks", secret: process.env.ERP_SECRET!, events: ["product.*"] }] })],
   * });
   * for (const queue of await shop.webhooks.status()) console.log(queue.endpoint, queue.pending, queue.dead);
   */
  readonly webhooks: PluginWithId<P, "webhooks">;
  /** The `audit()` plugin given in `plugins` (its `verify`, `prune`), or undefined. */
  readonly audit: PluginWithId<P, "audit">;
  /** Ends every event stream with a final `close` event (`serve().close()` calls it first). */
  endStreams(): Promise<void>;
  /** Keeps some of a server's connections for ordinary requests: event streams get the rest (serve() calls it). */
  reserveConnections(maxConnections: number): void;
  /**
   * Closes the plugins, then the database. Requests that arrive afterwards answer 503. Serving
   * hosts drain their in-flight requests first (`serve()` does). Calling it again waits for the
   * first call.
   */
  close(): Promise<void>;
}

/** The plugin of `P` whose id is `Id`, or undefined when the app has none. */
export type PluginWithId<P, Id extends string> = [Extract<P, { id: Id }>] extends [never]
  ? undefined
  : Extract<P, { id: Id }>;

/** Realtime from server code: the same streams, rules and filters as over HTTP. */
export interface AppRealtime<R extends AnyResource> {
  /** Open event streams and dropped slow clients on this instance. */
  stats(): RealtimeStats;
  /**
   * Live changes to `resource` that the caller named by `headers` may list (and that match
   * `where`), for server code: a worker, a webhook sender. Returns the function that stops it.
   *
   * @example
   * const stop = app.realtime!.subscribe("order", { headers: { "x-api-key": key } }, (e) => notify(e.record));
   */
  subscribe<N extends R["name"]>(
    resource: N,
    options: { headers?: HeadersInit; where?: Where<RecordOf<Extract<R, { name: N }>>> },
    onEvent: (event: RealtimeEvent<RecordOf<Extract<R, { name: N }>>>) => void,
    callbacks?: Omit<SubscribeOptions, "headers">,
  ): () => void;
}

/** How long close() lets running requests finish before it closes the database under them. */
const CLOSE_GRACE_MS = 10_000;

const CRUDKIT_OPTION_KEYS = optionKeys<CrudkitOptions<readonly AnyResource[], readonly CrudkitPlugin[]>>()(
  "resources plugins database basePath identify autoMigrate bodyLimit maxJsonDepth defaultLimit maxLimit statementTimeout log logger requestLogs tracing openapi docs admin cors listETags trustProxy realtime batch",
);

/**
 * Assembles resources and plugins into one API: `handler` serves it over HTTP (a Web-standard
 * `(Request) => Promise<Response>`), `api` calls the same endpoints from server code.
 *
 * @example
 * const app = crudkit({
 *   database: { provider: "sqlite", url: "file:./data/app.db" },
 *   autoMigrate: true,
 *   resources: [product],
 *   plugins: [apiKey({ keys: { [process.env.ADMIN_KEY!]: { id: "admin", roles: ["admin"] } } })],
 * });
 * await serve(app, { port: 3000 });          // or: app.handler(request), app.api.listProducts()
 */
export function crudkit<
  const Resources extends readonly AnyResource[],
  const Plugins extends readonly CrudkitPlugin[] = readonly [],
>(options: CrudkitOptions<Resources, Plugins>): CrudkitApp<Resources[number], Plugins[number]> {
  checkOptionKeys(options, CRUDKIT_OPTION_KEYS, "crudkit()");
  const basePath = normalizeBasePath(options.basePath ?? "/api");
  const logging = appLogging(options);
  const { log } = logging;
  const given: readonly CrudkitPlugin[] = options.plugins ?? [];
  checkNames(options.resources, given);
  const observed = appTelemetry({ tracing: options.tracing !== false });
  const { database, jsonDepth } = openAppDatabase(options, log, observed.probe);
  observed.bind(database);
  const listLimits = { defaultLimit: options.defaultLimit ?? 10, maxLimit: options.maxLimit ?? 100 };
  const runtimes = new Map<string, ResourceRuntime>();
  const identify = chainIdentify(
    [options.identify, ...given.map((p) => p.identify)].filter((i) => i !== undefined),
  );
  // Realtime is a plugin like the others, after them (its hooks hear a change last).
  const realtime = options.realtime
    ? realtimePlugin(options.realtime, { runtimes, identify, log, likeFolds: database.profile.likeFolds })
    : undefined;
  const plugins = withPages(options, given, realtime);
  const relations = readRelations(options.resources);
  const files = plugins.find((p) => p.files)?.files;
  if (relations.ownsFiles && !files)
    throw new ConfigError("fileRef fields hold uploaded files: add the upload() plugin to the app.");
  const answered = answeredRequestsOf(logging.observe, plugins);
  const pluginContext = pluginContextOf(database, runtimes, {
    basePath,
    log,
    telemetry: observed.telemetry,
    settleRequests: () => answered?.settle(),
    hooks: chainHooks(plugins.map((p) => p.hooks)),
    jsonDepth,
    bodyLimit: options.bodyLimit ?? 1024 * 1024,
    listLimits,
  });
  const { endpoints, tables, listNames } = assembleResources(options.resources, runtimes, {
    database,
    pluginHooks: plugins.flatMap((p) => (p.hooks ? [p.hooks] : [])),
    ...listLimits,
    readCache: readCacheOf(plugins),
    log,
    relations,
    files,
    runtimeOf: (name) => runtimes.get(name)!,
  });
  // Before the plugins wrap the endpoints (an Idempotency-Key, rate limits); routes at request time.
  const route = (method: string, path: string) => router.match(method, basePath + path);
  endpoints.push(...batchEndpoints(options.batch, { route, log, driverErrors: database.profile.errors }));
  addPlugins(plugins, pluginContext, endpoints, tables);
  const rpc = rpcEndpoint(endpoints);
  if (rpc) endpoints.push(rpc);
  const openapi = openApiOf(options, { basePath, relations, endpoints, rpc, plugins, runtimes, listLimits });
  endpoints.push(...metaEndpoints(options, basePath, openapi));
  let closing: Promise<void> | undefined;
  endpoints.push(...healthEndpoints(healthChecksOf(database, plugins), log, () => startup.open));

  const router = new EndpointRouter(basePath);
  for (const endpoint of endpoints) router.add(basePath + endpoint.path, endpoint);

  const deps: ContextDeps = {
    db: database.kysely,
    identify,
    bodyLimit: pluginContext.bodyLimit,
    jsonDepth,
    clientAddress: clientAddressOf(options.trustProxy),
    driverErrors: database.profile.errors,
    serverCalls: createServerCalls(),
    reads: readsOf(database, options.database),
  };
  const startup = createStartup(
    startupSteps(options.autoMigrate === true, { database, tables, log, plugins, pluginContext }),
    databaseHost(options.database),
    log,
    database.profile.errors,
  );
  // After close() began, requests get a clear 503 instead of a destroyed driver's error.
  const gate = () => {
    if (closing)
      throw new APIError("SERVICE_UNAVAILABLE", "The service is shutting down; try again shortly.");
    return startup.gate();
  };
  const inFlight = new InFlight();
  const api = buildApi(endpoints, { deps, startup: gate, log, inFlight, tracing: options.tracing !== false });
  const http = { ...httpOf(options, plugins), answered };
  const handler = createHttpHandler({ router, deps, startup: gate, log, inFlight, ...http });
  withListPagesAndAggregates(api, listNames, endpoints);
  return {
    handler,
    api: api as ResourceApi<Resources[number]> & BatchApi,
    ready: startup.ready,
    retryStartup: () => startup.retry(),
    db: database.kysely,
    basePath,
    resources: options.resources,
    plugins: given as Plugins,
    endpoints,
    openapi,
    realtime: realtime && realtimeFacade(realtime.hub, runtimes, basePath, handler),
    webhooks: given.find((p) => p.id === "webhooks") as never,
    audit: given.find((p) => p.id === "audit") as never,
    endStreams: () => endStreams(plugins),
    reserveConnections: (maxConnections: number) => {
      for (const plugin of plugins) plugin.reserveConnections?.(maxConnections);
    },
    async can(operation, resource, canOptions) {
      const runtime = runtimes.get(resource);
      if (!runtime) throw new ConfigError(`app.can(): there is no resource named "${String(resource)}".`);
      await startup.ready;
      return can(runtime, operation, canOptions);
    },
    close() {
      closing ??= closeApp(inFlight, plugins, database, answered).finally(() => logging.close());
      return closing;
    },
    [INTERNALS]: { database, tables, files, ownsFiles: relations.ownsFiles } satisfies AppInternals,
  } as CrudkitApp<Resources[number], Plugins[number]>;
}

/** `list<Plural>Pages` for each list, and `aggregate<Plural>` taking its request at the top level. */
function withListPagesAndAggregates(
  api: ReturnType<typeof buildApi>,
  listNames: readonly string[],
  endpoints: readonly Endpoint[],
): void {
  for (const name of listNames) api[`${name}Pages`] = pagesOf(api[name]!) as never;
  withAggregateCalls(api, endpoints);
}

/** The read cache of the one plugin that keeps one (the cache plugin), if any. */
function readCacheOf(plugins: readonly CrudkitPlugin[]) {
  const caches = plugins.flatMap((p) => (p.readCache ? [p.readCache] : []));
  if (caches.length > 1) throw new ConfigError("Only one plugin may cache reads; two were given.");
  return caches[0];
}

function healthChecksOf(database: Database, plugins: readonly CrudkitPlugin[]): HealthCheck[] {
  return [
    databaseCheck(database.kysely),
    ...(database.replicas ? [replicasCheck(database.replicas)] : []),
    ...plugins.flatMap((p) => (p.health ? [{ name: p.id, check: p.health }] : [])),
  ];
}

/** How the HTTP handler answers beyond routing: CORS, list validators, `Vary` for anonymous answers. */
function httpOf(
  options: CrudkitOptions<readonly AnyResource[], readonly CrudkitPlugin[]>,
  plugins: readonly CrudkitPlugin[],
) {
  return {
    cors: options.cors ? createCors(options.cors) : undefined,
    listETags: options.listETags,
    tracing: options.tracing !== false,
    vary: credentialVary(plugins, options.identify !== undefined),
  };
}

/**
 * How deep request JSON may nest on this engine: the option (32 by default), and never deeper than
 * what the engine stores once crudkit wraps it. A body holds a field's value one level down, and an
 * audit entry's `changes` two (`{ field: { from, to } }`), so the request may nest one level less
 * than the engine's JSON columns: 30 on MariaDB, whose `json_valid` refuses 32.
 */
function jsonDepthFor(option: number | undefined, profile: DialectProfile): number {
  const engine = profile.jsonNestingLimit === undefined ? undefined : profile.jsonNestingLimit - 1;
  const depth = option ?? Math.min(DEFAULT_JSON_DEPTH, engine ?? DEFAULT_JSON_DEPTH);
  if (!Number.isInteger(depth) || depth < 1)
    throw new ConfigError("maxJsonDepth must be a positive integer.");
  if (engine !== undefined && depth > engine)
    throw new ConfigError(
      `maxJsonDepth ${depth} is deeper than ${profile.name === "mysql" ? "MySQL/MariaDB" : profile.name} can store once crudkit wraps it (audit entries): ${engine} at most.`,
    );
  return depth;
}

/** `host:port` of the configured database, for startup errors; never the password. */
function databaseHost(options: DatabaseOptions): string {
  const url = (options as { url?: unknown } | null)?.url;
  const provider = (options as { provider?: unknown } | null)?.provider;
  if (typeof url !== "string" || provider === "sqlite" || provider === undefined) return "the database";
  return hostOf(url);
}

function wrapped(endpoint: Endpoint, plugins: readonly CrudkitPlugin[], app: PluginContext): Endpoint {
  let handler = endpoint.handler;
  for (let i = plugins.length - 1; i >= 0; i--)
    handler = plugins[i]!.wrap?.(endpoint, handler, app) ?? handler;
  return handler === endpoint.handler ? endpoint : { ...endpoint, handler };
}

function normalizeBasePath(path: string): string {
  if (path === "" || path === "/") return "";
  if (!/^\/[A-Za-z0-9._~\-/]*$/.test(path))
    throw new ConfigError(`basePath "${path}" must start with "/" and be a plain path.`);
  return path.endsWith("/") ? path.slice(0, -1) : path;
}

function checkUnique(names: readonly string[], what: string): void {
  const seen = new Set<string>();
  for (const name of names) {
    if (seen.has(name)) throw new ConfigError(`Two ${what}s are named "${name}".`);
    seen.add(name);
  }
}

/**
 * A bus that would LISTEN through the app's pooler in transaction mode hears nothing: the pooler
 * gives the session's server connection to others between statements. Refused at construction.
 */
function refusePooledSession(database: unknown, realtime: unknown): void {
  const { url, directUrl } = (database ?? {}) as { url?: unknown; directUrl?: unknown };
  const bus =
    typeof realtime === "object"
      ? (realtime as { bus?: { listensThrough?(url: string): boolean } } | null)?.bus
      : undefined;
  if (typeof directUrl === "string" && typeof url === "string" && bus?.listensThrough?.(url) === true)
    throw new ConfigError(
      "realtime's postgresBus({ url }) is database.url, a pooler in transaction mode (database.directUrl is set): LISTEN needs a session of its own. Give postgresBus the directUrl.",
    );
}

/** With read replicas, where each request's reads run (read-router.ts). */
function readsOf(database: Database, options: DatabaseOptions) {
  if (!database.replicas) return undefined;
  const maxLag = (options as { maxLag?: number }).maxLag ?? 5;
  return readRouter(database.kysely, database.replicas, database.profile.errors, maxLag);
}

/** The app's database, opened, and how deep its request JSON may nest. */
function openAppDatabase(
  options: Pick<
    CrudkitOptions<readonly AnyResource[], readonly CrudkitPlugin[]>,
    "database" | "statementTimeout" | "maxJsonDepth" | "realtime"
  >,
  log: Log,
  probe: StatementProbe,
): { database: Database; jsonDepth: number } {
  const statementTimeout = options.statementTimeout ?? 10_000;
  if (!(Number.isFinite(statementTimeout) && statementTimeout >= 0))
    throw new ConfigError("statementTimeout must be a number of milliseconds, 0 for no limit.");
  refusePooledSession(options.database, options.realtime);
  const database = openDatabase(options.database, log, statementTimeout, probe);
  try {
    return { database, jsonDepth: jsonDepthFor(options.maxJsonDepth, database.profile) };
  } catch (error) {
    void database.kysely.destroy().catch(() => {});
    void database.session?.destroy().catch(() => {});
    void database.replicas?.close();
    throw error;
  }
}

/** The given plugins, then the admin page's (`admin`), then realtime's (its hooks hear a change last). */
function withPages(
  options: Pick<CrudkitOptions<readonly AnyResource[], readonly CrudkitPlugin[]>, "admin" | "openapi">,
  given: readonly CrudkitPlugin[],
  realtime: CrudkitPlugin | undefined,
): readonly CrudkitPlugin[] {
  if (options.admin && options.openapi === false)
    throw new ConfigError("admin reads the OpenAPI document; openapi cannot be false.");
  const adminPage = options.admin ? [admin(options.admin === true ? {} : options.admin)] : [];
  return [...given, ...adminPage, ...(realtime ? [realtime] : [])];
}

/** What plugins are given of the app: its database, limits, and the resources' rules by name. */
function pluginContextOf(
  database: Database,
  runtimes: ReadonlyMap<string, ResourceRuntime>,
  given: Pick<
    PluginContext,
    "basePath" | "log" | "telemetry" | "settleRequests" | "hooks" | "jsonDepth" | "bodyLimit" | "listLimits"
  >,
): PluginContext {
  return {
    db: database.kysely,
    dialect: database.dialect,
    profile: database.profile,
    ...given,
    canReadRecord: async (resource, id, ctx) => {
      const runtime = runtimes.get(resource);
      return runtime ? canRead(runtime, id, ctx) : false;
    },
    readableRecords: async (resource, ids, ctx) => {
      const runtime = runtimes.get(resource);
      return runtime ? readableIds(runtime, ids, ctx) : new Set();
    },
    snapshotReader: async (resource, ctx) => {
      const runtime = runtimes.get(resource);
      // A plugin's own records (`uploaded_file`) have no resource rules here: the plugin's decide.
      return runtime ? snapshotReader(runtime, ctx) : () => true;
    },
    snapshotJudge: async (resource, ctx) => {
      const runtime = runtimes.get(resource);
      return runtime ? snapshotJudge(runtime, ctx) : async () => true;
    },
    valueAt: async (resource, record, path, db) => {
      const runtime = runtimes.get(resource);
      return runtime ? valueAt(runtime, record, path, db) : undefined;
    },
    ruleSets: (condition) => {
      const any = runtimes.values().next().value;
      return any ? pluginRuleSets(condition, any) : condition;
    },
    // Read when asked: the runtimes are made after the plugins are given this context.
    get resources() {
      return [...runtimes.values()].map(({ resource }) => ({
        name: resource.name,
        plural: resource.plural,
        fields: [...resource.fields, ...resource.many].map((field) => field.name),
      }));
    },
    can: async (operation, resource, ctx, asked = {}) => {
      const runtime = runtimes.get(resource);
      if (!runtime)
        return { allowed: false, hiddenFields: [], reason: `There is no resource named "${resource}".` };
      const { where: _rows, ...answer } = await can(runtime, operation, {
        user: await ctx.getUser(),
        headers: ctx.headers,
        ...asked,
      });
      // The rule's rows stay on the server: a plugin's answer says whether, not which.
      return answer;
    },
    hiddenFields: async (resource, { user, headers }) => {
      const runtime = runtimes.get(resource);
      if (!runtime) return new Set();
      const access = withServerParts(runtime, { user, headers, operation: "read", resource });
      // Plugins show records they keep (audit entries) in memory: a field read on some rows only is left out.
      return hiddenSomewhere(await runtime.fieldPolicy.hidden(access));
    },
  };
}

/** What the list parser enforces, for the document (openapi/ sits below query/ and resource/). */
const LIST_LANGUAGE: ListLanguage = {
  operators: OPERATORS_BY_KIND,
  countModes: COUNT_MODES,
  maxPage: MAX_PAGE,
  maxSearchLength: MAX_SEARCH_LENGTH,
  maxFilterValues: MAX_FILTER_VALUES,
  maxFilterText: MAX_FILTER_TEXT,
  maxExpandDepth: MAX_EXPAND_DEPTH,
};

/** The OpenAPI document of the app's endpoints, built on first use. */
function openApiOf(
  options: CrudkitOptions<readonly AnyResource[], readonly CrudkitPlugin[]>,
  parts: {
    basePath: string;
    relations: ReturnType<typeof readRelations>;
    endpoints: readonly Endpoint[];
    rpc: Endpoint | undefined;
    plugins: readonly CrudkitPlugin[];
    runtimes: ReadonlyMap<string, ResourceRuntime>;
    listLimits: { defaultLimit: number; maxLimit: number };
  },
): () => OpenApiDocument {
  const { basePath, relations, endpoints, rpc, plugins, runtimes } = parts;
  let document: OpenApiDocument | undefined;
  return () =>
    (document ??= buildOpenApi({
      basePath,
      resources: options.resources,
      relations,
      listRules: (resource) => runtimes.get(resource)!.listRules,
      language: LIST_LANGUAGE,
      pageLimits: parts.listLimits,
      endpoints: endpoints.filter((e) => e !== rpc),
      securitySchemes: Object.assign({}, ...plugins.map((p) => p.securitySchemes ?? {})),
      wrappedDocs: (endpoint) => plugins.flatMap((p) => p.describeWrapped?.(endpoint) ?? []),
      ...(options.openapi || {}),
    }));
}

/** `GET /openapi.json` (unless `openapi: false`) and the docs page (`docs: true`). */
function metaEndpoints(
  options: Pick<
    CrudkitOptions<readonly AnyResource[], readonly CrudkitPlugin[]>,
    "docs" | "openapi" | "trustProxy"
  >,
  basePath: string,
  openapi: () => OpenApiDocument,
): Endpoint[] {
  // X-Forwarded-Host and -Proto name the origin only when the socket's peer is a trusted proxy.
  const trusted = proxyTrust(options.trustProxy);
  const forwarded = (ctx: EndpointContext) =>
    trusted !== undefined &&
    ctx instanceof HttpContext &&
    ctx.socketAddress !== undefined &&
    trusted(ctx.socketAddress, 0);
  const endpoints: Endpoint[] = [];
  if (options.docs) {
    if (options.openapi === false)
      throw new ConfigError("docs: true shows the OpenAPI document; openapi cannot be false.");
    endpoints.push(...docsEndpoints(basePath));
  }
  if (options.openapi !== false)
    endpoints.push({
      method: "GET",
      path: "/openapi.json",
      doc: {
        summary: "This document",
        tags: ["meta"],
        public: true,
        unlisted: true,
        response: { type: "object" },
      },
      // The paths start after the basePath; the server URL is where this request came to, so a
      // shared cache must keep one document per origin (Vary).
      handler: async (ctx) =>
        new Response(
          JSON.stringify(withServer(openapi(), serverUrl(ctx.request, basePath, forwarded(ctx)))),
          {
            headers: {
              "content-type": "application/json",
              vary: "Host, X-Forwarded-Host, X-Forwarded-Proto",
            },
          },
        ),
    });
  return endpoints;
}

/** Each resource's runtime, endpoints and table. */
function assembleResources(
  resources: readonly AnyResource[],
  runtimes: Map<string, ResourceRuntime>,
  deps: Parameters<typeof createResourceRuntime>[1],
) {
  const endpoints: Endpoint[] = [];
  const tables: TableDefinition[] = [];
  const listNames: string[] = [];
  const indexesOfRules = ruleIndexes(resources, deps.relations);
  for (const resource of resources) {
    const runtime = createResourceRuntime(resource, deps);
    runtimes.set(resource.name, runtime);
    const own = resourceEndpoints(runtime);
    endpoints.push(...own);
    // list<Plural> (and its alias): each gets list<Plural>Pages on app.api.
    for (const e of own)
      if (e.method === "GET" && e.path === `/${resource.plural}`)
        for (const name of [e.operationName, ...(e.operationAliases ?? [])]) if (name) listNames.push(name);
    tables.push(resourceTable(resource, indexesOfRules.get(resource.name)));
  }
  // The junction tables of lists of ids, after every table their foreign keys point at.
  for (const resource of resources)
    for (const field of resource.many) tables.push(junctionTable(resource, field));
  return { endpoints, tables, listNames };
}

/** Plugins' endpoints and tables added; then every endpoint wrapped by the wrapping plugins. */
function addPlugins(
  plugins: readonly CrudkitPlugin[],
  context: PluginContext,
  endpoints: Endpoint[],
  tables: TableDefinition[],
): void {
  for (const plugin of plugins) {
    const added =
      typeof plugin.endpoints === "function" ? plugin.endpoints(context) : (plugin.endpoints ?? []);
    endpoints.push(...added);
    tables.push(...(plugin.tables ?? []));
  }
  checkUnique(
    tables.map((t) => t.name),
    "table",
  );
  // Wrapping plugins (idempotency, rate limits) go around each endpoint, the first listed outermost.
  for (let i = 0; i < endpoints.length; i++) endpoints[i] = wrapped(endpoints[i]!, plugins, context);
}

/** What startup runs, in order: migrations, then each plugin's init (realtime's starts its bus). */
function startupSteps(
  autoMigrating: boolean,
  app: {
    database: Database;
    tables: readonly TableDefinition[];
    log: Log;
    plugins: readonly CrudkitPlugin[];
    pluginContext: PluginContext;
  },
): (() => Promise<unknown> | unknown)[] {
  const { database, tables, log, plugins, pluginContext } = app;
  return [
    ...(autoMigrating ? [() => autoMigrate(database, tables, log)] : []),
    ...plugins.flatMap((plugin) => (plugin.init ? [() => plugin.init!(pluginContext)] : [])),
  ];
}

/** app.close(): new requests are refused from here (see startup); those running finish first. */
async function closeApp(
  inFlight: InFlight,
  plugins: readonly CrudkitPlugin[],
  database: Database,
  answered: AnsweredRequests | undefined,
): Promise<void> {
  // Streams end first: they would hold the wait for requests in flight to its limit.
  await endStreams(plugins);
  await inFlight.settled(CLOSE_GRACE_MS);
  // The requests answered last are told to their observers (the log, metrics) before they close.
  answered?.settle();
  for (const plugin of plugins) await plugin.close?.();
  await database.readers?.close();
  await database.replicas?.close();
  await database.session?.destroy();
  await database.kysely.destroy();
}

/** Ends every plugin's long-lived responses (event streams). */
async function endStreams(plugins: readonly CrudkitPlugin[]): Promise<void> {
  for (const plugin of plugins) await plugin.endStreams?.();
}

/** Resource names and plugin ids are each unique. */
function checkNames(resources: readonly AnyResource[], plugins: readonly CrudkitPlugin[]): void {
  checkUnique(
    resources.map((r) => r.name),
    "resource",
  );
  checkUnique(
    plugins.map((p) => p.id),
    "plugin",
  );
}
