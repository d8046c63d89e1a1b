// `npm run bench -- --replicas`: issue 37 §1's cost of routing reads. The example API (on the built
// package, AUDIT=off CACHE=off REALTIME=off) runs twice on one fresh PostgreSQL database: plain,
// and with DATABASE_REPLICA_URLS naming the same database on the streaming replica
// scripts/services.sh starts (CRUDKIT_TEST_POSTGRES_REPLICA_URL). A read by id and a 10-record list,
// through the router (served by the replica) vs with no replicas configured; target ≥ 0.95. The
// replica's own count of transactions shows who served the routed reads.

import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type HttpBenchOptions, runTable, seed } from "./http.ts";
import { freshPostgres, start, stop } from "./servers.ts";

export async function runReplicasBench(options: HttpBenchOptions): Promise<void> {
  const replicaAdmin = process.env.CRUDKIT_TEST_POSTGRES_REPLICA_URL;
  if (!replicaAdmin)
    throw new Error(
      "--replicas needs CRUDKIT_TEST_POSTGRES_REPLICA_URL (source scripts/services.sh && services_start)",
    );
  const pg = await freshPostgres("replicas");
  const name = new URL(pg.url).pathname.slice(1);
  const replicaUrl = Object.assign(new URL(replicaAdmin), { pathname: `/${name}` }).toString();
  const common = { databaseUrl: pg.url, audit: "off", cache: "off", realtime: "off" } as const;
  const dir = await mkdtemp(join(tmpdir(), "crudkit-bench-replicas-"));
  const seeder = await start("api", "examples/server.ts", dir, common);
  const count = Math.max(100, options.seed);
  const ids = await seed(seeder, count).finally(() => stop(seeder));
  const plain = await start("api", "examples/server.ts", dir, common);
  const routed = await start("api", "examples/server.ts", dir, { ...common, replicaUrls: replicaUrl });
  try {
    // The replica serves once a poll finds it caught up with the seeding.
    for (let i = 0; i < 100; i++) {
      const health = (await (await fetch(`${routed.url}/api/health`)).json()) as {
        checks?: { replicas?: string };
      };
      if (health.checks?.replicas === "ok") break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const served = await replicaTransactions(replicaUrl, name);
    const reads = Array.from(
      { length: 500 },
      () => `/api/product/${ids[Math.floor(Math.random() * ids.length)]}`,
    );
    const list10 = Array.from({ length: 500 }, (_, i) => `/api/products?limit=10&page=${1 + (i % 5)}`);
    console.log(
      `\ncrudkit read replicas bench (issue 37): the example API on PostgreSQL, AUDIT=off CACHE=off REALTIME=off; ${count} products; ` +
        `${options.connections} connections, ${options.duration}s x ${options.rounds} rounds`,
    );
    const ratios: string[] = [];
    for (const [label, paths] of [
      ["read by id", reads],
      ["10-record list", list10],
    ] as const) {
      const [none, router] = await runTable(
        {
          title: `${label}: no replicas configured vs through the router (served by the replica)`,
          variants: [
            { name: "no replicas", target: plain, method: "GET", paths },
            { name: "through the router", target: routed, method: "GET", paths },
          ],
        },
        options,
      );
      ratios.push(`${label} ${(router!.requests / none!.requests).toFixed(2)}`);
    }
    const replicaServed = (await replicaTransactions(replicaUrl, name)) - served;
    console.log(
      `\nthrough the router / no replicas: ${ratios.join(", ")} (target ≥ 0.95); ` +
        `the replica committed ${replicaServed.toLocaleString("en-US")} transactions meanwhile (reads it served)`,
    );
  } finally {
    await stop(plain);
    await stop(routed);
    await pg.drop();
  }
}

/** The replica's count of committed transactions on the bench's database. */
async function replicaTransactions(url: string, name: string): Promise<number> {
  const { default: pg } = await import("pg");
  const client = new pg.Client(url);
  await client.connect();
  try {
    const { rows } = await client.query(
      "select xact_commit::text as n from pg_stat_database where datname = $1",
      [name],
    );
    return Number(rows[0]?.n ?? 0);
  } finally {
    await client.end();
  }
}
