// Compiles a checked filter (where.ts) to a parameterized SQL condition for one dialect. The SQL
// depends only on the filter's shape (fields, operators, how many `in` values), never on its
// values, so a caller can cache what it builds under `shape` and bind `values` per request.
//
//   { status: { in: ["a", "b"] }, name: { contains: "hat" } }
//   → ("status" in (?, ?) and "name" ilike ? escape '\')        (PostgreSQL; LIKE elsewhere)

import { type Expression, type SqlBool, sql } from "kysely";
import { dateToColumn } from "../db/column-values.ts";
import type { DialectProfile } from "../db/dialect.ts";
import { slot } from "../db/query-template.ts";
import {
  type Condition,
  type FieldCondition,
  type FilterField,
  isSubSelect,
  type RelatedCondition,
  type SubSelect,
} from "./where.ts";

/** The subquery a condition is compiled inside: its table, the alias it has there, how deep. */
interface Within {
  table: string;
  alias: string;
  depth: number;
}

export interface CompiledWhere {
  /** Same for every filter that compiles to the same SQL: the key to cache it under. */
  shape: string;
  /** The slot values, named `w0`, `w1`… (or with another prefix), as column values. */
  values: Record<string, unknown>;
  /** Builds the condition, with slots where the values go. Called only on a cache miss. */
  build(): Expression<SqlBool>;
  /** The condition with its values bound, for a query built per request (plugin tables). */
  expression(): Expression<SqlBool>;
}

export interface CompileOptions {
  /**
   * For a statement on one record of this table (by id): other tables are asked about that row
   * (`EXISTS … WHERE related.id = t.ref`), the cheapest for one row. Without it they are sets
   * computed once (`t.ref IN (SELECT id …)`), which a page or a count reads through an index.
   */
  oneRowOf?: string;
  /**
   * Fields the caller reads on some rows only, with the rows' condition: a condition on one of
   * them holds only there, as `coalesce(<rule>, false) and <condition>`. Two-valued, so that
   * under a `not` too the answer on any other row is the same whatever the field holds.
   */
  gates?: ReadonlyMap<string, Condition> | undefined;
}

export function compileWhere(
  condition: Condition,
  fields: ReadonlyMap<string, FilterField>,
  profile: DialectProfile,
  /** Names the slots `<prefix>0`, `<prefix>1`…, so two filters can share a statement. */
  prefix = "w",
  { oneRowOf, gates }: CompileOptions = {},
): CompiledWhere {
  const slots = new Slots(prefix, profile);
  // One pass takes the values and the shape, and remembers how to build the SQL.
  const visit = (condition: Condition, named = fields, within?: Within): Visited => {
    if (condition.kind === "and" || condition.kind === "or")
      return group(
        condition.kind,
        condition.items.map((item) => visit(item, named, within)),
      );
    if (condition.kind === "not") {
      const inner = visit(condition.item, named, within);
      return { shape: `not(${inner.shape})`, build: () => sql<SqlBool>`not ${inner.build()}` };
    }
    if (condition.kind === "related") return visitRelated(condition, visit, within, oneRowOf !== undefined);
    if ((condition.op === "in" || condition.op === "nin") && isSubSelect(condition.value))
      return visitSubSelect(condition, named, condition.value, within, visit, oneRowOf);
    const gate = !within && gates?.get(condition.field);
    if (!gate) return visitField(condition, named, slots, profile);
    const rule = visit(gate);
    const leaf = visitField(condition, named, slots, profile);
    return {
      shape: `gate(${rule.shape}):${leaf.shape}`,
      build: () => sql<SqlBool>`(coalesce(${rule.build()}, false) and ${leaf.build()})`,
    };
  };
  const visited = visit(condition);
  const build = visited.build;
  // The two forms make different statements: their shapes must not share a cache entry.
  const shape = oneRowOf === undefined ? visited.shape : `1:${visited.shape}`;
  const expression = () => slots.inline(build);
  return { shape, values: slots.values, build, expression };
}

/** Where a filter's values go: slots named `<prefix>0`, `<prefix>1`…, or the values themselves. */
class Slots {
  readonly values: Record<string, unknown> = {};
  #next = 0;
  #inline = false;

