// `npm run bench -- --webhooks`: issue 35's three measurements.
//   1. audited + outbox create: the example API with audit() and webhooks() against the reference
//      writing the same audit row (hash chain included) and one outbox row in its transaction,
//      over HTTP, rounds interleaved. Twice: the API writing its events only, as the reference
//      does (`deliver: false`, the topology where a worker sends), and the API also sending them
//      from the same process meanwhile. Target ratio ≥ 0.8.
//   2. webhook delivery: an app in this process creates records at a fixed rate (1,200/s) for a
//      few seconds and sends each change to a receiver on loopback: events/s sustained, and the
//      delay from the create's answer to the receiver's receipt (p50 ≤ 50 ms, p99 ≤ 250 ms), on
//      SQLite and PostgreSQL: of the events committed after the first second (the process's
//      warm-up), and, printed beside them, of all.
//   3. audit chain cost: 8 writers creating audited records as fast as they can on PostgreSQL,
//      with the chain and with `audit({ chain: false })`, rounds interleaved. Target ≥ 0.8.

import { mkdtemp } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import autocannon from "autocannon";
import { z } from "zod";
import { createResource, crudkit, type DatabaseOptions, withId } from "../src/index.ts";
import { audit, webhooks } from "../src/plugins/index.ts";
import { freshPostgres, HEADERS, start, stop, WEBHOOK_SECRET } from "./servers.ts";

interface Receiver {
  url: string;
  /** Receipt time (ms) per record id. */
  received: Map<string, number>;
  count: number;
  close(): Promise<void>;
}

