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
import type { DriverErrors } from "../core/driver-errors.ts";
import { APIError } from "../core/errors.ts";
import { POSITION_HEADER, type ReadRouter } from "../core/read-routing.ts";
import type { ReplicaSet } from "../db/replica-set.ts";

/** Users whose last write this instance remembers; the oldest is forgotten past it. */
const REMEMBERED_WRITERS = 10_000;
/** A position header longer than this is no position (a GTID list of a few domains is ~100 characters). */
const MAX_POSITION_TEXT = 1024;

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
  // A pin is replaced by any position taken after it, which covers the pinned write.
  const later = (known: unknown, position: unknown) =>
    known === undefined || isPinned(known) || isPinned(position) || replication.reached(position, known)
      ? position
      : known;

  return {
    route(caller) {
      const wanted: unknown[] = [];
      const text = caller.headers.get(POSITION_HEADER);
      if (text !== null) {
        const position = text.length <= MAX_POSITION_TEXT ? replication.parse(text) : undefined;
        if (position === undefined) return primary;
        wanted.push(position);
      }
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
      // An answer the endpoint chose (a 404, a 400) is no replica's failure; a statement that ran
      // out of time would only run out of time again.
      if (error instanceof APIError || errors.timedOut(error)) return false;
      return replicas.failed(db, errors.unavailable(error));
    },
  };
}

function isPinned(position: unknown): position is Pinned {
  return typeof position === "object" && position !== null && "until" in position;
}
