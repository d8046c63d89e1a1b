// One request from the client: headers merged, callbacks run, and the answer turned into
// `{ data, error }`. Nothing here throws or rejects: every failure lands in `error`.

import { flattenFilter } from "./filter-params.ts";

export interface ClientError {
  /** HTTP status, or 0 when no answer arrived. */
  status: number;
  /** The server's code (`NOT_FOUND`…), or `NETWORK_ERROR`, `INVALID_RESPONSE`, `CLIENT_ERROR`. */
  code: string;
  /** A readable sentence. */
  message: string;
  details?: { path: string; message: string }[];
  /** A batch (`$batch`) whose request failed: its place, and its own error body. */
  failed?: {
    index: number;
    error: { code: string; message: string; details?: { path: string; message: string }[] };
  };
}

/**
 * What every method resolves to. A record's answer (read, create, update) also carries its
 * `etag`, the version to pass as `ifMatch` to a later update or delete.
 */
export type ClientResult<T> =
  | { data: T; error: null; etag?: string }
  | { data: null; error: ClientError; etag?: undefined };

export interface RequestContext {
  url: string;
  method: string;
  /** Change these in `onRequest` to change what is sent. */
  headers: Headers;
  body: unknown;
}

export interface Callbacks<T = unknown> {
  /** Before sending; may change `ctx.headers`. Awaited. */
  onRequest?: (ctx: RequestContext) => unknown;
  /** After a 2xx JSON answer. Awaited. */
  onSuccess?: (ctx: { data: T; response: Response; request: RequestContext }) => unknown;
  /** After any failure; `ctx.error.message` is a readable sentence. Awaited. */
  onError?: (ctx: { error: ClientError; response: Response | null; request: RequestContext }) => unknown;
}

export interface FetchOptions<T = unknown> extends Callbacks<T> {
  headers?: HeadersInit;
  signal?: AbortSignal;
}

/** Per-call options: callbacks and headers directly, or under `fetchOptions`. */
export interface CallOptions<T = unknown> extends FetchOptions<T> {
  fetchOptions?: FetchOptions<T>;
  /**
   * Makes a create or an upload safe to retry (sent as `Idempotency-Key`; the server needs the
   * `idempotency()` plugin): a retry with the same key gets the first answer, nothing twice.
   */
  idempotencyKey?: string;
}

/** Options of the writes (create, update, delete). */
export interface WriteOptions<T = unknown> extends CallOptions<T> {
  /**
   * `"minimal"`: the server answers without the record (`Prefer: return=minimal`): `data` is null,
   * `etag` still says the version written. For sync jobs that do not need the echo.
   * @default "representation"
   */
  returning?: "minimal" | "representation";
}

export interface ClientOptions extends Callbacks {
  /** Where the API lives, including its base path: `http://localhost:3000/api`. */
  baseURL: string;
  /** Sent with every request; a function is called per request (for tokens that change). */
  headers?: HeadersInit | (() => HeadersInit | Promise<HeadersInit>);
  /** @default globalThis.fetch */
  fetch?: typeof fetch;
  fetchOptions?: FetchOptions & { credentials?: RequestCredentials };
}

/**
 * The write positions an app with read replicas reported to each client (`Crudkit-Position`), sent
 * back with its next requests so that its reads, on whichever instance, see its writes. An answer's
 * position covers those its request sent, so it replaces them; positions of answers that crossed
 * (requests in flight at once) are all kept, and sent space-separated.
 */
const positions = new WeakMap<ClientOptions, Set<string>>();
const POSITION = "crudkit-position";

export interface RequestSpec {
  method: string;
  path: string;
  query?: Record<string, unknown> | undefined;
  body?: unknown;
}

/**
 * Sends one request. Callbacks run from the widest to the narrowest: client options, client
 * `fetchOptions`, call `fetchOptions`, call options. Headers merge in the same order, later wins.
 */
