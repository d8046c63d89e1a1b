// The two ways into an endpoint: an HTTP request, or a call on `app.api` from server code.
// Both give the endpoint the same context, so validation, rules and hooks cannot differ.

import type { Kysely } from "kysely";
import type { ClientAddress } from "./client-address.ts";
import type { DriverErrors } from "./driver-errors.ts";
import type { EndpointContext } from "./endpoint.ts";
import { APIError } from "./errors.ts";
import type { Identify, User } from "./identity.ts";
import { checkJsonValue, checkParameter } from "./input-checks.ts";
import { type ReadRouter, readsOnly } from "./read-routing.ts";
import { readJsonBody } from "./request-body.ts";
import { RequestCache } from "./request-cache.ts";
import { type ServerApi, type ServerCalls, serverApi } from "./server-api.ts";

export interface ContextDeps {
  readonly db: Kysely<any>;
  readonly identify: Identify | undefined;
  readonly bodyLimit: number;
  /** How deep a JSON body may nest. */
  readonly jsonDepth: number;
  /** The client's address from the socket's and the trusted proxies' (`crudkit({ trustProxy })`). */
  readonly clientAddress: ClientAddress;
  /** How the database's driver errors read (its engine's), to answer them as 503, 400 or 500. */
  readonly driverErrors: DriverErrors;
  /** The app's operations by name, for `ctx.api` (filled in once the app has them). */
  readonly serverCalls: ServerCalls;
  /** With read replicas: where a request's reads run (read-routing.ts). */
  readonly reads?: ReadRouter | undefined;
}

const NO_QUERY: Record<string, string | undefined> = Object.freeze({});

/**
 * What both kinds of context make on first use, for rules and hooks: the request's memo, and the
 * app's operations on this context's database (`ctx.api`).
 */
abstract class RequestParts {
  abstract readonly db: Kysely<any>;
  abstract readonly headers: Headers;
  abstract readonly userId: string | undefined;
  #cache: RequestCache | undefined;
  #api: ServerApi | undefined;
  #readDb: Kysely<any> | undefined;
  /** The replica was chosen before the caller was known: chosen again once she is. */
  #chosenBlind = false;

  constructor(protected readonly deps: ContextDeps) {}

  /** Whether the caller has been identified (her writes' positions are then known). */
  protected callerKnown(): boolean {
    return true;
  }

  /** Whether the call changes nothing (a GET): its reads may then go to a replica. */
  protected abstract readOnly(): boolean;
  /** Whether its reads may go to a replica at all (not a hook's `ctx.api` call). */
  protected routed(): boolean {
    return true;
  }
  abstract readonly source: "http" | "server";

  /**
   * Where this call's reads run: with read replicas, one that holds the caller's writes, chosen on
   * the first read, and again once the caller is known if she was not yet; else the primary, `db`.
   */
  get readDb(): Kysely<any> {
    if (this.#readDb === undefined || (this.#chosenBlind && this.callerKnown())) {
      const reads = this.deps.reads;
      const routed = reads && this.readOnly() && this.routed() && this.db === this.deps.db;
      this.#chosenBlind = routed === true && !this.callerKnown();
      this.#readDb = routed ? reads!.route(this) : this.db;
    }
    return this.#readDb;
  }

  /** The replica this call's reads ran on, if they did. */
  get replica(): Kysely<any> | undefined {
    return this.#readDb !== undefined && this.#readDb !== this.db ? this.#readDb : undefined;
  }

  /** Reads go to the primary: a replica failed this call, which runs again. */
  readFromPrimary(): void {
    this.#readDb = this.db;
    this.#chosenBlind = false;
  }

  /** Whether the call may write on the app's database, not inside another's transaction. */
  get writesPrimary(): boolean {
    return !this.readOnly() && this.db === this.deps.db;
  }

  get cache(): RequestCache {
    this.#cache ??= new RequestCache();
    return this.#cache;
  }

  get api(): ServerApi {
    this.#api ??= serverApi(this.deps.serverCalls, this.db, this.headers);
    return this.#api;
  }
}

