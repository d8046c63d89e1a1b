// What read replicas need from an engine (replica-set.ts): where the primary's log is now, how far a
// replica has replayed it, and the order of two such positions. A position is the engine's own:
// a WAL location on PostgreSQL, a GTID list on MariaDB. It travels as text in `Crudkit-Position`.

import type { Kysely } from "kysely";

export interface Replication<Position = unknown> {
  /**
   * The primary's log position now: every commit acknowledged before the call is at or before it.
   */
  primaryPosition(db: Kysely<any>): Promise<Position>;
  /** How far a replica has replayed the primary's log; throws when `db` is no replica. */
  replayed(db: Kysely<any>): Promise<Position>;
  /** Whether a replica that replayed `replayed` holds every commit up to `wanted`. */
  reached(replayed: Position, wanted: Position): boolean;
  /** A position as the text a client carries back. */
  format(position: Position): string;
  /** The text a client sent back, or undefined when it is not a position of this engine. */
  parse(text: string): Position | undefined;
}
