// Everything a resource's operations need, built once when the app is assembled.

import type { Kysely } from "kysely";
import type { DriverErrors } from "../core/driver-errors.ts";
import type { EndpointContext } from "../core/endpoint.ts";
import { APIError } from "../core/errors.ts";
import type { LogFields } from "../core/flood-guard.ts";
import type { User } from "../core/identity.ts";
import type { OwnedFiles, ReadCache } from "../core/plugin.ts";
import type { Database } from "../db/database.ts";
import type { DialectProfile } from "../db/dialect.ts";
import type { ListRules } from "../query/list-query.ts";
import { type Condition, type FilterField, parseRuleWhere } from "../query/where.ts";
import type { Field } from "../schema/field-model.ts";
import { createInputValidator, type InputValidator } from "../schema/input-validation.ts";
import type { Operation } from "./access.ts";
import { type Aggregator, createAggregator } from "./aggregate-sql.ts";
import { createFieldPolicy, type FieldPolicy, gatesOf } from "./field-access.ts";
import { type FileFields, fileFieldsOf } from "./file-fields.ts";
import { type AnyResourceHooks, chainHooks, type HookChain, type HookContext } from "./hooks.ts";
import { junctionName, withManyFields } from "./many-fields.ts";
import { createRecordStore, type RecordStore } from "./record-store.ts";
import { checkedReferences } from "./reference-reads.ts";
import type { RelationGraph } from "./relations.ts";
import { RuleCache } from "./rule-cache.ts";
import { rulePathFields, throughRelations } from "./rule-paths.ts";
import type { AnyResource } from "./types.ts";

/**
 * How an app reports what its callers must not see: the message, the error behind it, and over
 * HTTP the request's id (`X-Request-Id`, also in the body of every 5xx), to find the request a
 * user quotes.
 */
export type Log = (message: string, error?: unknown, fields?: LogFields) => void;

export interface ResourceRuntime {
  readonly resource: AnyResource;
  readonly db: Kysely<any>;
  /** How the database's errors read (a foreign key that refused a delete, say). */
  readonly driverErrors: DriverErrors;
  /** The database's dialect profile: what a condition is compiled for outside the store. */
  readonly profile: DialectProfile;
  readonly store: RecordStore;
  /** The statements of `GET /<plural>/aggregate`. */
  readonly aggregator: Aggregator;
  readonly validator: InputValidator;
  readonly hooks: HookChain;
  readonly listRules: ListRules;
  /** The list rules for a caller who may not read `hidden`: she cannot search, sort or filter on them. */
  listRulesFor(hidden: ReadonlySet<string>): ListRules;
  readonly fieldPolicy: FieldPolicy;
  /** Every field a rule's `Where` may name: all that are not JSON, hidden or not. */
  readonly ruleFields: ReadonlyMap<string, FilterField>;
  /** What a rule may name: the fields, and those of records references reach (`project.orgId`). */
  readonly rulePaths: ReadonlyMap<string, FilterField>;
  /** A `Where` a rule returned, checked and made ready for SQL; a mistake is the server's (a 500 naming `rule`). */
  parseRule(where: object, rule: string): Condition | undefined;
  readonly readCache: ReadCache | undefined;
  readonly log: Log;
  /** How the app's resources point at each other. */
  readonly relations: RelationGraph;
  /** Fields a schema default fills when the body leaves them out. */
  readonly defaulted: ReadonlySet<string>;
  /** The reference fields a write checks the caller may read the target of (`requireRead`). */
  readonly references: readonly Field[];
  /** The resource's `fileRef` fields, when it has any. */
  readonly fileFields: FileFields | undefined;
  /** Who keeps uploaded files (the upload plugin), for expanding file fields. */
  readonly files: OwnedFiles | undefined;
  /** The runtime of another resource of the app (relations cross resources). */
  runtimeOf(resource: string): ResourceRuntime;
}

export interface RuntimeOptions {
  database: Database;
  pluginHooks: readonly AnyResourceHooks[];
  defaultLimit: number;
  maxLimit: number;
  readCache: ReadCache | undefined;
  log: Log;
  relations: RelationGraph;
  files: OwnedFiles | undefined;
  runtimeOf(resource: string): ResourceRuntime;
}

