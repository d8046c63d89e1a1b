// Calls PostgreSQL's seal function (audit-seal-function.ts) after audited writes commit. A write on
// this instance wakes it once its transaction committed; many writes that commit while a call runs
// are sealed together by the next one. A poll seals what another instance, or one that stopped
// between a commit and its seal, left pending. Readers of entries (`verify()`, GET /audit/head,
// GET /audit/logs, the history routes) drain it first, so they see every entry committed before
// them: on PostgreSQL an entry is in `audit_logs` once sealed.

import { type Kysely, sql } from "kysely";
import { SEAL_FUNCTION } from "./audit-seal-function.ts";

/** Entries sealed per call: the head row stays locked (other sealers wait) for one batch only. */
const BATCH = 500;
/**
 * How long a woken sealer waits for more commits before it seals: each call costs a transaction
 * and the head's lock, so calls for a few entries each cost 8 writers more of their throughput
 * (bench/webhooks.ts, "audit chain cost"). It is how far the head may lag behind the last commit,
 * which drain() hides from readers of the chain.
 */
const GATHER_MS = 50;
/** How long close() waits to seal this instance's last commits. */
const CLOSE_MS = 2000;
/** How often pending entries are looked for without a wake (another instance's, say). */
const POLL_MS = 2000;

export interface ChainSealer {
  /** Seals soon: this instance committed an audited write. */
  wake(): void;
  /** Seals every entry committed before the call (by a call of the function that starts after it). */
  drain(): Promise<void>;
  close(): Promise<void>;
}

/** The sealer of an app's PostgreSQL database (audit.ts wakes it after each audited commit). */
export function chainSealer(
  db: Kysely<any>,
  log: (message: string, error?: unknown) => void,
  /** Whether an error means the database is away (the profile's reading of its driver's errors). */
  unavailable: (error: unknown) => boolean,
): ChainSealer {
  const call = sql<{ sealed: number }>`select ${sql.id(SEAL_FUNCTION)}(${BATCH}) as sealed`;
  let running: Promise<void> | undefined;
  let again = false;
  let closed = false;
  // A failure is logged when it starts, not once per call while the database stays away.
  let failing = false;
  // A commit of this instance's that no round has sealed yet (close() seals it).
  let unsealed = false;
  // close() stopped waiting for its seal: no further call, the database is about to go.
  let abandoned = false;

  const sealAll = async (last = false) => {
    while ((!closed || last) && !abandoned) {
      const [row] = (await call.execute(db)).rows;
      if (Number(row?.sealed ?? 0) < BATCH) return;
    }
  };
  const rounds = async () => {
    do {
      // Commits that land meanwhile are sealed by this call, not by one call each.
      await new Promise((resolve) => setTimeout(resolve, GATHER_MS));
      // Closed meanwhile: close() seals what is left, once.
      if (closed) return;
      again = false;
      unsealed = false;
      try {
        await sealAll();
        failing = false;
      } catch (error) {
        unsealed = true;
        if (!failing)
          log(
            unavailable(error)
              ? "crudkit: the database is unavailable"
              : "audit(): sealing audit entries failed; they stay pending and are sealed on a later try",
            error,
          );
        failing = true;
        return;
      }
    } while (again && !closed);
  };
  const wake = () => {
    if (closed) return;
    unsealed = true;
    if (running) {
      again = true;
      return;
    }
    running = rounds().finally(() => {
      running = undefined;
    });
  };
  const timer = setInterval(wake, POLL_MS);
  timer.unref();

  // Readers' seals (GET /audit/logs, the history routes: one a request). A reader needs a call that
  // starts after it arrived, not one of its own: callers that arrive while one runs share the next,
  // so a hundred readers under write load make two calls, not a hundred queued on the head's lock.
  // Nor do they wait for a woken round, which first gathers commits for GATHER_MS.
  let sealing: Promise<void> | undefined;
  let next: Promise<void> | undefined;
  const drain = (): Promise<void> => {
    next ??= (sealing ?? Promise.resolve())
      .catch(() => {})
      .then(() => {
        next = undefined;
        const call = sealAll().finally(() => {
          if (sealing === call) sealing = undefined;
        });
        sealing = call;
        return call;
      });
    return next;
  };

  return {
    wake,
    drain,
    async close() {
      closed = true;
      clearInterval(timer);
      await running;
      await sealing?.catch(() => {});
      // What this instance committed last: sealed now, not left for the next start's poll. For
      // 2 s at most: a database that is away must not hold the app's close.
      if (!unsealed) return;
      let giveUp: NodeJS.Timeout | undefined;
      await Promise.race([
        sealAll(true).catch((error) => {
          if (!failing) log("audit(): sealing audit entries at close failed; they stay queued", error);
        }),
        new Promise((resolve) => {
          giveUp = setTimeout(resolve, CLOSE_MS);
        }),
      ]);
      clearTimeout(giveUp);
      abandoned = true;
    },
  };
}
