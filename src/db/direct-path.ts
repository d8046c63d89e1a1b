// An engine may run crudkit's compiled statements without Kysely's executor: the same steps
// (take the connection, run, give it back) without its layers of promises, measured a few µs less
// per statement (see each engine's driver). The engine registers the path when it opens a Kysely
// instance, keyed by the instance's adapter, which its transactions and pinned connections share;
// the engine decides which of those may use it.

import type { Kysely } from "kysely";
import { observedRun, type StatementProbe } from "./observed-statements.ts";

export interface StatementResult<Row = Record<string, unknown>> {
  rows: Row[];
  /** For a write, how many rows it changed. */
  numAffectedRows?: bigint;
}

export interface DirectPath {
  run(sql: string, parameters: readonly unknown[]): StatementResult | Promise<StatementResult>;
  /** The first row a reading statement returns, read as one row where the engine can. */
  first(
    sql: string,
    parameters: readonly unknown[],
  ): Record<string, unknown> | undefined | Promise<Record<string, unknown> | undefined>;
}

const paths = new WeakMap<object, (db: Kysely<any>) => DirectPath | undefined>();
const probes = new WeakMap<object, StatementProbe>();
/** Each engine path with its statements observed, made once. */
const observed = new WeakMap<DirectPath, DirectPath>();

/** Registers the direct path of `kysely` and of what shares its adapter, when `resolve` allows. */
export function registerDirectPath(
  kysely: Kysely<any>,
  resolve: (db: Kysely<any>) => DirectPath | undefined,
): void {
  paths.set(kysely.getExecutor().adapter, resolve);
}

/** The statements `kysely`'s direct path runs are observed by `probe` (observed-statements.ts). */
export function observeDirectPath(kysely: Kysely<any>, probe: StatementProbe): void {
  probes.set(kysely.getExecutor().adapter, probe);
}

/** How to run statements on `db` straight away, when its engine allows it now. */
export function directPath(db: Kysely<any>): DirectPath | undefined {
  const { adapter } = db.getExecutor();
  const path = paths.get(adapter)?.(db);
  const probe = path && probes.get(adapter);
  if (!probe) return path;
  let watched = observed.get(path);
  if (!watched) {
    const engine = path;
    watched = {
      run(sql, parameters) {
        const end = probe.start(sql);
        return end ? observedRun(end, () => engine.run(sql, parameters)) : engine.run(sql, parameters);
      },
      first(sql, parameters) {
        const end = probe.start(sql);
        return end ? observedRun(end, () => engine.first(sql, parameters)) : engine.first(sql, parameters);
      },
    };
    observed.set(path, watched);
  }
  return watched;
}
