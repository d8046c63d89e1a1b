// Types of `app.api`: one method per resource and operation, named from the resource definitions.

import type { ListResult } from "../query/list-query.ts";
import type { Where } from "../query/where.ts";
import type { AggregateInput, AggregateResult } from "../resource/aggregate-types.ts";
import type { Expanded, ExpandPath, RelatedFields } from "../resource/relation-types.ts";
import type { AnyResource, CreateInputOf, RecordOf, SortableOf, UpdateInputOf } from "../resource/types.ts";

interface BaseCallOptions {
  /** Headers of the request being served; access rules see the caller they identify. */
  headers?: HeadersInit;
  /** Skip access rules (server code acting on its own authority). */
  overrideAccess?: boolean;
}

/** Without `asResponse` a method returns data (or throws `APIError`); with it, the `Response`. */
export interface ApiMethod<Options, Result> {
  (options: Options & { asResponse: true }): Promise<Response>;
  (options: Options & { asResponse?: false }): Promise<Result>;
}

export interface OptionalApiMethod<Options, Result> {
  (options: Options & { asResponse: true }): Promise<Response>;
  (options?: Options & { asResponse?: false }): Promise<Result>;
}

export interface ListQueryInput<R extends AnyResource, All extends AnyResource = R> {
  page?: number | string;
  limit?: number | string;
  search?: string;
  sortBy?: SortableOf<R>;
  sortOrder?: "asc" | "desc";
  /** A `nextCursor` or `prevCursor` from a page before: keyset paging (not with `page`). */
  cursor?: string;
  /** `exact`, `estimated` (statistics) or `none` (total and totalPages are null). */
  count?: "exact" | "estimated" | "none";
  /**
   * Only records matching this filter: `{ status: "active", price: { gte: 10 } }`, also on the
   * fields of referenced records: `{ "author.name": { contains: "ann" } }`.
   */
  where?: Where<RecordOf<R> & RelatedFields<R, All>>;
}

/** Related records to return beside each record: `["author", "comments.author"]`. */
export interface ExpandInput<E extends string> {
  expand?: readonly E[];
}

/** `readX`: generic in what it expands, so the record's type says what arrived. */
export interface ReadMethod<R extends AnyResource, All extends AnyResource> {
  <const E extends ExpandPath<R, All> = never>(
    options: BaseCallOptions & IdParams & { query?: ExpandInput<E> } & { asResponse: true },
  ): Promise<Response>;
  <const E extends ExpandPath<R, All> = never>(
    options: BaseCallOptions & IdParams & { query?: ExpandInput<E> } & { asResponse?: false },
  ): Promise<Expanded<R, All, E>>;
  // Last, for `ReturnType`, which reads the last signature: the record without expansions.
  (options: BaseCallOptions & IdParams & { asResponse?: false }): Promise<RecordOf<R>>;
}

/** `listX`: generic in what it expands. */
export interface ListMethod<R extends AnyResource, All extends AnyResource> {
  <const E extends ExpandPath<R, All> = never>(
    options: BaseCallOptions & { query?: ListQueryInput<R, All> & ExpandInput<E> } & { asResponse: true },
  ): Promise<Response>;
  <const E extends ExpandPath<R, All> = never>(
    options?: BaseCallOptions & { query?: ListQueryInput<R, All> & ExpandInput<E> } & { asResponse?: false },
  ): Promise<ListResult<Expanded<R, All, E>>>;
  // Last, for `ReturnType`: the page without expansions.
  (
    options?: BaseCallOptions & { query?: ListQueryInput<R, All> } & { asResponse?: false },
  ): Promise<ListResult<RecordOf<R>>>;
}

/** `aggregateX`: generic in what it asks for, so the items say what arrived. */
export interface AggregateMethod<R extends AnyResource, All extends AnyResource> {
  <const I extends AggregateInput<R, All>>(
    options: BaseCallOptions & I & { asResponse: true },
  ): Promise<Response>;
  <const I extends AggregateInput<R, All>>(
    options: BaseCallOptions & I & { asResponse?: false },
  ): Promise<AggregateResult<R, I>>;
}

export interface DeleteResult {
  success: true;
  id: string;
}

type IdParams = { params: { id: string } };
/** Change only the version named: the record's ETag, or `etagOf(record)` (412 when it moved on). */
type IfMatchOption = { ifMatch?: string };
/** With the `idempotency()` plugin: a retry with the same key and body returns the first result. */
type IdempotencyOption = { idempotencyKey?: string };

export type ResourceApi<R extends AnyResource> = {
  [K in R as `create${Capitalize<K["name"]>}`]: ApiMethod<
    BaseCallOptions &
      IdempotencyOption & { body: CreateInputOf<K> } & {
        /** `onConflict`: a unique field; the record already holding the body's value is updated instead. */
        query?: { onConflict?: Exclude<keyof RecordOf<K>, "id"> & string };
      },
    RecordOf<K>
  >;
} & {
  [K in R as `read${Capitalize<K["name"]>}`]: ReadMethod<K, R>;
} & {
  [K in R as `update${Capitalize<K["name"]>}`]: ApiMethod<
    BaseCallOptions & IdParams & IfMatchOption & { body: UpdateInputOf<K> },
    RecordOf<K>
  >;
} & {
  /** PUT: creates the record with `params.id`, or replaces it whole (`ifMatch`: only that version). */
  [K in R as `upsert${Capitalize<K["name"]>}`]: ApiMethod<
    BaseCallOptions & IdParams & IfMatchOption & { body: CreateInputOf<K> },
    RecordOf<K>
  >;
} & {
  [K in R as `delete${Capitalize<K["name"]>}`]: ApiMethod<
    BaseCallOptions & IdParams & IfMatchOption,
    DeleteResult
  >;
} & {
  [K in R as `list${Capitalize<K["plural"]>}`]: ListMethod<K, R>;
} & {
  /** `aggregateProducts({ count: true, sum: ["price"], groupBy: ["status"], where })`, under the list rule. */
  [K in R as `aggregate${Capitalize<K["plural"]>}`]: AggregateMethod<K, R>;
} & {
  /** Every page of the list, by cursor: `for await (const page of app.api.listProductsPages())`. */
  [K in R as `list${Capitalize<K["plural"]>}Pages`]: <const E extends ExpandPath<K, R> = never>(
    options?: BaseCallOptions & { query?: Omit<ListQueryInput<K, R>, "page" | "cursor"> & ExpandInput<E> },
  ) => AsyncIterable<ListResult<Expanded<K, R, E>>>;
};

/** One request of a batch: a write of a resource, its path under the base path (`/product/abc`). */
export interface BatchRequest {
  method: "POST" | "PATCH" | "PUT" | "DELETE";
  /** `/product`, `/product/abc`, `/product?onConflict=sku`. */
  path: string;
  body?: unknown;
  /** The version the request changes: `If-Match` (or `If-None-Match: *` on a PUT). */
  headers?: { "If-Match"?: string; "If-None-Match"?: string };
}

/** What a batch answers: each request's status and body, in order. */
export interface BatchAnswer {
  results: { status: number; body: unknown }[];
}

export interface BatchApi {
  /**
   * `POST /batch`: the requests in one transaction, all or none; the first that fails throws its
   * error, with `details: { index, error }`. On unless `crudkit({ batch: false })`.
   */
  batch: ApiMethod<BaseCallOptions & { body: { requests: readonly BatchRequest[] } }, BatchAnswer>;
}
