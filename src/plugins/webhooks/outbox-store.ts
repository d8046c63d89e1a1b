// The outbox's statements: the insert a write makes, the claim a dispatcher makes (one instance
// per event: `FOR UPDATE SKIP LOCKED` where the database has row locks; SQLite runs one write at
// a time), and how a delivery settles.

import { type Kysely, sql } from "kysely";
import {
  compileTemplate,
  type DialectProfile,
  dateFromColumn,
  dateToColumn,
  type QueryTemplate,
  runTemplate,
  slot,
} from "../../kit/index.ts";
import { type EventStatus, WEBHOOK_EVENTS } from "./outbox-table.ts";

/** An event a dispatcher has claimed: it sends it, then settles it. */
export interface ClaimedEvent {
  id: string;
  endpoint: string;
  body: string;
  /** This attempt's number, 1 for the first. */
  attempt: number;
}

export interface NewEvent {
  id: string;
  endpoint: string;
  type: string;
  recordKey: string;
  body: string;
  createdAt: string;
}

/** Per endpoint: events waiting (`failing`: of those, the ones whose last attempt failed), sent, and given up on. */
export interface EndpointCounts {
  pending: number;
  failing: number;
  delivered: number;
  dead: number;
}

/** A claimed row as an event; `counted` is 1 when its attempts were read before the claim added one. */
function claimed(row: Record<string, unknown>, counted: 0 | 1): ClaimedEvent {
  return {
    id: String(row.id),
    endpoint: String(row.endpoint),
    body: String(row.body),
    attempt: Number(row.attempts) + counted,
  };
}

export class OutboxStore {
  private insertTemplate: QueryTemplate | undefined;

  constructor(
    private readonly db: Kysely<any>,
    private readonly profile: DialectProfile,
  ) {}

  private date(value: Date): string | Date {
    return dateToColumn(value, this.profile);
  }

  /** In the write's transaction (`db`): the event commits, or rolls back, with the change. */
  async insert(db: Kysely<any>, event: NewEvent): Promise<void> {
    const row = {
      id: event.id,
      endpoint: event.endpoint,
      type: event.type,
      queue: `${event.endpoint} ${event.recordKey}`,
      body: event.body,
      created_at: dateToColumn(event.createdAt, this.profile),
      status: "pending",
      attempts: 0,
      next_attempt_at: dateToColumn(event.createdAt, this.profile),
    };
    this.insertTemplate ??= compileTemplate(
      this.db
        .insertInto(WEBHOOK_EVENTS)
        .values(Object.fromEntries(Object.keys(row).map((c) => [c, slot(c)]))),
    );
    await runTemplate(db, this.insertTemplate, row);
  }

  /**
   * Up to `limit` due events, each the oldest pending one of its record for its endpoint, held
   * for `leaseMs`: an instance that dies while sending leaves them due again after that.
   */
  async claim(limit: number, leaseMs: number): Promise<ClaimedEvent[]> {
    const now = new Date();
    const lease = {
      next_attempt_at: this.date(new Date(now.getTime() + leaseMs)),
      attempts: sql`attempts + 1`,
    };
    // One statement where the database returns what it updated (PostgreSQL, SQLite): the claim is
    // one round trip, not four (begin, select, update, commit).
    if (this.profile.returning) {
      const rows = await this.db
        .updateTable(WEBHOOK_EVENTS)
        .set(lease)
        .where("id", "in", this.due(this.db, now, limit).select("e.id"))
        .returning(["id", "endpoint", "body", "attempts"])
        .execute();
      return rows.map((r) => claimed(r, 0));
    }
    return this.db.transaction().execute(async (trx) => {
      const rows = await this.due(trx, now, limit)
        .select(["e.id", "e.endpoint", "e.body", "e.attempts"])
        .execute();
      if (rows.length === 0) return [];
      await trx
        .updateTable(WEBHOOK_EVENTS)
        .set(lease)
        .where(
          "id",
          "in",
          rows.map((r) => r.id),
        )
        .execute();
      return rows.map((r) => claimed(r, 1));
    });
  }

