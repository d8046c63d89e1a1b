// Type-level view of a resource: the record, create and update inputs, derived from the schema.

import type { z } from "zod";
import type { Field } from "../schema/field-model.ts";
import type { ResourceAccess } from "./access.ts";
import type { AnyResourceHooks } from "./hooks.ts";

export type AnyObjectSchema = z.ZodObject<z.ZodRawShape>;

export type Simplify<T> = { [K in keyof T]: T[K] } & {};

type Managed<T extends boolean> = false extends T ? never : "createdAt" | "updatedAt";
type TimestampFields<T extends boolean> = false extends T
  ? unknown
  : { createdAt: string; updatedAt: string };

/** What a value looks like once stored and read back: dates become ISO 8601 strings. */
export type Stored<T> = T extends Date
  ? string
  : T extends readonly (infer E)[]
    ? Stored<E>[]
    : T extends object
      ? { [K in keyof T]: Stored<T[K]> }
      : T;

/** Dates also accept ISO 8601 strings as input, at any depth (top-level fields and nested in JSON). */
type AcceptDateStrings<T> = { [K in keyof T]: WithDateStrings<T[K]> };

type WithDateStrings<T> = T extends Date
  ? T | string
  : T extends readonly (infer E)[]
    ? WithDateStrings<E>[]
    : T extends object
      ? { [K in keyof T]: WithDateStrings<T[K]> }
      : T;

/** Keys whose value may be left out. */
type OptionalKeys<T> = { [K in keyof T]-?: undefined extends T[K] ? K : never }[keyof T];

/**
 * On update, sending null clears a field that may be absent once stored (optional without a
 * default); it then reads back absent. `Out` is the schema's output, where defaults are filled.
 */
type ClearableOptional<T, Out> = { [K in keyof T]: K extends OptionalKeys<Out> ? T[K] | null : T[K] };

/** A stored record, the same everywhere: HTTP, `app.api`, hooks and the client (dates as ISO strings). */
export type RecordShape<S extends AnyObjectSchema, T extends boolean> = Simplify<
  { id: string } & Stored<Omit<z.output<S>, "id" | Managed<T>>> & TimestampFields<T>
>;

/** The body of a create: the schema's input, `id` optional, timestamps set by the server. */
export type CreateShape<S extends AnyObjectSchema, T extends boolean> = Simplify<
  { id?: string } & AcceptDateStrings<Omit<z.input<S>, "id" | Managed<T>>>
>;

/** The body of an update: any subset of the writable fields. */
export type UpdateShape<S extends AnyObjectSchema, T extends boolean> = Simplify<
  Partial<ClearableOptional<AcceptDateStrings<Omit<z.input<S>, "id" | Managed<T>>>, z.output<S>>>
>;

/** Validated create data as hooks see it. */
export type CreateData<S extends AnyObjectSchema, T extends boolean> = Simplify<
  { id?: string } & Omit<z.output<S>, "id" | Managed<T>>
>;

/** Validated update data as hooks see it: only the fields sent. */
export type UpdateData<S extends AnyObjectSchema, T extends boolean> = Simplify<
  Partial<ClearableOptional<Omit<z.output<S>, "id" | Managed<T>>, z.output<S>>>
>;

/** Names of the schema's string fields (what `searchable` may list). */
export type StringFieldOf<S extends AnyObjectSchema> = {
  [K in keyof z.output<S>]-?: NonNullable<z.output<S>[K]> extends string ? K : never;
}[keyof z.output<S>] &
  string;

/** Names a list may be sorted by. */
export type SortableFieldOf<S extends AnyObjectSchema, T extends boolean> = {
  [K in keyof RecordShape<S, T>]-?: NonNullable<RecordShape<S, T>[K]> extends string | number | boolean | Date
    ? K
    : never;
}[keyof RecordShape<S, T>] &
  string;

export interface Resource<
  N extends string = string,
  S extends AnyObjectSchema = AnyObjectSchema,
  P extends string = string,
  T extends boolean = boolean,
> {
  readonly name: N;
  /** Plural used by the list path (`/api/<plural>`) and `app.api.list<Plural>`. */
  readonly plural: P;
  readonly schema: S;
  readonly timestamps: T;
  readonly searchable: readonly string[];
  /** Fields a list may filter on; undefined means every field that is not JSON. */
  readonly filterable: readonly string[] | undefined;
  readonly access: ResourceAccess;
  readonly hooks: AnyResourceHooks;
  /** Every stored field, including the server-managed `id` and timestamps. */
  readonly fields: readonly Field[];
  /** The lists of ids (`referencesMany()`), each kept in a junction table rather than a column. */
  readonly many: readonly Field[];
  /** Sets of fields that are unique together. */
  readonly unique: readonly (readonly string[])[];
  /** Further indexed sets of fields. */
  readonly indexes: readonly (readonly string[])[];
  /** How lists count by default. */
  readonly count: "exact" | "estimated" | "none";
  /** Updates and deletes must name the version they change (`If-Match`), or answer 428. */
  readonly requireIfMatch: boolean;
  /** What `GET /<plural>/aggregate` may aggregate and group by (count needs none). */
  readonly aggregates: AggregatesOption | undefined;
}

/** The fields aggregates may name (`aggregates` of `createResource`). */
export interface AggregatesOption {
  /** Fields `countDistinct`, `sum`, `avg` (numbers only), `min` and `max` may name. @default [] */
  fields?: readonly string[];
  /** Fields `groupBy` may name. @default [] */
  groupBy?: readonly string[];
}

export type AnyResource = Resource<string, AnyObjectSchema, string, boolean>;

export type RecordOf<R extends AnyResource> = RecordShape<R["schema"], R["timestamps"]>;
export type CreateInputOf<R extends AnyResource> = CreateShape<R["schema"], R["timestamps"]>;
export type UpdateInputOf<R extends AnyResource> = UpdateShape<R["schema"], R["timestamps"]>;
export type SortableOf<R extends AnyResource> = SortableFieldOf<R["schema"], R["timestamps"]>;