export function createResourceRuntime(resource: AnyResource, options: RuntimeOptions): ResourceRuntime {
  const managed = resource.timestamps ? ["createdAt", "updatedAt"] : [];
  const sortable = resource.fields.filter((f) => f.kind !== "json").map((f) => f.name);
  const ruleFields = filterFields({ ...resource, filterable: undefined });
  const rulePaths = rulePathFields(resource, options.relations, (r) =>
    r === resource ? ruleFields : filterFields({ ...r, filterable: undefined }),
  );
  const filterable = filterFields(resource);
  // `filter[author.name]`: the filterable fields of every record a reference points at; through a
  // list of ids, `filter[tags.name]`: of any record it names.
  for (const relation of options.relations.expandable(resource.name).values()) {
    if ((relation.kind !== "forward" && relation.kind !== "list") || !filterable.has(relation.field))
      continue;
    const through = relation.kind === "list" ? filterable.get(relation.field)!.junction : undefined;
    const target = options.relations.resource(relation.target)!;
    for (const field of filterFields(target).values())
      filterable.set(`${relation.name}.${field.name}`, {
        name: `${relation.name}.${field.name}`,
        kind: field.kind,
        enumValues: field.enumValues,
        via: {
          relation: relation.name,
          field: relation.field,
          target: target.name,
          targetField: field.name,
          ...(through && { through }),
        },
      });
  }
  const listRules: ListRules = {
    resource: resource.name,
    count: resource.count,
    cursors: true,
    sortable: new Set(sortable),
    searchable: resource.searchable,
    filterable,
    defaultLimit: options.defaultLimit,
    maxLimit: options.maxLimit,
  };
  // A handful of visibilities at most (one per role), each built once.
  const narrowed = new Map<string, ListRules>();
  // The same answer of a rule is parsed once (a refused one throws each time: nothing is kept).
  const parsedRules = new RuleCache();
  const runtime: ResourceRuntime = {
    resource,
    db: options.database.kysely,
    driverErrors: options.database.profile.errors,
    profile: options.database.profile,
    store: withManyFields(
      createRecordStore(resource, options.database, ruleFields, options.log),
      resource,
      options.database.profile.errors,
      options.database.kysely,
    ),
    aggregator: createAggregator(resource, options.database, ruleFields),
    validator: createInputValidator(resource.name, [...resource.fields, ...resource.many], managed),
    hooks: chainHooks([resource.hooks, ...options.pluginHooks]),
    listRules,
    listRulesFor(hidden) {
      const gated = gatesOf(hidden);
      if (hidden.size === 0 && !gated) return listRules;
      // A field she reads on some rows only is filtered on those rows (list.ts), and neither
      // sorted nor searched on: an order or a match would tell the other rows' values apart.
      const unseen = (name: string) => hidden.has(name) || gated?.has(name) === true;
      const key = `${[...hidden].sort().join(",")}|${gated ? [...gated.keys()].sort().join(",") : ""}`;
      let rules = narrowed.get(key);
      if (!rules) {
        rules = {
          ...listRules,
          sortable: new Set(sortable.filter((f) => !unseen(f))),
          searchable: resource.searchable.filter((f) => !unseen(f)),
          filterable: new Map(
            [...filterable].filter(([name, f]) => !hidden.has(name) && !(f.via && unseen(f.via.field))),
          ),
        };
        if (narrowed.size < 64) narrowed.set(key, rules);
      }
      return rules;
    },
    fieldPolicy: createFieldPolicy(resource.access.fields, (where, rule) => runtime.parseRule(where, rule)),
    ruleFields,
    rulePaths,
    parseRule(where, rule) {
      return parsedRules.get(where, rule, () => {
        const parsed = parseRuleWhere(where, rulePaths, rule);
        try {
          return parsed && throughRelations(parsed, runtime);
        } catch (error) {
          throw new Error(`crudkit: ${rule} returned an invalid filter: ${(error as Error).message}`);
        }
      });
    },
    readCache: options.readCache,
    log: options.log,
    relations: options.relations,
    defaulted: new Set(resource.fields.filter((f) => f.hasDefault).map((f) => f.name)),
    references: checkedReferences(resource.fields),
    fileFields: fileFieldsOf(resource, options.files),
    files: options.files,
    runtimeOf: options.runtimeOf,
  };
  return runtime;
}