export class HttpContext extends RequestParts implements EndpointContext {
  readonly source = "http" as const;
  readonly overrideAccess = false;
  readonly db: Kysely<any>;
  #query: Record<string, string | undefined> | undefined;
  #user: Promise<User | null> | undefined;
  #body: Promise<unknown> | undefined;
  #identified = false;
  #known = false;
  #userId: string | undefined;

  #ip: string | undefined | null = null;

  constructor(
    readonly request: Request,
    readonly params: Record<string, string>,
    deps: ContextDeps,
    /** The socket's address; `ip` is the client's, which a trusted proxy may name. */
    readonly socketAddress: string | undefined,
  ) {
    super(deps);
    this.db = deps.db;
  }

  /** The client's address: worked out once, when something asks (audit, rate limits, keys). */
  get ip(): string | undefined {
    if (this.#ip === null) this.#ip = this.deps.clientAddress(this.socketAddress, this.request.headers);
    return this.#ip;
  }

  get headers(): Headers {
    return this.request.headers;
  }

  protected readOnly(): boolean {
    return readsOnly(this.request.method);
  }

  get query(): Record<string, string | undefined> {
    this.#query ??= parseQuery(this.request.url);
    return this.#query;
  }

  readBody(): Promise<unknown> {
    this.#body ??= readJsonBody(this.request, this.deps.bodyLimit, this.deps.jsonDepth);
    return this.#body;
  }

  getUser(): Promise<User | null> {
    if (this.#user) return this.#user;
    const identify = this.deps.identify;
    const found = identify ? identify(this.request) : null;
    if (typeof (found as PromiseLike<User | null> | null)?.then === "function") {
      this.#user = Promise.resolve(found).then((user) => {
        this.#identified = user !== null;
        this.#userId = user?.id;
        this.#known = true;
        return user;
      });
    } else {
      this.#identified = found !== null;
      this.#userId = (found as User | null)?.id;
      this.#known = true;
      this.#user = Promise.resolve(found as User | null);
    }
    return this.#user;
  }

  protected override callerKnown(): boolean {
    return this.#known;
  }

  /** The caller's id, once the request has been identified (undefined before, or anonymous). */
  get userId(): string | undefined {
    return this.#userId;
  }

  /** Whether the request named a user: its answer is hers alone, and no shared cache may keep it. */
  get identified(): boolean {
    return this.#identified;
  }
}

/**
 * The same call with some of its parts replaced (another Request whose body a plugin observes as
 * it streams, the parameters of an inner endpoint); the caller, identified once, stays the same.
 */
export function contextWith(ctx: EndpointContext, changes: Partial<EndpointContext>): EndpointContext {
  return {
    params: ctx.params,
    query: ctx.query,
    headers: ctx.headers,
    request: ctx.request,
    source: ctx.source,
    overrideAccess: ctx.overrideAccess,
    ip: ctx.ip,
    db: ctx.db,
    // The inner call reads where the outer one does, unless it runs on another database.
    get readDb() {
      return changes.db ?? ctx.readDb;
    },
    where: ctx.where,
    readBody: () => ctx.readBody(),
    getUser: () => ctx.getUser(),
    get cache() {
      return ctx.cache;
    },
    get api() {
      return ctx.api;
    },
    ...changes,
  };
}

/** Options of an `app.api` call. */
export interface CallOptions {
  body?: unknown;
  params?: Record<string, string>;
  /** Query parameters; a list's `where` is an object, read as typed values (no text round trip). */
  query?: Record<string, unknown>;
  /** Headers of the request being served; rules see the caller they identify. */
  headers?: HeadersInit;
  /** Return the `Response` the HTTP handler would send. */
  asResponse?: boolean;
  /** Skip access rules (server code acting on its own authority). Recorded as such by the audit plugin. */
  overrideAccess?: boolean;
  /** Update or delete only this version of the record (its ETag, or `etagOf(record)`): `If-Match`. */
  ifMatch?: string;
  /** A create or upload safe to retry with the same key (`Idempotency-Key`; see `idempotency()`). */
  idempotencyKey?: string;
}

