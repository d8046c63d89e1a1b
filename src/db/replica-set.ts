// Read replicas (`database.replicas`): which of them may serve a read now. A poller asks the primary
// where its log is, with the time it asked, and each replica how far it replayed. A replica that
// replayed a position the primary had at time T holds every commit acknowledged before T, so it is
// "caught up to T"; its lag is how long ago T was. A replica serves:
//   - any read while its lag is at most `maxLag`;
//   - a caller who wrote only once it replayed her write's position (read-your-writes: the
//     position travels with her, see app/read-router.ts).
// A replica that refuses connections, errors or falls behind is skipped until a poll finds it well;
// a read that fails on one runs again on the primary (core/read-routing.ts), so none fails for it.

import type { Kysely } from "kysely";
import { withTimeout } from "../core/with-timeout.ts";
import { hostOf } from "./database-url.ts";
import type { Replication } from "./replication.ts";

export interface ReplicaState {
  /** `host:port` of the replica (never its URL: that may hold a password). */
  host: string;
  /** `ok`, or why it is skipped now. */
  status: "ok" | "lagging" | "unavailable" | "starting";
  /** Seconds behind the primary, as of the last poll; null before a poll reached it. */
  lag: number | null;
}

export interface ReplicaSet {
  readonly replication: Replication;
  /**
   * A replica to read from, or undefined for the primary: one whose lag is within `maxLag`, and
   * that replayed each position of `wanted` (the caller's last writes).
   */
  choose(wanted?: readonly unknown[]): Kysely<any> | undefined;
  /** The primary's position now: taken after a write committed, it covers that write. */
  position(): Promise<unknown>;
  /**
   * A read on `db` failed. Answers whether `db` is one of the replicas (the read then runs again on
   * the primary); when its server is away (`unavailable`), it is skipped until a poll finds it back.
   */
  failed(db: Kysely<any>, unavailable: boolean): boolean;
  /** Each replica's state, for `/api/health`. */
  states(): ReplicaState[];
  /** Resolves after the next poll: tests and startup wait for one. */
  polled(): Promise<void>;
  close(): Promise<void>;
}

interface Replica {
  db: Kysely<any>;
  host: string;
  /** What it replayed at the last poll. */
  replayed: unknown;
  /** The latest time (ms) the primary was at a position this replica has replayed. */
  caughtUpAt: number;
  /** Its server did not answer the last poll, or a read found it away. */
  down: boolean;
  /** Why it was last skipped, as logged; undefined while it serves. */
  skipped: string | undefined;
}

interface Sample {
  at: number;
  position: unknown;
}

/** The longest a poll waits for a server: a replica that takes longer is skipped for now. */
const POLL_TIMEOUT_MS = 2000;

/**
 * The replicas of `primary`, polled from now on. `open` makes each replica's Kysely (the engine's
 * driver, the app's statement timeout and probes); `close()` destroys them.
 */