  constructor(
    private readonly prefix: string,
    private readonly profile: DialectProfile,
  ) {}

  /** A slot holding `value` as `field`'s column holds it. */
  bind(field: FilterField, value: unknown): string {
    return this.raw(toColumn(field, value, this.profile));
  }

  /** A slot holding `value` as it is (a LIKE pattern). */
  raw(value: unknown): string {
    const name = `${this.prefix}${this.#next++}`;
    this.values[name] = value;
    return name;
  }

  /** What stands for slot `name` in SQL being built: the slot, or its value when built inline. */
  at = (name: string): unknown => (this.#inline ? this.values[name] : slot(name));

  /** Builds with the values written in (for a query built per request). */
  inline<T>(build: () => T): T {
    this.#inline = true;
    try {
      return build();
    } finally {
      this.#inline = false;
    }
  }
}

// Only the shape and the values are taken per request; Kysely's expressions are made in `build`,
// which runs when the shape's statement is not cached yet.
function visitField(
  c: FieldCondition,
  named: ReadonlyMap<string, FilterField>,
  slots: Slots,
  profile: DialectProfile,
): Visited {
  const { at } = slots;
  const field = named.get(c.field)!;
  const column = field.column ?? c.field;
  switch (c.op) {
    case "isNull": {
      const isNull = c.value === true;
      return {
        shape: `${c.field}:${isNull ? "null" : "notnull"}`,
        build: () =>
          isNull ? sql<SqlBool>`${sql.ref(column)} is null` : sql<SqlBool>`${sql.ref(column)} is not null`,
      };
    }
    case "in":
    case "nin": {
      // An empty set (from a rule or server code: `in: []` for a user with no memberships yet)
      // holds nothing: `in` matches no row, `nin` every row, null included.
      if ((c.value as unknown[]).length === 0) {
        const none = c.op === "in";
        return {
          shape: `${c.field}:${c.op}0`,
          build: () => (none ? sql<SqlBool>`1 = 0` : sql<SqlBool>`1 = 1`),
        };
      }
      const written = c.fixed ? writtenList(c.value as unknown[]) : undefined;
      if (written) {
        // A rule's own values (memberOf's roles): in the SQL, where a generic plan sees them.
        const negate = sql.raw(c.op === "nin" ? "not " : "");
        return {
          shape: `${c.field}:${c.op}=${JSON.stringify(c.value)}`,
          build: () => {
            const ref = sql.ref(column);
            const exactIn = sql<SqlBool>`${exact(field, profile, ref)} ${negate}in (${sql.join(written.map((w) => exact(field, profile, w)))})`;
            return c.op === "in" && comparesBytes(field, profile)
              ? sql<SqlBool>`(${ref} in (${sql.join(written)}) and ${exactIn})`
              : exactIn;
          },
        };
      }
      const names = (c.value as unknown[]).map((v) => slots.bind(field, v));
      return {
        shape: `${c.field}:${c.op}${names.length}`,
        build: () => {
          const ref = sql.ref(column);
          const list = sql.join(names.map((n) => exact(field, profile, at(n))));
          const negate = sql.raw(c.op === "nin" ? "not " : "");
          const exactIn = sql<SqlBool>`${exact(field, profile, ref)} ${negate}in (${list})`;
          // MySQL: the plain `in` first, so an index on the column still serves it.
          return c.op === "in" && comparesBytes(field, profile)
            ? sql<SqlBool>`(${ref} in (${sql.join(names.map(at))}) and ${exactIn})`
            : exactIn;
        },
      };
    }
    case "has": {
      // The records whose list holds the id: a set from the junction table, read by its index
      // on target (many-fields.ts): "id" in (select "owner" from "post_tagIds" where "target" = ?).
      const name = slots.raw(c.value);
      const junction = field.junction!;
      return {
        shape: `${c.field}:has`,
        build: () =>
          sql<SqlBool>`${sql.ref("id")} in (select ${sql.ref("owner")} from ${sql.table(junction)} where ${sql.ref("target")} = ${at(name)})`,
      };
    }
    case "contains":
    case "startsWith":
    case "endsWith": {
      const escaped = (c.value as string).replace(/[\\%_]/g, "\\$&");
      const pattern =
        c.op === "contains" ? `%${escaped}%` : c.op === "startsWith" ? `${escaped}%` : `%${escaped}`;
      const name = slots.raw(pattern);
      return {
        shape: `${c.field}:${c.op}`,
        build: () => profile.likeMatch(sql.ref(column), at(name)),
      };
    }
    default: {
      const name = slots.bind(field, c.value);
      const operator = SQL_OPERATORS[c.op];
      return {
        shape: `${c.field}:${c.op}`,
        build: () => {
          const ref = sql.ref(column);
          const compare = sql<SqlBool>`${exact(field, profile, ref)} ${sql.raw(operator)} ${exact(field, profile, at(name))}`;
          // MySQL: the plain `=` first, so an index on the column still serves it.
          return c.op === "eq" && comparesBytes(field, profile)
            ? sql<SqlBool>`(${ref} = ${at(name)} and ${compare})`
            : compare;
        },
      };
    }
  }
}

/** A condition compiled: its shape (the cache key of its statement), and how to build its SQL. */
type Visited = { shape: string; build: () => Expression<SqlBool> };

/** `(a and b …)` or `(a or b …)`. */
function group(kind: "and" | "or", parts: readonly Visited[]): Visited {
  return {
    shape: `${kind}(${parts.map((p) => p.shape).join(",")})`,
    build: () =>
      sql<SqlBool>`(${sql.join(
        parts.map((p) => p.build()),
        sql` ${sql.raw(kind)} `,
      )})`,
  };
}

// "orgId" in (select "ck_s1"."orgId" from "membership" as "ck_s1" where …): another table's values.
// On one row: exists (select 1 from "membership" as "ck_s1" where "ck_s1"."orgId" = "t"."orgId" and …).
function visitSubSelect(
  c: FieldCondition,
  named: ReadonlyMap<string, FilterField>,
  from: SubSelect,
  within: Within | undefined,
  visit: (condition: Condition, named: ReadonlyMap<string, FilterField>, within?: Within) => Visited,
  oneRowOf: string | undefined,
): Visited {
  const depth = (within?.depth ?? 0) + 1;
  const alias = `ck_s${depth}`;
  const inner = from.where ? visit(from.where, from.fields, { table: from.table, alias, depth }) : undefined;
  const column = named.get(c.field)?.column ?? c.field;
  // `not in` keeps its own meaning with nulls: only `in` is asked row by row.
  const perRow = oneRowOf !== undefined && c.op === "in";
  return {
    shape: `${c.field}:${c.op}(${from.table}.${from.column}:${inner?.shape ?? ""})`,
    build: () => {
      if (perRow) {
        const outer = sql.ref(`${within ? within.alias : oneRowOf}.${column}`);
        const same = sql<SqlBool>`${sql.ref(`${alias}.${from.column}`)} = ${outer}`;
        const where = inner ? sql<SqlBool>`${same} and ${inner.build()}` : same;
        return sql<SqlBool>`exists (select 1 from ${sql.table(from.table)} as ${sql.ref(alias)} where ${where})`;
      }
      const values = sql`select ${sql.ref(`${alias}.${from.column}`)} from ${sql.table(from.table)} as ${sql.ref(alias)}`;
      const query = inner ? sql`${values} where ${inner.build()}` : values;
      return sql<SqlBool>`${sql.ref(column)} ${sql.raw(c.op === "nin" ? "not in" : "in")} (${query})`;
    },
  };
}

// "projectId" in (select "related"."id" from "project" as "related" where …): the records a
// reference may point at, as a set the database computes once, not a subquery per row (an EXISTS
// correlated with each row made SQLite walk the whole table to count or page through a rule path;
// the set lets it read the few rows the reference's index holds for it). Inside another subquery,
// the referencing table is named by its alias there, and each level has an alias of its own (a
// rule through two relations: task → project → its organization). An empty reference is in no set
// (also under `not`, as EXISTS would say). On one record (`oneRowOf`), the reference's record is
// asked instead: exists (select 1 from "project" as "related" where "related"."id" = "task"."projectId" and …).
function visitRelated(
  c: RelatedCondition,
  visit: (condition: Condition, named: ReadonlyMap<string, FilterField>, within?: Within) => Visited,
  within: Within | undefined,
  oneRow: boolean,
): Visited {
  const depth = (within?.depth ?? 0) + 1;
  const alias = depth === 1 ? "related" : `related${depth}`;
  const from = within && c.from === within.table ? within.alias : c.from;
  const here = { table: c.table, alias, depth };
  const inner = visit(c.item, c.fields, here);
  const scope = c.scope ? visit(c.scope, c.fields, here) : undefined;
  const denied = c.scope === false;
  return {
    shape: `rel(${from}.${c.via}${c.through ? `@${c.through}` : ""}>${c.table}:${inner.shape}:${denied ? "none" : (scope?.shape ?? "")})`,
    build: () => {
      if (denied) return sql<SqlBool>`1 = 0`;
      const conditions = [inner.build(), ...(scope ? [scope.build()] : [])];
      if (c.through) {
        // Any record of the list: the owners of the junction rows naming a matching record.
        const targets = sql`select ${sql.ref(`${alias}.id`)} from ${sql.table(c.table)} as ${sql.ref(alias)} where ${sql.join(conditions, sql` and `)}`;
        return sql<SqlBool>`${sql.ref(`${from}.id`)} in (select ${sql.ref("owner")} from ${sql.table(c.through)} where ${sql.ref("target")} in (${targets}))`;
      }
      const reference = sql.ref(`${from}.${c.via}`);
      if (oneRow)
        return sql<SqlBool>`exists (select 1 from ${sql.table(c.table)} as ${sql.ref(alias)} where ${sql.ref(`${alias}.id`)} = ${reference} and ${sql.join(conditions, sql` and `)})`;
      const targets = sql`select ${sql.ref(`${alias}.id`)} from ${sql.table(c.table)} as ${sql.ref(alias)} where ${sql.join(conditions, sql` and `)}`;
      return sql<SqlBool>`(${reference} is not null and ${reference} in (${targets}))`;
    },
  };
}

const SQL_OPERATORS = { eq: "=", ne: "<>", gt: ">", gte: ">=", lt: "<", lte: "<=" } as const;

/**
 * Texts a rule fixed (`fixed`) that may be written into SQL as literals: only of letters, digits
 * and ` _.:-`, so that no quote, backslash or NUL ever reaches the statement, whatever the
 * dialect's escaping. Undefined when one is not: the list is bound as usual.
 */
function writtenList(values: readonly unknown[]): Expression<unknown>[] | undefined {
  if (!values.every((v) => typeof v === "string" && SAFE_LITERAL.test(v))) return undefined;
  return values.map((v) => sql.raw(`'${v as string}'`));
}

const SAFE_LITERAL = /^[\p{L}\p{N} _.:-]{1,100}$/u;

/**
 * Text compares by its bytes on every dialect: MySQL's tables compare case-insensitively (for
 * search), so there both sides are cast to binary. Text matching (`contains`…) stays
 * case-insensitive everywhere, as search is.
 */
function exact(field: FilterField, profile: DialectProfile, value: unknown): Expression<unknown> {
  const expression = isExpression(value) ? value : sql`${value}`;
  return comparesBytes(field, profile) ? sql`cast(${expression} as binary)` : expression;
}

function comparesBytes(field: FilterField, profile: DialectProfile): boolean {
  return profile.textEqualityIgnoresCase && (field.kind === "string" || field.kind === "enum");
}

function isExpression(value: unknown): value is Expression<unknown> {
  return typeof (value as { toOperationNode?: unknown })?.toOperationNode === "function";
}

/** A checked value as its column holds it. */
function toColumn(field: FilterField, value: unknown, profile: DialectProfile): unknown {
  if (field.kind === "date") return dateToColumn(value as Date, profile);
  if (field.kind === "boolean" && profile.booleansAsIntegers) return value ? 1 : 0;
  return value;
}
