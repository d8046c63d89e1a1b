// `client.$batch((b) => [b.order.create({…}), b.line.create({…})])`: several writes in one request,
// run by the server in one transaction (POST /batch). `b.<name>` describes a request without
// sending it; the batch resolves to `{ data, error }`, `data` the records in the order asked.

import type { DeleteResult } from "../core/api-types.ts";
import type { AnyResource, CreateInputOf, RecordOf, UpdateInputOf } from "../resource/types.ts";
import type { CallOptions, ClientResult } from "./request.ts";

/** One request of a batch, carrying the type of what it answers. */
export interface BatchStep<Result> {
  readonly method: "POST" | "PATCH" | "PUT" | "DELETE";
  readonly path: string;
  readonly body?: unknown;
  readonly headers?: Record<string, string>;
  /** Type only: what the request answers. */
  readonly __result?: Result;
}

interface VersionOption {
  /** The `etag` of the version this change is meant for (sent as `If-Match`). */
  ifMatch?: string;
}

/** What `b.<name>` describes: a resource's writes. */
export interface BatchResourceSteps<R extends AnyResource> {
  create(
    body: CreateInputOf<R>,
    options?: { onConflict?: Exclude<keyof RecordOf<R>, "id"> & string },
  ): BatchStep<RecordOf<R>>;
  update(id: string, body: UpdateInputOf<R>, options?: VersionOption): BatchStep<RecordOf<R>>;
  upsert(id: string, body: CreateInputOf<R>, options?: VersionOption): BatchStep<RecordOf<R>>;
  delete(id: string, options?: VersionOption): BatchStep<DeleteResult>;
}

export type BatchBuilder<Resources extends AnyResource> = {
  [R in Resources as R["name"]]: BatchResourceSteps<R>;
};

type ResultsOf<Steps extends readonly BatchStep<unknown>[]> = {
  -readonly [K in keyof Steps]: Steps[K] extends BatchStep<infer Result> ? Result : never;
};

/** `client.$batch`: typed by the app's resources. */
export type Batch<Resources extends AnyResource> = <const Steps extends readonly BatchStep<unknown>[]>(
  build: (b: BatchBuilder<Resources>) => Steps,
  options?: CallOptions,
) => Promise<ClientResult<ResultsOf<Steps>>>;

type Send = (
  spec: { method: string; path: string; body?: unknown },
  options?: CallOptions,
) => Promise<ClientResult<any>>;

/** The runtime of `client.$batch`, sending through the client's own request path. */
export function batchOf(send: Send) {
  return async (build: (b: unknown) => readonly BatchStep<unknown>[], options?: CallOptions) => {
    const steps = build(builder);
    const requests = steps.map(({ method, path, body, headers }) => ({ method, path, body, headers }));
    const answer = await send({ method: "POST", path: "/batch", body: { requests } }, options);
    if (answer.error) return answer;
    const results = (answer.data as { results: { body: unknown }[] }).results;
    return { data: results.map((result) => result.body), error: null };
  };
}

const item = (name: string, id: string) => `/${name}/${encodeURIComponent(id)}`;
const version = (options?: VersionOption) =>
  options?.ifMatch === undefined ? undefined : { "If-Match": options.ifMatch };

/** `b.<name>.create(…)` and the others: descriptions, nothing sent. */
const builder = new Proxy(Object.create(null) as Record<string, unknown>, {
  get(_, name) {
    if (typeof name !== "string" || name === "then") return undefined;
    return {
      create: (body: unknown, options?: { onConflict?: string }) => ({
        method: "POST",
        path: options?.onConflict
          ? `/${name}?onConflict=${encodeURIComponent(options.onConflict)}`
          : `/${name}`,
        body,
      }),
      update: (id: string, body: unknown, options?: VersionOption) => ({
        method: "PATCH",
        path: item(name, id),
        body,
        headers: version(options),
      }),
      upsert: (id: string, body: unknown, options?: VersionOption) => ({
        method: "PUT",
        path: item(name, id),
        body,
        headers: version(options),
      }),
      delete: (id: string, options?: VersionOption) => ({
        method: "DELETE",
        path: item(name, id),
        headers: version(options),
      }),
    };
  },
});
