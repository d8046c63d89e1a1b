// Threads that run slow reads off the main connection, so however long a list over a big table
// takes, the event loop goes on serving other requests. An engine whose connection lives in the
// process (SQLite) offers them; lists ask it how big a table is and whether a statement stops
// early, and decide from that where to run.

import type { Worker } from "node:worker_threads";
import type { Kysely } from "kysely";
import type { QueryTemplate } from "./query-template.ts";

export interface ReaderThreads {
  /** A Kysely instance whose queries run on the least busy reader thread (started on first use). */
  pick(): Kysely<any>;
  /** About how many rows `table` has: a cheap look, repeated at most once a second. */
  tableSize(table: string): () => Promise<number>;
  /**
   * Whether `template` reads rows in order from an index and stops at its LIMIT: cheap whatever the
   * table's size, so it runs on the main connection.
   */
  walksIndex(
    db: Kysely<any>,
    template: QueryTemplate,
    values: Readonly<Record<string, unknown>>,
    filtered: boolean,
  ): Promise<boolean>;
  /** Reads sent to the threads and not answered yet (metrics()). */
  queued(): number;
  /** The threads running now, for diagnostics and tests. */
  threads(): readonly Worker[];
  close(): Promise<void>;
}
