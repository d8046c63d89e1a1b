// Types of `app.api`: one method per resource and operation, named from the resource definitions.

import type { Where } from "../query/where.ts";
import type { ListResult } from "../resource/list-query.ts";
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

export interface ListQueryInput<R extends AnyResource> {
  page?: number | string;
  limit?: number | string;
  search?: string;
  sortBy?: SortableOf<R>;
  sortOrder?: "asc" | "desc";
  /** A `nextCursor` or `prevCursor` from a page before: keyset paging (not with `page`). */
  cursor?: string;
  /** `exact`, `estimated` (statistics) or `none` (total and totalPages are null). */
  count?: "exact" | "estimated" | "none";
  /** Only records matching this filter: `{ status: "active", price: { gte: 10 } }`. */
  where?: Where<RecordOf<R>>;
}

export interface DeleteResult {
  success: true;
  id: string;
}

type IdParams = { params: { id: string } };

export type ResourceApi<R extends AnyResource> = {
  [K in R as `create${Capitalize<K["name"]>}`]: ApiMethod<
    BaseCallOptions & { body: CreateInputOf<K> },
    RecordOf<K>
  >;
} & {
  [K in R as `read${Capitalize<K["name"]>}`]: ApiMethod<BaseCallOptions & IdParams, RecordOf<K>>;
} & {
  [K in R as `update${Capitalize<K["name"]>}`]: ApiMethod<
    BaseCallOptions & IdParams & { body: UpdateInputOf<K> },
    RecordOf<K>
  >;
} & {
  [K in R as `delete${Capitalize<K["name"]>}`]: ApiMethod<BaseCallOptions & IdParams, DeleteResult>;
} & {
  [K in R as `list${Capitalize<K["plural"]>}`]: OptionalApiMethod<
    BaseCallOptions & { query?: ListQueryInput<K> },
    ListResult<RecordOf<K>>
  >;
} & {
  /** Every page of the list, by cursor: `for await (const page of app.api.listProductsPages())`. */
  [K in R as `list${Capitalize<K["plural"]>}Pages`]: (
    options?: BaseCallOptions & { query?: Omit<ListQueryInput<K>, "page" | "cursor"> },
  ) => AsyncIterable<ListResult<RecordOf<K>>>;
};
