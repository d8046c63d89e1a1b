// The outbox: one row per event and endpoint, inserted in the write's own transaction, so an
// event exists if and only if its change committed. The dispatcher sends what is due, and keeps
// what went out (for replay) until the retention removes it.

import type { TableDefinition } from "../../kit/index.ts";

export const WEBHOOK_EVENTS = "webhook_events";

export type EventStatus = "pending" | "delivered" | "dead";

export const webhookEventsTable: TableDefinition = {
  name: WEBHOOK_EVENTS,
  columns: {
    // A UUIDv7: the `webhook-id` of every attempt, and, ordered, the order its record's events went in.
    id: { type: "text", primaryKey: true, notNull: true },
    endpoint: { type: "text", notNull: true },
    // `product.update`
    type: { type: "text", notNull: true },
    // The endpoint and the record (`billing product:<id>`): the events of a queue go out one after
    // the other, in the order they committed. One column, so its index fits MariaDB's key length.
    queue: { type: "text", notNull: true },
    // The request body, exactly as signed and sent on every attempt.
    body: { type: "text", notNull: true },
    created_at: { type: "date", notNull: true },
    status: { type: "text", notNull: true, enumValues: ["pending", "delivered", "dead"] },
    attempts: { type: "integer", notNull: true },
    // When it may be sent: due now, after a retry's wait, or after an instance's claim runs out.
    next_attempt_at: { type: "date", notNull: true },
    // Why the last attempt failed: a status (`500`), `timeout`, `refused`… never a secret or a body.
    last_error: { type: "text" },
    delivered_at: { type: "date" },
  },
  indexes: [
    // What is due: pending events by time, then id, the claim's own order, so that a claim reads
    // its first rows and stops, with no sort of every due event (a plan PostgreSQL chose when its
    // statistics saw no pending event: linear in the backlog). Settled events keep their settling
    // time there, so the retention finds them through it too.
    { name: "webhook_events_claim_order_idx", columns: ["status", "next_attempt_at", "id"] },
    // Whether an earlier event of the same queue is still pending.
    { name: "webhook_events_queue_idx", columns: ["status", "queue", "id"] },
  ],
};
