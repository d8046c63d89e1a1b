// The endpoint model: resources and plugins both produce endpoints; the router and the in-process
// API are derived from the same list, so HTTP and server calls run the same code.

import type { Kysely } from "kysely";
import type { User } from "./identity.ts";
import type { RequestCache } from "./request-cache.ts";
import type { ServerApi } from "./server-api.ts";

export type HttpMethod = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

/** What an endpoint handler sees, whether it was reached over HTTP or from server code. */
export interface EndpointContext {
  /** Path parameters, URL-decoded. */
  readonly params: Readonly<Record<string, string>>;
  /** Query parameters (first value of each). */
  readonly query: Readonly<Record<string, string | undefined>>;
  readonly headers: Headers;
  /** The HTTP request, absent for in-process calls. */
  readonly request: Request | undefined;
  /** `http` for requests, `server` for the in-process API. */
  readonly source: "http" | "server";
  /** Server code asked to skip access rules. Never true over HTTP. */
  readonly overrideAccess: boolean;
  /** The client's address as the host reported it (`serve()` passes the socket's), if known. */
  readonly ip: string | undefined;
  readonly db: Kysely<any>;
  /**
   * Where the endpoint's reads run: with read replicas, a replica that holds the caller's writes
   * (read-routing.ts); otherwise, or when absent, `db`.
   */
  readonly readDb?: Kysely<any>;
  /**
   * A list's filter as server code gave it (`app.api`'s `where`): an object, read by the same
   * parser as the `filter[…]` parameters after decoding, with its values typed. Undefined over HTTP.
   */
  readonly where?: unknown;
  /**
   * The body is the whole record, replacing the stored one (`PUT`): an update validates it as a
   * create does, and the fields it leaves out take their defaults.
   */
  readonly replace?: boolean;
  /**
   * A step of a batch, whose failure undoes the whole batch: its write joins the batch's
   * transaction without a savepoint of its own (write-pipeline.ts).
   */
  readonly batchStep?: boolean;
  /** The parsed JSON body, read on first call within the body limit. */
  readBody(): Promise<unknown>;
  /** The caller, identified once per request; throws 401 for invalid credentials. */
  getUser(): Promise<User | null>;
  /** This request's memo for rules and hooks (`RequestCache`), made on first use. */
  readonly cache: RequestCache;
  /** The app's operations with the server's authority, on `db` (see `ServerApi`). */
  readonly api: ServerApi;
}

/**
 * An endpoint. `Method` names its top-level client method (`client.uploadFile(…)`); `Input` and
 * `Output` only carry types to the client (see `defineEndpoint`).
 */
export interface Endpoint<
  Method extends string = string,
  Input = unknown,
  Output = unknown,
  Path extends string = string,
> {
  method: HttpMethod;
  /** Path under the app's basePath, with `:name` parameters, for example `/product/:id`. */
  path: Path;
  /** Status of a successful answer. @default 200 */
  status?: number;
  /** Name of the method on `app.api` (for example `createProduct`); none means not exposed. */
  operationName?: string;
  /** Further names on `app.api` for the same endpoint. */
  operationAliases?: readonly string[];
  /** The handler reads `ctx.request` itself (uploads): the app's body limit does not apply. */
  rawBody?: boolean;
  /**
   * It creates something, and a retry carrying the same `Idempotency-Key` may be answered with the
   * first answer instead of creating it again (resource creates, uploads; see `idempotency()`).
   */
  idempotent?: boolean;
  /**
   * Honours `Prefer: return=minimal` (RFC 7240): `created` answers 201 with `Location` and no
   * body, `changed` answers 204; both keep the record's `ETag` when there is one.
   */
  minimal?: "created" | "changed";
  /**
   * It answers a page of records: with `crudkit({ listETags: true })` the page gets a weak ETag,
   * and a GET whose `If-None-Match` names it is a 304.
   */
  lists?: boolean;
  /** Answered while the app is still starting (health checks): it needs no migration or plugin. */
  ungated?: boolean;
  /** Name of a top-level client method for this endpoint, reached through `POST /_rpc/<name>`. */
  clientMethod?: Method;
  /** Returns the data to send as JSON, or a Response to send as is. */
  handler(ctx: EndpointContext): Promise<unknown>;
  /** How the OpenAPI document describes it; resources' endpoints are described from the resource. */
  doc?: EndpointDoc;
  /** Type carrier for the client; never set at runtime. */
  readonly $types?: { input: Input; output: Output };
}

/** A JSON Schema (2020-12, as OpenAPI 3.1 takes it). */
export type JsonSchema = Record<string, unknown>;

export interface EndpointDoc {
  summary?: string;
  tags?: readonly string[];
  /** The resource and operation behind a generated endpoint. */
  resource?: {
    name: string;
    operation: "create" | "read" | "update" | "delete" | "list" | "upsert" | "aggregate";
  };
  /** Query parameters, as `{ name: schema }`. */
  query?: Readonly<Record<string, JsonSchema>>;
  /** The JSON body. */
  body?: JsonSchema;
  /** The successful answer: a JSON schema, `"binary"` for a file, `"event-stream"` for SSE. */
  response?: JsonSchema | "binary" | "event-stream";
  /** Request headers it reads, as `{ name: description }`. */
  headers?: Readonly<Record<string, string>>;
  /** Needs no credentials (health checks). */
  public?: boolean;
  /** A page or a file for browsers (the docs and admin pages), not an API operation: the OpenAPI document leaves it out. */
  unlisted?: boolean;
  /** Answers of other statuses that are not the error body: `{ 503: healthSchema }`. */
  otherAnswers?: Readonly<Record<number, JsonSchema>>;
}
