// A webhook claim stays a short walk of the outbox's indexes when PostgreSQL's statistics say
// nothing is pending, which is what they say in production: autovacuum analyzes the outbox while
// every event has been delivered (the normal state), or samples a large history in which the
// pending few are never seen. With such statistics, and 20,000 events pending, PostgreSQL checked
// each candidate's queue by scanning the whole backlog (its due index, `status = 'pending'`, "1
// row"): a claim cost the backlog squared, and a dispatcher that fell behind stayed behind; with
// the due index not in the claim's order it read and sorted every due event. Counted here in rows
// the plan visits (EXPLAIN ANALYZE), not in time. And an outbox made before gets the new index.

import { createResource, crudkit, type DatabaseOptions, withId } from "crudkit-api";
import { webhooks } from "crudkit-api/plugins";
import { CompiledQuery, Kysely, PostgresDialect } from "kysely";
import pg from "pg";
import { afterAll, beforeAll, expect, it } from "vitest";
import { z } from "zod";
import { dialectProfile } from "../src/db/dialect.ts";
import { OutboxStore } from "../src/plugins/webhooks/outbox-store.ts";
import { countingKysely, forEachDialect } from "./dialects.ts";

const item = createResource({
  name: "item",
  schema: withId({ name: z.string() }),
  access: { create: true, read: true, update: true, delete: true, list: true },
});

const SECRET = `whsec_${Buffer.from("a webhook secret of 32 bytes!!!!").toString("base64")}`;
const PENDING = 20000;
const LIMIT = 32;

/** An app whose events wait in the outbox: it sends nothing, so the claims here are the test's. */
function makeApp(database: DatabaseOptions) {
  return crudkit({
    database,
    autoMigrate: true,
    resources: [item],
    log: () => {},
    plugins: [
      webhooks({
        endpoints: [{ id: "main", url: "http://127.0.0.1:9/hooks", secret: SECRET, events: ["*"] }],
        allowPrivateNetworks: true,
        deliver: false,
      }),
    ],
  });
}
type App = ReturnType<typeof makeApp>;

/** The database's own URL, not PgBouncer's: a session of our own (a transaction around EXPLAIN). */
function directUrlOf(database: DatabaseOptions & { url: string }): string {
  return (database as { directUrl?: string }).directUrl ?? database.url;
}

interface PlanNode {
  "Actual Rows"?: number;
  "Actual Loops"?: number;
  "Rows Removed by Filter"?: number;
  "Rows Removed by Index Recheck"?: number;
  Plans?: PlanNode[];
}

/** Rows every node of the plan produced or threw away, over all its loops. */
function rowsVisited(node: PlanNode): number {
  const loops = node["Actual Loops"] ?? 1;
  const own =
    ((node["Actual Rows"] ?? 0) +
      (node["Rows Removed by Filter"] ?? 0) +
      (node["Rows Removed by Index Recheck"] ?? 0)) *
    loops;
  return own + (node.Plans ?? []).reduce((sum, child) => sum + rowsVisited(child), 0);
}