/** The fields `filter[…]` may name: the resource's `filterable`, or every field that is not JSON. */
export function filterFields(
  resource: Pick<AnyResource, "name" | "fields" | "filterable"> & { many?: AnyResource["many"] },
): Map<string, FilterField> {
  const allowed = resource.filterable ? new Set<string>(resource.filterable) : undefined;
  const fields = new Map<string, FilterField>();
  for (const field of resource.fields) {
    if (field.kind === "json" || (allowed && !allowed.has(field.name))) continue;
    fields.set(field.name, { name: field.name, kind: field.kind, enumValues: field.enumValues });
  }
  // A list of ids (referencesMany): `has`, answered from its junction table.
  for (const field of resource.many ?? [])
    if (!allowed || allowed.has(field.name))
      fields.set(field.name, { name: field.name, kind: "list", junction: junctionName(resource, field) });
  return fields;
}

/**
 * `{ ...base, ...extra }` as a new object. Written with Object.assign because on Node 20 (V8 11)
 * a spread followed by further properties takes a slow path: about 0.5 µs per added property,
 * measured, against 0.05 µs for Object.assign; these run several times per request.
 */
export function extend<A extends object, B extends object>(base: A, extra: B): A & B {
  return Object.assign({}, base, extra);
}

/**
 * Where a read of records runs: `ctx.readDb` (a replica, with read replicas), except for an answer a
 * cache keeps. A cache forgets a record when it is written, and a replica a little behind could then
 * hand it the version before the write, kept until the next write: cached reads come from the primary.
 */
export function readsFor(ctx: EndpointContext, cached: boolean): Kysely<any> {
  return cached ? ctx.db : (ctx.readDb ?? ctx.db);
}

/** What hooks see of an operation on the resource; `id` for the operations on one record. */
export function hookContext(
  ctx: EndpointContext,
  rt: ResourceRuntime,
  operation: Operation,
  user: User | null,
): HookContext;
export function hookContext(
  ctx: EndpointContext,
  rt: ResourceRuntime,
  operation: Operation,
  user: User | null,
  id: string,
): HookContext & { id: string };
export function hookContext(
  ctx: EndpointContext,
  rt: ResourceRuntime,
  operation: Operation,
  user: User | null,
  id?: string,
): HookContext {
  return contextOf(ctx, rt.resource.name, operation, user, id);
}

/** What hooks see of a request; plugin routes (uploads) pass their own resource name. */
export function hookContextOf(
  ctx: EndpointContext,
  resource: string,
  operation: Operation,
  user: User | null,
): HookContext;
export function hookContextOf(
  ctx: EndpointContext,
  resource: string,
  operation: Operation,
  user: User | null,
  id: string,
): HookContext & { id: string };
export function hookContextOf(
  ctx: EndpointContext,
  resource: string,
  operation: Operation,
  user: User | null,
  id?: string,
): HookContext {
  return contextOf(ctx, resource, operation, user, id);
}

function contextOf(
  ctx: EndpointContext,
  resource: string,
  operation: Operation,
  user: User | null,
  id: string | undefined,
): HookContext {
  const context: HookContext & { id?: string } = {
    resource,
    operation,
    user,
    headers: ctx.headers,
    source: ctx.source,
    overrideAccess: ctx.overrideAccess,
    ip: ctx.ip,
    db: ctx.db,
    api: ctx.api,
    cache: ctx.cache,
  };
  // Set on the literal, not spread into a copy: one object, and only where there is an id.
  if (id !== undefined) context.id = id;
  return context;
}

export function capitalize(name: string): string {
  return name.charAt(0).toUpperCase() + name.slice(1);
}

export function notFound(rt: ResourceRuntime, id: string): never {
  const shown = id.length > 80 ? `${id.slice(0, 80)}…` : id;
  throw new APIError(
    "NOT_FOUND",
    `No ${rt.resource.name} with id "${shown.replace(/[^\x20-\x7e]/g, "?")}" exists.`,
  );
}
