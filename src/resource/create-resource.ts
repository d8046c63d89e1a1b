// createResource: checks a resource definition once and reads its schema into the field model.

import { z } from "zod";
import { ConfigError } from "../core/errors.ts";
import { checkOptionKeys, optionKeys } from "../core/option-keys.ts";
import type { CountMode } from "../query/list-query.ts";
import { type Field, readFields } from "../schema/field-model.ts";
import type { ResourceAccess } from "./access.ts";
import { checkedAggregates } from "./aggregate-option.ts";
import type { ResourceHooks } from "./hooks.ts";
import { type Pluralize, pluralize } from "./plural.ts";
import type {
  AnyObjectSchema,
  CreateData,
  CreateShape,
  RecordShape,
  Resource,
  StringFieldOf,
  UpdateData,
  UpdateShape,
} from "./types.ts";

export interface ResourceConfig<
  N extends string,
  S extends AnyObjectSchema,
  P extends string,
  T extends boolean,
> {
  /** Singular name: item paths are `/<name>/:id`, and `app.api.create<Name>`. Letters, digits, `_`. */
  name: N;
  /** The fields, as a Zod object (see `withId`). */
  schema: S;
  /** Plural for the list path. @default a real English pluralizer of `name` */
  plural?: P;
  /** String fields that `search` matches (case-insensitive, any of them). @default [] */
  searchable?: readonly StringFieldOf<S>[];
  /** Fields a list may filter on with `filter[…]` / `where`. @default every field that is not JSON */
  filterable?: readonly Exclude<keyof z.output<S>, symbol>[];
  /**
   * One rule per operation; an operation without a rule is denied over HTTP. Rules of read, list,
   * update and delete may return a `Where` (the caller's rows); `fields` holds per-field rules.
   * @default {}
   */
  access?: ResourceAccess<RecordShape<S, T>, CreateShape<S, T>, UpdateShape<S, T>>;
  hooks?: ResourceHooks<RecordShape<S, T>, CreateData<S, T>, UpdateData<S, T>>;
  /**
   * Fields whose values no two records share: a field, or a list of fields unique together. A
   * create or update that would repeat one answers 409 naming the field(s).
   * @example unique: ["email", ["tenantId", "slug"]]
   */
  unique?: readonly ColumnSet<S, T>[];
  /** Further indexes, for the filters and sorts a list uses: `["status", ["status", "price"]]`. */
  indexes?: readonly ColumnSet<S, T>[];
  /** How lists count when the request names no `count`: `exact`, `estimated` or `none`. @default "exact" */
  count?: CountMode;
  /** Server-managed `createdAt` and `updatedAt`. @default true */
  timestamps?: T;
  /**
   * Updates and deletes must send `If-Match` with the record's `ETag` (the version they change);
   * without it they answer 428 `PRECONDITION_REQUIRED`, so no editor overwrites another unknowingly.
   * Server code acting with `overrideAccess` is exempt. @default false
   */
  requireIfMatch?: boolean;
  /**
   * Opens `GET /<plural>/aggregate` beyond `count`: the fields `countDistinct`, `sum`, `avg`,
   * `min` and `max` may name, and those `groupBy` may. Hidden fields stay closed to whoever may not
   * read them. @default { fields: [], groupBy: [] }
   * @example aggregates: { fields: ["price", "quantity"], groupBy: ["status", "category"] }
   */
  aggregates?: { fields?: readonly StoredField<S, T>[]; groupBy?: readonly StoredField<S, T>[] };
}

type StoredField<S extends AnyObjectSchema, T extends boolean> = keyof RecordShape<S, T> & string;
/** One field, or several fields taken together. */
type ColumnSet<S extends AnyObjectSchema, T extends boolean> =
  | StoredField<S, T>
  | readonly [StoredField<S, T>, ...StoredField<S, T>[]];

const NAME = /^[A-Za-z][A-Za-z0-9_]{0,62}$/;

const RESOURCE_OPTION_KEYS = optionKeys<ResourceConfig<string, AnyObjectSchema, string, boolean>>()(
  "name schema plural searchable filterable access hooks unique indexes count timestamps requireIfMatch aggregates",
);
const ACCESS_OPTION_KEYS = optionKeys<ResourceAccess>()(
  "create read list update delete fields owner ownerBypass",
);

/**
 * A resource: a name and a Zod object schema, with its access rules, hooks, searchable, filterable,
 * unique and indexed fields. `crudkit()` turns it into five endpoints and a table.
 *
 * @example
 * const product = createResource({
 *   name: "product",                                   // /product/:id, and /products for lists
 *   schema: withId({ name: z.string().min(1), price: z.number().min(0) }),
 *   searchable: ["name"],
 *   indexes: ["price"],
 *   access: { read: true, list: true, create: ({ user }) => user !== null },
 * });
 */
export function createResource<
  const N extends string,
  S extends AnyObjectSchema,
  const P extends string = Pluralize<N>,
  const T extends boolean = true,
