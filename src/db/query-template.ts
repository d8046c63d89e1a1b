// Compiled queries with named slots: a query is built and compiled by Kysely once, then each
// request only fills in its parameters. This keeps builder and compiler work off the hot path.

import type { Compilable, CompiledQuery, Kysely } from "kysely";
import { type Deferrable, holdInsert } from "./coalesced-inserts.ts";
import { directPath } from "./direct-path.ts";

/** A placeholder compiled into a query's parameters, filled in at execution. */
class Slot {
  constructor(readonly name: string) {}
}

/** A parameter placeholder, typed as anything so it fits any builder position. */
export function slot(name: string): any {
  return new Slot(name);
}

export interface QueryTemplate {
  readonly compiled: CompiledQuery;
  /** For each parameter: the slot name to read, or the constant compiled in. */
  readonly parameters: readonly (Slot | unknown)[];
}

export function compileTemplate(query: Compilable): QueryTemplate {
  const compiled = query.compile();
  return { compiled, parameters: compiled.parameters };
}

/** Runs a template with the slot values given (on a Kysely instance or a transaction). */
export async function runTemplate<Row = Record<string, unknown>>(
  db: Kysely<any>,
  template: QueryTemplate,
  values: Readonly<Record<string, unknown>>,
): Promise<{ rows: Row[]; numAffectedRows?: bigint }> {
  const parameters = parametersOf(template, values);
  // Straight to the engine where it allows (SQLite's prepared statement, PostgreSQL's pool).
  const direct = directPath(db);
  if (direct) return direct.run(template.compiled.sql, parameters) as { rows: Row[] };
  return execute<Row>(db, template, parameters);
}

/**
 * The first row a template reads (a lookup by key), or undefined. On SQLite it is read as one
 * row, not as a list of one: no array, and the statement stops at that row.
 */
export async function firstRow<Row = Record<string, unknown>>(
  db: Kysely<any>,
  template: QueryTemplate,
  values: Readonly<Record<string, unknown>>,
): Promise<Row | undefined> {
  const parameters = parametersOf(template, values);
  const direct = directPath(db);
  if (direct) return (await direct.first(template.compiled.sql, parameters)) as Row | undefined;
  return (await execute<Row>(db, template, parameters)).rows[0];
}

/**
 * Runs an INSERT template that a batch's transaction may hold back and send with the rows after
 * it as one statement (coalesced-inserts.ts). Anywhere else it runs as `runTemplate` would.
 */
export async function runDeferrable(
  db: Kysely<any>,
  template: QueryTemplate,
  values: Readonly<Record<string, unknown>>,
  deferrable: Deferrable,
): Promise<void> {
  const parameters = parametersOf(template, values);
  const direct = directPath(db);
  if (direct) {
    await direct.run(template.compiled.sql, parameters);
    return;
  }
  if (!holdInsert(db, template.compiled, parameters, deferrable)) await execute(db, template, parameters);
}

function parametersOf(template: QueryTemplate, values: Readonly<Record<string, unknown>>): unknown[] {
  return template.parameters.map((p) => (p instanceof Slot ? values[p.name] : p));
}

function execute<Row>(
  db: Kysely<any>,
  template: QueryTemplate,
  parameters: unknown[],
): Promise<{ rows: Row[]; numAffectedRows?: bigint }> {
  // Named, not spread: a spread followed by a property is V8's slow path (see resource/runtime.ts extend).
  const { query, queryId, sql: text } = template.compiled;
  return db.executeQuery<Row>({ query, queryId, sql: text, parameters } as CompiledQuery<Row>);
}