/** A receiver that answers 204 at once and notes when each record's event came. */
async function receiver(): Promise<Receiver> {
  const received = new Map<string, number>();
  const state = { count: 0 };
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (c: Buffer) => chunks.push(c));
    request.on("end", () => {
      state.count++;
      try {
        const id = JSON.parse(Buffer.concat(chunks).toString()).data?.id;
        if (typeof id === "string" && !received.has(id)) received.set(id, performance.now());
      } catch {}
      response.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    received,
    get count() {
      return state.count;
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const item = createResource({
  name: "item",
  schema: withId({ name: z.string(), price: z.number() }),
  access: { create: true, read: true, update: true, delete: true, list: true },
});

export async function outboxCreate(rounds: number, duration: number): Promise<void> {
  console.log("\naudited + outbox create (SQLite, HTTP, 32 connections)");
  // The same work as the reference: the API writes its events, a worker instance would send them.
  await outboxCreateRun(rounds, duration, "off");
  // The API also sends them meanwhile, in its own process, which the reference does not do.
  await outboxCreateRun(rounds, duration, "on");
}

async function outboxCreateRun(rounds: number, duration: number, deliver: "on" | "off"): Promise<void> {
  const sink = await receiver();
  const dir = await mkdtemp(join(tmpdir(), "crudkit-bench-webhooks-"));
  const api = await start("api", "examples/server.ts", join(dir, "api"), {
    webhook: sink.url,
    webhookDeliver: deliver,
  });
  const reference = await start("reference", "bench/reference-server.ts", join(dir, "reference"), {
    webhook: sink.url,
  });
  let counter = 0;
  const requests = Array.from({ length: 500 }, () => ({
    method: "POST" as const,
    path: "/api/product",
    body: JSON.stringify({ name: `Outbox ${counter++}`, price: 12.5 }),
  }));
  const totals = { api: 0, reference: 0 };
  try {
    for (let round = 0; round < rounds; round++)
      for (const target of [api, reference]) {
        const result = await autocannon({
          url: target.url,
          connections: 32,
          duration,
          headers: HEADERS,
          requests,
        });
        if (result.non2xx > 0) throw new Error(`${target.name}: ${result.non2xx} answers that are not 2xx`);
        totals[target.name] += result.requests.average / rounds;
      }
  } finally {
    await Promise.all([stop(api), stop(reference)]);
    await sink.close();
  }
  const label =
    deliver === "off"
      ? "writing events only (webhooks({ deliver: false }); a worker sends them)"
      : `writing and sending them in the same process (${sink.count} events delivered meanwhile)`;
  console.log(
    `api ${Math.round(totals.api)} req/s, reference ${Math.round(totals.reference)} req/s, ratio ${(totals.api / totals.reference).toFixed(2)} (target ≥ 0.8): ${label}`,
  );
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

async function delivery(database: DatabaseOptions, label: string, seconds: number): Promise<void> {
  const sink = await receiver();
  const app = crudkit({
    database,
    autoMigrate: true,
    resources: [item],
    plugins: [
      webhooks({
        endpoints: [{ id: "sink", url: sink.url, secret: WEBHOOK_SECRET, events: ["item.create"] }],
        allowPrivateNetworks: true,
      }),
    ],
  });
  await app.ready;
  const RATE = 1200;
  const committed = new Map<string, number>();
  const started = performance.now();
  const writes: Promise<void>[] = [];
  // 12 creates every 10 ms, each timed when its answer came (after commit).
  for (let tick = 0; tick < seconds * 100; tick++) {
    const due = started + tick * 10;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    for (let i = 0; i < RATE / 100; i++)
      writes.push(
        app.api
          .createItem({ body: { name: `d${tick}-${i}`, price: 1 }, overrideAccess: true })
          .then((record) => {
            committed.set(record.id, performance.now());
          }),
      );
  }
  await Promise.all(writes);
  const deadline = performance.now() + 60_000;
  while (sink.received.size < committed.size && performance.now() < deadline)
    await new Promise((r) => setTimeout(r, 20));
  // The delays of events committed after the first second, and of all: a new process on a new
  // database spends its first second opening connections and planning statements (every delay
  // past 100 ms in a run fell in it, measured), which a server that is running has done.
  const delaysOf = (from: number) =>
    [...committed]
      .filter(([, at]) => at - started >= from)
      .map(([id, at]) => (sink.received.get(id) ?? Number.POSITIVE_INFINITY) - at)
      .sort((a, b) => a - b);
  const delays = delaysOf(1000);
  const cold = delaysOf(0);
  const last = Math.max(...sink.received.values());
  const rate = sink.received.size / ((last - started) / 1000);
  console.log(
    `${label.padEnd(10)} ${committed.size} events, ${sink.received.size} delivered, ${Math.round(rate)} events/s sustained (offered ${RATE}/s), ` +
      `delay after commit p50 ${percentile(delays, 50).toFixed(1)} ms, p99 ${percentile(delays, 99).toFixed(1)} ms ` +
      `(from the second second on; from the start: p50 ${percentile(cold, 50).toFixed(1)} ms, p99 ${percentile(cold, 99).toFixed(1)} ms)`,
  );
  await app.close();
  await sink.close();
}

export async function chainCost(url: string, rounds: number, seconds: number): Promise<void> {
  const results = { chained: 0, unchained: 0 };
  let verified = 0;
  for (let round = 0; round < rounds; round++)
    for (const chain of [true, false]) {
      const app = crudkit({
        database: { provider: "postgres", url },
        autoMigrate: true,
        resources: [item],
        plugins: [audit({ chain })],
      });
      await app.ready;
      let done = 0;
      const until = performance.now() + seconds * 1000;
      const writer = async () => {
        while (performance.now() < until) {
          await app.api.createItem({ body: { name: "c", price: 1 }, overrideAccess: true });
          done++;
        }
      };
      await Promise.all(Array.from({ length: 8 }, writer));
      results[chain ? "chained" : "unchained"] += done / seconds / rounds;
      if (chain) {
        // What the throughput bought: every entry sealed into a chain that verifies.
        const report = await app.audit.verify();
        if (!report.ok) throw new Error(`audit chain cost: the chain does not verify: ${report.message}`);
        verified = report.entries;
      }
      await app.close();
    }
  console.log(`(the chain verifies: ${verified} entries at the end)`);
  console.log("\naudit chain cost (PostgreSQL, 8 concurrent writers, audited creates)");
  console.log(
    `with the chain ${Math.round(results.chained)}/s, without ${Math.round(results.unchained)}/s, ratio ${(results.chained / results.unchained).toFixed(2)} (target ≥ 0.8)`,
  );
}

export async function runWebhooksBench(options: { rounds: number; duration: number }): Promise<void> {
  await outboxCreate(options.rounds, options.duration);
  console.log("\nwebhook delivery (in process, receiver on loopback)");
  const dir = await mkdtemp(join(tmpdir(), "crudkit-bench-delivery-"));
  await delivery({ provider: "sqlite", url: `file:${join(dir, "delivery.db")}` }, "SQLite", 5);
  const pg = await freshPostgres("webhooks");
  try {
    await delivery({ provider: "postgres", url: pg.url }, "PostgreSQL", 5);
  } finally {
    await pg.drop();
  }
  const chain = await freshPostgres("chain");
  try {
    await chainCost(chain.url, options.rounds, options.duration);
  } finally {
    await chain.drop();
  }
}
