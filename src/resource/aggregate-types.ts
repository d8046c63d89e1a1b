// Type-level view of aggregates for `app.api.aggregate<Plural>` and `client.<plural>.aggregate`:
// what a request may name (sums of number fields, groups of plain fields) and the answer's items,
// typed from what the request asked for.

import type { Where } from "../query/where.ts";
import type { AggregateFunction } from "../schema/aggregate-kinds.ts";
import type { RelatedFields } from "./relation-types.ts";
import type { AnyResource, RecordOf, Simplify, SortableOf } from "./types.ts";

/** Fields of the record holding numbers: what `sum` and `avg` take. */
export type NumericFieldOf<R extends AnyResource> = {
  [K in keyof RecordOf<R>]-?: NonNullable<RecordOf<R>[K]> extends number ? K : never;
}[keyof RecordOf<R>] &
  string;

/**
 * An aggregate request, as server code and the client write it. The server still checks each
 * field against the resource's `aggregates` option and the caller's field rules.
 */
export interface AggregateInput<R extends AnyResource, All extends AnyResource = R> {
  /** Count the rows (of each group). */
  count?: boolean;
  countDistinct?: readonly SortableOf<R>[];
  sum?: readonly NumericFieldOf<R>[];
  avg?: readonly NumericFieldOf<R>[];
  min?: readonly SortableOf<R>[];
  max?: readonly SortableOf<R>[];
  /** One item per group of these fields (at most 3). */
  groupBy?: readonly SortableOf<R>[];
  /** Only the rows matching, as a list's `where`. */
  where?: Where<RecordOf<R> & RelatedFields<R, All>>;
  search?: string;
  /** `count`, a groupBy field, or an aggregate asked for: `sum.price`. */
  sortBy?: "count" | SortableOf<R> | `${AggregateFunction}.${SortableOf<R>}`;
  sortOrder?: "asc" | "desc";
  /** Most groups answered. @default 100 (at most 1000) */
  limit?: number;
}

type Named<I, K extends string> = I extends { readonly [P in K]?: readonly (infer F)[] } ? F & string : never;
type Values<Name extends string, F extends string, V> = [F] extends [never]
  ? unknown
  : { [N in Name]: { [K in F]: V } };
type Extremes<R extends AnyResource, Name extends string, F extends string> = [F] extends [never]
  ? unknown
  : { [N in Name]: { [K in F]: ValueOf<R, K> } };
type ValueOf<R extends AnyResource, K> = K extends keyof RecordOf<R>
  ? Exclude<RecordOf<R>[K], undefined> | null
  : never;

/** A group's value: null only where the field may be absent (its rows group under null). */
type GroupValue<R extends AnyResource, K> = K extends keyof RecordOf<R>
  ? undefined extends RecordOf<R>[K]
    ? Exclude<RecordOf<R>[K], undefined> | null
    : RecordOf<R>[K]
  : never;

/** One item of the answer: its group's values, and the values asked for by field. */
export type AggregateItem<R extends AnyResource, I> = Simplify<
  { group: { [K in Named<I, "groupBy">]: GroupValue<R, K> } } & (I extends { count: true }
    ? { count: number }
    : unknown) &
    Values<"countDistinct", Named<I, "countDistinct">, number> &
    Values<"sum", Named<I, "sum">, number | null> &
    Values<"avg", Named<I, "avg">, number | null> &
    Extremes<R, "min", Named<I, "min">> &
    Extremes<R, "max", Named<I, "max">>
>;

export interface AggregateResult<R extends AnyResource, I> {
  items: AggregateItem<R, I>[];
}