export async function send<T>(
  client: ClientOptions,
  spec: RequestSpec,
  call: CallOptions<T> = {},
): Promise<ClientResult<T>> {
  const layers: Callbacks<any>[] = [client, client.fetchOptions ?? {}, call.fetchOptions ?? {}, call];
  const headers = new Headers(typeof client.headers === "function" ? await client.headers() : client.headers);
  for (const more of [client.fetchOptions?.headers, call.fetchOptions?.headers, call.headers]) {
    for (const [key, value] of new Headers(more)) headers.set(key, value);
  }
  if (call.idempotencyKey !== undefined) headers.set("idempotency-key", call.idempotencyKey);
  const { returning } = call as WriteOptions<T>;
  if (returning !== undefined) headers.set("prefer", `return=${returning}`);
  const known = positions.get(client);
  const sent = known && !headers.has(POSITION) ? [...known] : [];
  if (sent.length) headers.set(POSITION, sent.join(" "));
  const hasBody = spec.body !== undefined;
  if (hasBody && !headers.has("content-type")) headers.set("content-type", "application/json");
  const request: RequestContext = {
    url: urlOf(client.baseURL, spec),
    method: spec.method,
    headers,
    body: spec.body,
  };
  let response: Response | null = null;
  let error: ClientError;
  try {
    for (const layer of layers) await layer.onRequest?.(request);
    response = await (client.fetch ?? fetch)(request.url, {
      method: request.method,
      headers: request.headers,
      body: hasBody ? JSON.stringify(request.body) : undefined,
      signal: call.signal ?? call.fetchOptions?.signal ?? client.fetchOptions?.signal,
      credentials: client.fetchOptions?.credentials,
    });
    const reported = response.headers.get(POSITION);
    if (reported !== null) {
      const kept = positions.get(client) ?? new Set<string>();
      for (const position of sent) kept.delete(position);
      kept.add(reported);
      positions.set(client, kept);
    }
    const parsed = await readJson(response);
    if (response.ok && parsed.ok) {
      const data = parsed.value as T;
      for (const layer of layers) await layer.onSuccess?.({ data, response, request });
      const etag = response.headers.get("etag");
      return etag === null ? { data, error: null } : { data, error: null, etag };
    }
    error = parsed.ok ? serverError(response, parsed.value) : invalidResponse(response);
  } catch (cause) {
    error = response ? clientError(cause) : networkError(request.url, cause);
  }
  try {
    for (const layer of layers) await layer.onError?.({ error, response, request });
  } catch {
    // A failing onError must not turn into a rejected promise.
  }
  return { data: null, error };
}

function urlOf(baseURL: string, spec: RequestSpec): string {
  let url = baseURL.replace(/\/+$/, "") + spec.path;
  const query = new URLSearchParams();
  for (const [key, value] of Object.entries(spec.query ?? {})) {
    // A list's `where` travels in the bracket syntax: filter[price][gte]=10.
    if (key === "where" && typeof value === "object" && value !== null)
      for (const [name, text] of flattenFilter(value)) query.append(name, text);
    else if (value != null) query.append(key, String(value));
  }
  const search = query.toString();
  if (search) url += `?${search}`;
  return url;
}

async function readJson(response: Response): Promise<{ ok: true; value: unknown } | { ok: false }> {
  const text = await response.text();
  // 204, and a create answered with `Prefer: return=minimal` (201 and a Location, no body).
  if (text === "" && (response.status === 204 || response.status === 201)) return { ok: true, value: null };
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}

function serverError(response: Response, body: unknown): ClientError {
  const { code, message, details } = (body ?? {}) as Partial<ClientError>;
  return {
    status: response.status,
    code: typeof code === "string" ? code : "HTTP_ERROR",
    message:
      typeof message === "string"
        ? message
        : `The server answered ${response.status} ${response.statusText}.`.replace(" .", "."),
    ...(Array.isArray(details) ? { details } : {}),
    ...(isFailedRequest(details) ? { failed: details } : {}),
  };
}

/** A batch's failure names the request that failed: `details: { index, error }`. */
function isFailedRequest(details: unknown): details is NonNullable<ClientError["failed"]> {
  const failed = details as ClientError["failed"] | undefined;
  return (
    typeof failed === "object" &&
    failed !== null &&
    Number.isInteger(failed.index) &&
    typeof failed.error === "object" &&
    failed.error !== null
  );
}

function invalidResponse(response: Response): ClientError {
  return {
    status: response.status,
    code: "INVALID_RESPONSE",
    message: `The server answered ${response.status} with a body that is not JSON.`,
  };
}

function networkError(url: string, cause: unknown): ClientError {
  const reason =
    (cause as { cause?: { code?: string } })?.cause?.code ?? (cause as Error)?.name ?? "unknown error";
  const where = url.replace(/[?#].*$/, "");
  if (reason === "AbortError")
    return { status: 0, code: "ABORTED", message: `The request to ${where} was aborted.` };
  return { status: 0, code: "NETWORK_ERROR", message: `Could not reach ${where} (${reason}).` };
}

function clientError(cause: unknown): ClientError {
  return {
    status: 0,
    code: "CLIENT_ERROR",
    message: `A client callback failed: ${(cause as Error)?.message ?? String(cause)}`,
  };
}
