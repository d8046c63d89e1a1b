// Read-your-writes over read replicas (core/read-routing.ts's port). After a write, the primary's
// log position is taken and kept where the caller's next reads find it:
//   - in the `Crudkit-Position` response header, which a client sends back (the typed client does)
//     so that her reads on any instance see the write;
//   - in this instance's memory, per user id, so that a signed-in caller who sends nothing back
//     still sees her writes here;
//   - for server code (`app.api`), as the instance's last write: its reads see every write the
//     instance made.
// A read then goes to a replica that replayed every such position and is within maxLag, else to the
// primary. A position header that is not one of this engine's sends the read to the primary:
// whatever it meant, the primary has it.

import type { Kysely } from "kysely";
import { type DriverErrors, type ErrorFields, someCause } from "../core/driver-errors.ts";
import { APIError } from "../core/errors.ts";
import { POSITION_HEADER, type ReadRouter } from "../core/read-routing.ts";
import type { ReplicaSet } from "../db/replica-set.ts";

/** Users whose last write this instance remembers; the oldest is forgotten past it. */
const REMEMBERED_WRITERS = 10_000;
/** A position header longer than this is no position (a GTID list of a few domains is ~100 characters). */
const MAX_POSITION_TEXT = 1024;
/** Positions a request may send at once (a client's writes in flight together). */
const MAX_SENT_POSITIONS = 16;

/** A writer whose write's position could not be read: her reads go to the primary until then. */
interface Pinned {
  until: number;
}

/** The router of an app whose database has replicas (ContextDeps.reads). */
export function readRouter(
  primary: Kysely<any>,
  replicas: ReplicaSet,
  errors: DriverErrors,
  /** Seconds: how long a writer whose position is unknown reads from the primary. */
  maxLag: number,
): ReadRouter {
  const { replication } = replicas;
  const writers = new Map<string, unknown>();
  let serverWrote: unknown;

  // Positions of one caller's writes may arrive out of order (two at once): the later one stays.
  // A pin stays until it expires: a position read meanwhile may predate the pinned write's commit.
  const later = (known: unknown, position: unknown) => {
    if (known === undefined) return position;
    if (isPinned(known)) return known.until > Date.now() ? known : position;
    return isPinned(position) || replication.reached(position, known) ? position : known;
  };

  return {
    route(caller) {
      const sent = sentPositions(caller.headers);
      if (sent === undefined) return primary;
      const wanted: unknown[] = sent;
      const own =
        caller.source === "server"
          ? serverWrote
          : caller.userId === undefined
            ? undefined
            : writers.get(caller.userId);
      if (own !== undefined) {
        if (isPinned(own)) {
          if (own.until > Date.now()) return primary;
        } else wanted.push(own);
      }
      return replicas.choose(wanted) ?? primary;
    },
    async wrote(caller) {
      let position: unknown;
      try {
        position = await replicas.position();
      } catch {
        // The primary answered the write but not this: the caller reads from it for a while.
        position = { until: Date.now() + maxLag * 2000 } satisfies Pinned;
      }
      // The answer covers what the caller sent too, so a client that sends several positions
      // (requests in flight at once) may replace those it sent by the one answered.
      if (!isPinned(position))
        for (const sent of sentPositions(caller.headers) ?? []) position = later(sent, position);
      // Server code reads every write this instance made, whoever made it.
      serverWrote = later(serverWrote, position);
      if (caller.source === "http" && caller.userId !== undefined) {
        const known = writers.get(caller.userId);
        writers.delete(caller.userId);
        writers.set(caller.userId, later(known, position));
        if (writers.size > REMEMBERED_WRITERS) writers.delete(writers.keys().next().value!);
      }
      return isPinned(position) ? undefined : replication.format(position);
    },
    failed(db, error) {
      // Only what the database's driver raised: an answer the endpoint chose (a 404), or a hook's
      // own error, would be the same on the primary. A replica that runs out of time (a stalled
      // disk) is skipped like one that is away.
      if (error instanceof APIError) return false;
      const away = errors.unavailable(error) || errors.timedOut(error);
      if (!away && !someCause(error, hasSqlState)) return false;
      return replicas.failed(db, away);
    },
  };

  /**
   * The positions a request sends back (space-separated, a client's writes in flight at once):
   * undefined when one is not a position of this engine, which sends the read to the primary.
   */
  function sentPositions(headers: Headers): unknown[] | undefined {
    const text = headers.get(POSITION_HEADER);
    if (text === null) return [];
    if (text.length > MAX_POSITION_TEXT) return undefined;
    const positions: unknown[] = [];
    for (const part of text.split(" ")) {
      const position = part === "" ? undefined : replication.parse(part);
      if (position === undefined || positions.length === MAX_SENT_POSITIONS) return undefined;
      positions.push(position);
    }
    return positions;
  }
}

/** An error the database answered: it carries a SQLSTATE (pg's `code`, mysql2's `sqlState`). */
function hasSqlState(fields: ErrorFields): boolean {
  const { code, sqlState } = fields as ErrorFields & { sqlState?: unknown };
  return (typeof code === "string" && /^[0-9A-Z]{5}$/.test(code)) || typeof sqlState === "string";
}

function isPinned(position: unknown): position is Pinned {
  return typeof position === "object" && position !== null && "until" in position;
}