  /** The due events a claim takes: the oldest pending one of each queue, locked where rows lock. */
  private due(db: Kysely<any>, now: Date, limit: number) {
    const query = db
      .selectFrom(`${WEBHOOK_EVENTS} as e`)
      .where("e.status", "=", "pending")
      .where("e.next_attempt_at", "<=", this.date(now))
      // The oldest pending event of its queue, asked per candidate: a scalar subquery is never
      // made a join, so each is one probe of the queue index. As NOT EXISTS (an earlier pending
      // one), PostgreSQL planned a fresh table (no statistics yet, "3 rows") as a scan of every
      // pending event per candidate: with a backlog of 200, 32 ms a claim, and delivery fell
      // behind for good (p50 2 s after commit at 1,200 events/s).
      // Its status is the candidate's (pending), not the literal: statistics taken while nothing
      // was pending (autovacuum's, most of the time) make `status = 'pending'` "1 row", and
      // PostgreSQL then took the due index for it and filtered the queue, a scan of the whole
      // backlog per candidate (72 s a claim at 20,000 pending events, measured). A value it
      // cannot see is estimated from the statuses sampled (every row, when only `delivered` was
      // sampled), so the queue index, which matches both status and queue, wins whatever they say.
      .where(({ eb, selectFrom }) =>
        eb(
          selectFrom(`${WEBHOOK_EVENTS} as p`)
            .select(({ fn }) => fn.min("p.id").as("first"))
            .whereRef("p.status", "=", "e.status")
            .whereRef("p.queue", "=", "e.queue"),
          "=",
          eb.ref("e.id"),
        ),
      )
      .orderBy("e.next_attempt_at")
      .orderBy("e.id")
      .limit(limit);
    return this.profile.rowLocks ? query.forUpdate().skipLocked() : query;
  }

  /** The receivers answered 2xx. */
  async delivered(ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return;
    const now = this.date(new Date());
    await this.db
      .updateTable(WEBHOOK_EVENTS)
      .set({ status: "delivered", delivered_at: now, next_attempt_at: now, last_error: null })
      .where("id", "in", ids)
      .execute();
  }

  /** The attempt failed: due again at `retryAt`, or dead-lettered when there is none. */
  async failed(id: string, error: string, retryAt: Date | undefined): Promise<void> {
    await this.db
      .updateTable(WEBHOOK_EVENTS)
      .set({
        status: retryAt ? "pending" : "dead",
        last_error: error.slice(0, 200),
        next_attempt_at: this.date(retryAt ?? new Date()),
      })
      .where("id", "=", id)
      .execute();
  }

  async counts(): Promise<Map<string, EndpointCounts>> {
    const rows = await this.db
      .selectFrom(WEBHOOK_EVENTS)
      .select([
        "endpoint",
        "status",
        sql<number>`count(last_error)`.as("failing"),
        sql<number>`count(*)`.as("n"),
      ])
      .groupBy(["endpoint", "status"])
      .execute();
    const counts = new Map<string, EndpointCounts>();
    for (const row of rows) {
      const endpoint = String(row.endpoint);
      const entry = counts.get(endpoint) ?? { pending: 0, failing: 0, delivered: 0, dead: 0 };
      const status = row.status as EventStatus;
      entry[status] += Number(row.n);
      if (status === "pending") entry.failing += Number(row.failing);
      counts.set(endpoint, entry);
    }
    return counts;
  }

  /** Sent or dead events of `endpoint` created at or after `since` are pending again, from their first attempt. */
  async replay(endpoint: string, since: Date): Promise<number> {
    const result = await this.db
      .updateTable(WEBHOOK_EVENTS)
      .set({ status: "pending", attempts: 0, last_error: null, next_attempt_at: this.date(new Date()) })
      .where("endpoint", "=", endpoint)
      .where("status", "in", ["delivered", "dead"])
      .where("created_at", ">=", this.date(since))
      .executeTakeFirst();
    return Number(result.numUpdatedRows);
  }

  /**
   * Events not yet sent (waiting for a retry included), counted up to `cap` so a huge backlog
   * costs no more than a small one, and since when the oldest due one has waited.
   */
  async backlog(cap: number): Promise<{ pending: number; oldestDue: Date | undefined }> {
    const [pending, oldest] = await Promise.all([
      this.pendingCount(cap),
      this.db
        .selectFrom(WEBHOOK_EVENTS)
        .where("status", "=", "pending")
        .where("next_attempt_at", "<=", this.date(new Date()))
        .select("next_attempt_at")
        .orderBy("next_attempt_at")
        .limit(1)
        .executeTakeFirst(),
    ]);
    return {
      pending,
      oldestDue: oldest ? new Date(dateFromColumn(oldest.next_attempt_at)) : undefined,
    };
  }

  /** Events not yet sent, counted up to `cap` (the metrics' gauge). */
  async pendingCount(cap: number): Promise<number> {
    const pending = this.db.selectFrom(WEBHOOK_EVENTS).where("status", "=", "pending");
    const count = await this.db
      .selectFrom(pending.select("id").limit(cap).as("pending"))
      .select(sql<number>`count(*)`.as("n"))
      .executeTakeFirst();
    return Number(count?.n ?? 0);
  }

  /** Removes sent and dead events settled before `cutoff`; returns how many went. */
  async prune(cutoff: Date): Promise<number> {
    const result = await this.db
      .deleteFrom(WEBHOOK_EVENTS)
      .where("status", "in", ["delivered", "dead"])
      .where("next_attempt_at", "<", this.date(cutoff))
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}
