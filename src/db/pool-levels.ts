// How busy a database's connection pool is, for metrics(): each engine with a pool registers how to
// read it when the pool opens (keyed by its Kysely adapter, as the direct path is).

import type { Kysely } from "kysely";

export interface PoolLevels {
  /** Connections handed out now. */
  inUse: number;
  idle: number;
  /** Requests waiting for a connection. */
  waiting: number;
}

const pools = new WeakMap<object, () => PoolLevels>();

export function registerPoolLevels(kysely: Kysely<any>, read: () => PoolLevels): void {
  pools.set(kysely.getExecutor().adapter, read);
}

/** The pool's levels now; undefined before its first connection, and for SQLite (no pool). */
export function poolLevels(kysely: Kysely<any>): PoolLevels | undefined {
  return pools.get(kysely.getExecutor().adapter)?.();
}
