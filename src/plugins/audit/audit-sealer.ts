// Calls PostgreSQL's seal function (audit-seal-function.ts) after audited writes commit. A write on
// this instance wakes it once its transaction committed; many writes that commit while a call runs
// are sealed together by the next one. A poll seals what another instance, or one that stopped
// between a commit and its seal, left pending. Reads of the chain (`verify()`, GET /audit/head)
// drain it first, so they see every entry committed before them.

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
/** How often pending entries are looked for without a wake (another instance's, say). */
const POLL_MS = 2000;

export interface ChainSealer {
  /** Seals soon: this instance committed an audited write. */
  wake(): void;
  /** Seals every entry committed before the call. */
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

  const sealAll = async () => {
    while (!closed) {
      const [row] = (await call.execute(db)).rows;
      if (Number(row?.sealed ?? 0) < BATCH) return;
    }
  };
  const rounds = async () => {
    do {
      // Commits that land meanwhile are sealed by this call, not by one call each.
      await new Promise((resolve) => setTimeout(resolve, GATHER_MS));
      again = false;
      try {
        await sealAll();
        failing = false;
      } catch (error) {
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

  return {
    wake,
    async drain() {
      await running;
      await sealAll();
    },
    async close() {
      closed = true;
      clearInterval(timer);
      await running;
    },
  };
}