forEachDialect(
  (dialect) => {
    let app: App;
    let db: Kysely<any>;
    // Every statement run through `db`, with its values.
    const compiled: { sql: string; parameters: readonly unknown[] }[] = [];

    beforeAll(async () => {
      const database = await dialect.fresh();
      app = makeApp(database);
      await app.ready;
      await app.api.createItem({ body: { name: "first" }, overrideAccess: true });
      const direct = { url: directUrlOf(database) };
      db = new Kysely({
        dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: direct.url }) }),
        log: (event) => {
          if (event.level === "query") compiled.push(event.query);
        },
      });
      // A short history of delivered events, analyzed while nothing is pending: the statistics
      // see no pending event at all. Autovacuum is kept off the table, or it could analyze the
      // backlog below before the claim and hide what this test is about.
      await db.executeQuery(CompiledQuery.raw("alter table webhook_events set (autovacuum_enabled = false)"));
      await db.executeQuery(
        CompiledQuery.raw(`update webhook_events set status = 'delivered', delivered_at = now()`),
      );
      await db.executeQuery(
        CompiledQuery.raw(`insert into webhook_events (id, endpoint, type, queue, body, created_at, status, attempts, next_attempt_at)
          select '00000000-0000-7000-8000-' || lpad(g::text, 12, '0'), 'main', 'item.create', 'main item:h' || g,
            '{}', now(), 'delivered', 1, now() - interval '1 hour'
          from generate_series(1, 200) g`),
      );
      await db.executeQuery(CompiledQuery.raw("analyze webhook_events"));
      // Then a backlog: one due event in each of PENDING queues, and behind the first 500 of them
      // a second one, due just after its queue's first, which must wait for it.
      await db.executeQuery(
        CompiledQuery.raw(`insert into webhook_events (id, endpoint, type, queue, body, created_at, status, attempts, next_attempt_at)
          select '00000000-0000-7000-9000-' || lpad(g::text, 12, '0'), 'main', 'item.update', 'main item:p' || g,
            repeat('x', 300), now(), 'pending', 0, now() - interval '10 minutes' + g * interval '1 millisecond'
          from generate_series(1, ${PENDING}) g
          union all
          select '00000000-0000-7000-a000-' || lpad(g::text, 12, '0'), 'main', 'item.update', 'main item:p' || g,
            repeat('x', 300), now(), 'pending', 0, now() - interval '10 minutes' + (g + 0.5) * interval '1 millisecond'
          from generate_series(1, 500) g`),
      );
    }, 60_000);
    afterAll(async () => {
      await db?.destroy();
      await app?.close();
    });

    it("claims the oldest pending event of each queue in a few hundred rows, not the backlog squared", async () => {
      const { rows: sampled } = await db.executeQuery<{ statuses: string | null }>(
        CompiledQuery.raw(
          "select most_common_vals::text as statuses from pg_stats where tablename = 'webhook_events' and attname = 'status'",
        ),
      );
      // The statistics the claim is planned with saw no pending event.
      expect(sampled[0]?.statuses).toBe("{delivered}");
      const seen = await new OutboxStore(db, dialectProfile("postgres")).claim(LIMIT, 60_000);
      expect(seen).toHaveLength(LIMIT);
      // Only heads: the second events of a queue wait (their ids sort after their queue's first).
      expect(seen.every((event) => event.id.startsWith("00000000-0000-7000-9000-"))).toBe(true);
      // The claim's statement, as the store wrote it, with its values.
      const claim = compiled.find((query) => /^update "webhook_events"/i.test(query.sql))!;
      expect(claim).toBeDefined();
      // EXPLAIN ANALYZE runs the claim: in a transaction of one session, rolled back.
      await db.connection().execute(async (session) => {
        await session.executeQuery(CompiledQuery.raw("begin"));
        try {
          const { rows } = await session.executeQuery<{ "QUERY PLAN": [{ Plan: PlanNode }] }>(
            CompiledQuery.raw(`explain (analyze, format json) ${claim.sql}`, [...claim.parameters]),
          );
          const visited = rowsVisited(rows[0]!["QUERY PLAN"][0].Plan);
          // Each row counted at every plan node it passes: about 600 now (the 32 claimed, the events
          // waiting behind them that the walk passes, a probe of the queue index each). With the
          // queue checked against the literal status: 1,947,914 (a scan of the backlog per
          // candidate). With the due index not in the claim's order: 82,128 (every due event, sorted).
          expect(visited).toBeLessThan(PENDING / 2);
        } finally {
          await session.executeQuery(CompiledQuery.raw("rollback"));
        }
      });
    }, 60_000);
  },
  ["postgres"],
);

forEachDialect((dialect) => {
  it("an outbox made before the claim-order index gets it, and loses the index it replaces", async () => {
    const database = await dialect.fresh();
    const first = makeApp(database);
    await first.ready;
    await first.close();
    const direct = { ...database, url: directUrlOf(database) } as typeof database;
    const db = await countingKysely(dialect.name, direct, []);
    const profile = dialectProfile(dialect.name);
    const names = async () =>
      (await profile.indexes().execute(db)).rows
        .filter((row) => row.tableName === "webhook_events")
        .map((row) => row.name)
        .sort();
    try {
      // The outbox as the version before made it.
      await db.executeQuery(
        CompiledQuery.raw(
          `drop index webhook_events_claim_order_idx${dialect.name === "mysql" ? " on webhook_events" : ""}`,
        ),
      );
      await db.executeQuery(
        CompiledQuery.raw(`create index webhook_events_due_idx on webhook_events (status, next_attempt_at)`),
      );
      expect(await names()).toContain("webhook_events_due_idx");
      const second = makeApp(database);
      await second.ready;
      await second.close();
      const now = await names();
      expect(now).toContain("webhook_events_claim_order_idx");
      expect(now).not.toContain("webhook_events_due_idx");
    } finally {
      await db.destroy();
    }
  }, 60_000);
});