export function replicaSet(
  primary: Kysely<any>,
  urls: readonly string[],
  options: {
    /** Seconds a replica may lag behind the primary and still serve reads. */
    maxLag: number;
    replication: Replication;
    open: (url: string) => Kysely<any>;
    log: (message: string, error?: unknown) => void;
  },
): ReplicaSet {
  const { replication, log } = options;
  const maxLagMs = options.maxLag * 1000;
  // Often enough that a replica is found caught up well within maxLag; at most once a second.
  const interval = Math.max(50, Math.min(1000, maxLagMs / 4));
  const replicas: Replica[] = urls.map((url) => ({
    db: options.open(url),
    host: hostOf(url),
    replayed: undefined,
    caughtUpAt: Number.NEGATIVE_INFINITY,
    down: false,
    skipped: undefined,
  }));
  let samples: Sample[] = [];
  let next = 0;
  let closed = false;
  let waiting: (() => void)[] = [];
  let primaryFailing = false;

  const serves = (replica: Replica, now: number) => servesReads(replica, now, maxLagMs);

  const report = (replica: Replica, now: number, error?: unknown) =>
    reportChange(replica, serves(replica, now), options.maxLag, log, error);

  const pollReplica = async (replica: Replica) => {
    try {
      replica.replayed = await withTimeout(replication.replayed(replica.db), POLL_TIMEOUT_MS);
      replica.down = false;
      catchUp(replica, samples, replication);
      report(replica, Date.now());
    } catch (error) {
      replica.down = true;
      report(replica, Date.now(), error);
    }
  };

  const poll = async () => {
    const at = Date.now();
    try {
      const position = await withTimeout(replication.primaryPosition(primary), POLL_TIMEOUT_MS);
      samples.push({ at, position });
      primaryFailing = false;
    } catch (error) {
      // The primary is away (its own requests say so, 503), or keeps no log: replicas are still
      // measured against what it said before, and fall behind. Said once, not at every poll.
      if (!primaryFailing)
        log(
          "crudkit: the primary's log position could not be read; read replicas fall behind until it can",
          error,
        );
      primaryFailing = true;
    }
    // Older samples can no longer make a replica serve: it would be past maxLag anyway.
    const horizon = at - maxLagMs - interval * 2;
    if (samples.length > 1 && samples[0]!.at < horizon)
      samples = samples.filter((s, i) => s.at >= horizon || i === samples.length - 1);
    await Promise.all(replicas.map(pollReplica));
    for (const done of waiting.splice(0)) done();
  };

  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  const schedule = () => {
    if (closed) return;
    timer = setTimeout(() => {
      running = poll().finally(schedule);
    }, interval);
    timer.unref();
  };
  running = poll().finally(schedule);

  return {
    replication,
    choose(wanted) {
      const now = Date.now();
      for (let tried = 0; tried < replicas.length; tried++) {
        const replica = replicas[(next + tried) % replicas.length]!;
        if (!serves(replica, now)) continue;
        if (wanted && !wanted.every((position) => replication.reached(replica.replayed, position))) continue;
        next = (next + tried + 1) % replicas.length;
        return replica.db;
      }
      return undefined;
    },
    position: () => replication.primaryPosition(primary),
    failed(db, unavailable) {
      const replica = replicas.find((r) => r.db === db);
      if (!replica) return false;
      if (unavailable && !replica.down) {
        replica.down = true;
        report(replica, Date.now());
      }
      return true;
    },
    states() {
      const now = Date.now();
      return replicas.map((replica) => stateOf(replica, now, maxLagMs));
    },
    polled: () => new Promise((resolve) => waiting.push(resolve)),
    async close() {
      closed = true;
      clearTimeout(timer);
      await running?.catch(() => {});
      for (const done of waiting.splice(0)) done();
      waiting = [];
      await Promise.all(replicas.map((replica) => replica.db.destroy().catch(() => {})));
    },
  };
}

/** The newest sample a replica has replayed: it holds every commit acknowledged before that sample. */
function catchUp(replica: Replica, samples: readonly Sample[], replication: Replication): void {
  for (let i = samples.length - 1; i >= 0; i--)
    if (replication.reached(replica.replayed, samples[i]!.position)) {
      replica.caughtUpAt = Math.max(replica.caughtUpAt, samples[i]!.at);
      return;
    }
}

/** Logs when a replica stops or starts serving, not at every poll. */
function reportChange(
  replica: Replica,
  serving: boolean,
  maxLag: number,
  log: (message: string, error?: unknown) => void,
  error: unknown,
): void {
  const why = serving
    ? undefined
    : replica.down
      ? "it does not answer"
      : `it is more than ${maxLag} s behind the primary`;
  if (why === replica.skipped) return;
  if (why)
    log(`crudkit: read replica ${replica.host} is skipped, its reads go to the primary: ${why}`, error);
  else if (replica.skipped) log(`crudkit: read replica ${replica.host} serves reads again`);
  replica.skipped = why;
}

function servesReads(replica: Replica, now: number, maxLagMs: number): boolean {
  return !replica.down && now - replica.caughtUpAt <= maxLagMs;
}

function stateOf(replica: Replica, now: number, maxLagMs: number): ReplicaState {
  const polled = Number.isFinite(replica.caughtUpAt);
  return {
    host: replica.host,
    status: servesReads(replica, now, maxLagMs)
      ? "ok"
      : replica.down
        ? "unavailable"
        : polled || replica.replayed !== undefined
          ? "lagging"
          : "starting",
    lag: polled ? Math.max(0, (now - replica.caughtUpAt) / 1000) : null,
  };
}