>(config: ResourceConfig<N, S, P, T>): Resource<N, S, P, T> {
  checkOptionKeys(config, RESOURCE_OPTION_KEYS, "createResource()");
  checkOptionKeys(config.access, ACCESS_OPTION_KEYS, `createResource() "${String(config.name)}", access`);
  if (typeof config.name !== "string" || !NAME.test(config.name)) {
    throw new ConfigError(
      `Resource name "${String(config.name)}" must start with a letter and hold only letters, digits and "_".`,
    );
  }
  const plural = config.plural ?? pluralize(config.name);
  if (!NAME.test(plural))
    throw new ConfigError(`Plural "${plural}" of resource "${config.name}" is not a valid name.`);
  const timestamps = config.timestamps ?? true;
  const every = withServerFields(readFields(config.schema), timestamps);
  // A list of ids (referencesMany) is no column: its junction table holds it (many-fields.ts).
  const fields = every.filter((f) => !f.many);
  const many = every.filter((f) => f.many);
  // crudkit's statements name columns of their own `ck_…` beside the record's (a rank, a parent,
  // a field rule's marker): a field of that name would be read in their place.
  const reserved = every.find((f) => f.name.startsWith("ck_"));
  if (reserved)
    throw new ConfigError(
      `Field "${reserved.name}" of "${config.name}": names starting with "ck_" are crudkit's own; rename it.`,
    );
  const searchable = config.searchable ?? [];
  for (const name of searchable) {
    const field = fields.find((f) => f.name === name);
    if (!field || (field.kind !== "string" && field.kind !== "enum")) {
      throw new ConfigError(
        `Searchable field "${name}" of "${config.name}" must be a string field of its schema.`,
      );
    }
  }
  for (const name of config.filterable ?? []) {
    const field = fields.find((f) => f.name === name);
    if (!field || field.kind === "json")
      throw new ConfigError(
        `Filterable field "${String(name)}" of "${config.name}" must be a field of its schema that is not JSON.`,
      );
  }
  checkAccess(config.name, every, config.access);
  const unique = columnSets(config.name, fields, "unique", config.unique);
  const indexes = columnSets(config.name, fields, "indexes", config.indexes);
  return {
    name: config.name,
    plural: plural as P,
    schema: config.schema,
    timestamps: timestamps as T,
    searchable,
    filterable: config.filterable?.map(String),
    access: (config.access ?? {}) as ResourceAccess,
    hooks: (config.hooks ?? {}) as Resource["hooks"],
    fields,
    many,
    unique,
    indexes,
    count: config.count ?? "exact",
    requireIfMatch: config.requireIfMatch === true,
    aggregates: checkedAggregates(config.name, fields, config.aggregates),
  };
}

function columnSets(
  resource: string,
  fields: readonly Field[],
  option: string,
  sets: readonly (string | readonly string[])[] | undefined,
): string[][] {
  return (sets ?? []).map((set) => {
    const columns = typeof set === "string" ? [set] : [...set];
    if (columns.length === 0 || columns.length > 8 || new Set(columns).size !== columns.length)
      throw new ConfigError(`${option} of "${resource}" takes 1 to 8 different fields per entry.`);
    for (const name of columns) {
      const field = fields.find((f) => f.name === name);
      if (!field || field.kind === "json")
        throw new ConfigError(
          `${option} of "${resource}" names "${name}", which is not a field of it that is not JSON.`,
        );
    }
    return columns;
  });
}

function checkAccess(resource: string, fields: readonly Field[], access: ResourceAccess | undefined): void {
  const named = (name: string) => fields.find((f) => f.name === name);
  for (const name of Object.keys(access?.fields ?? {})) {
    if (!named(name) || name === "id")
      throw new ConfigError(
        `access.fields names "${name}", which is not a field of "${resource}" other than id.`,
      );
  }
  const owner = access?.owner;
  if (owner !== undefined && named(owner)?.kind !== "string")
    throw new ConfigError(
      `The owner field "${owner}" of "${resource}" must be a string field of its schema.`,
    );
}

/** Every record has an `id`, and unless `timestamps: false`, `createdAt` and `updatedAt`. */
function withServerFields(fields: Field[], timestamps: boolean): Field[] {
  const byName = new Map(fields.map((f) => [f.name, f]));
  const id = byName.get("id");
  if (id && id.kind !== "string") throw new ConfigError(`The "id" field must be a string.`);
  const idSchema = id?.schema ?? z.string().min(1).max(255);
  const result: Field[] = [
    { name: "id", kind: "string", optional: false, nullable: false, hasDefault: true, schema: idSchema },
  ];
  for (const field of fields) if (field.name !== "id") result.push(field);
  if (timestamps) {
    for (const name of ["createdAt", "updatedAt"]) {
      const declared = byName.get(name);
      if (declared && declared.kind !== "date")
        throw new ConfigError(`"${name}" is a server-managed timestamp and must be a date field.`);
      if (!declared)
        result.push({
          name,
          kind: "date",
          optional: false,
          nullable: false,
          hasDefault: true,
          schema: z.date(),
        });
    }
  }
  return result;
}

/**
 * Adds `id: string` (optional on input, generated by the server as a UUIDv7) to a set of fields.
 *
 * @example
 * const schema = withId({ name: z.string(), price: z.number() });
 */
export function withId<Shape extends z.ZodRawShape>(fields: Shape) {
  return z.object({ id: z.string().min(1).max(255).optional(), ...fields });
}