export class InProcessContext extends RequestParts implements EndpointContext {
  readonly source = "server" as const;
  readonly request = undefined;
  readonly ip = undefined;
  readonly userId = undefined;
  readonly db: Kysely<any>;
  readonly headers: Headers;
  readonly params: Record<string, string>;
  readonly query: Record<string, string | undefined>;
  readonly where: unknown;
  readonly overrideAccess: boolean;
  #user: Promise<User | null> | undefined;

  constructor(
    private readonly options: CallOptions,
    deps: ContextDeps,
    /** Where the call runs: the app's database, or the transaction of the write whose hook calls. */
    db: Kysely<any> = deps.db,
    /** The endpoint reads only (a GET). */
    private readonly reading = false,
    /** An `app.api` call: a GET's reads may go to a replica (a hook's `ctx.api` reads the primary). */
    private readonly routedCall = false,
  ) {
    super(deps);
    this.db = db;
    this.headers = validHeaders(options.headers, options);
    this.params = options.params ? checkedParams(options.params) : {};
    this.query = options.query ? stringValues(options.query) : NO_QUERY;
    this.where = whereOf(options.query, deps.jsonDepth);
    this.overrideAccess = options.overrideAccess === true;
  }

  protected readOnly(): boolean {
    return this.reading;
  }

  protected override routed(): boolean {
    return this.routedCall;
  }

  async readBody(): Promise<unknown> {
    // Server code passes objects, not text: the same depth and text rules apply to them.
    checkJsonValue(this.options.body, this.deps.jsonDepth);
    return this.options.body;
  }

  getUser(): Promise<User | null> {
    const identify = this.deps.identify;
    // Identity plugins read requests, so server calls hand them one carrying the given headers.
    this.#user ??= identify
      ? Promise.resolve(identify(new Request("http://in-process.local/", { headers: this.headers })))
      : Promise.resolve(null);
    return this.#user;
  }
}

function parseQuery(url: string): Record<string, string | undefined> {
  const start = url.indexOf("?");
  if (start === -1) return NO_QUERY;
  // No prototype: a parameter named "__proto__" must stay a plain key.
  const query: Record<string, string | undefined> = Object.create(null);
  for (const [key, value] of new URLSearchParams(url.slice(start + 1))) {
    checkParameter(key, "query", key);
    checkParameter(value, "query", key);
    if (!(key in query)) query[key] = value;
  }
  return query;
}

function stringValues(query: NonNullable<CallOptions["query"]>): Record<string, string | undefined> {
  const result: Record<string, string | undefined> = Object.create(null);
  for (const [key, value] of Object.entries(query)) {
    checkParameter(key, "query", key);
    if (value === undefined) result[key] = undefined;
    else if (key === "where" && typeof value === "object" && value !== null) {
    } else {
      result[key] = String(value);
      checkParameter(result[key], "query", key);
    }
  }
  return result;
}

/**
 * A `where` object of server code: checked as a body is (depth, NUL bytes, `__proto__`), then
 * handed to the list parser as it is.
 */
export function whereOf(query: Record<string, unknown> | undefined, maxDepth: number): unknown {
  const where = query?.where;
  if (where === undefined || where === null || typeof where !== "object") return undefined;
  checkJsonValue(where, maxDepth);
  return where;
}

/** Server code may pass anything; headers no HTTP request could carry are the caller's mistake, a 400. */
function validHeaders(
  init: HeadersInit | undefined,
  { ifMatch, idempotencyKey }: Pick<CallOptions, "ifMatch" | "idempotencyKey">,
): Headers {
  try {
    const headers = new Headers(init);
    if (ifMatch !== undefined) headers.set("if-match", ifMatch);
    if (idempotencyKey !== undefined) headers.set("idempotency-key", idempotencyKey);
    return headers;
  } catch (cause) {
    throw new APIError("BAD_REQUEST", "The headers given are not valid HTTP headers.", { cause });
  }
}

function checkedParams(params: Record<string, string>): Record<string, string> {
  for (const [name, value] of Object.entries(params))
    if (typeof value === "string") checkParameter(value, "path", name);
  return params;
}
