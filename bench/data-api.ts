// `npm run bench -- --data-api`: issue 41's batch and aggregate figures. This file is both the
// bench and the API it measures: run as a child process (CRUDKIT_DATA_API_SERVE=on, on the built
// package unless --source, as bench/servers.ts runs the example) it serves `item` and `sale` on a
// free loopback port, after seeding `--rows` sales with multi-row INSERTs through app.db. The
// bench talks to it over HTTP from this process, on a SQLite file, then on a fresh PostgreSQL
// database when CRUDKIT_TEST_POSTGRES_URL is set (or only the one --db names).
//   1. Batch: rows per second of 50 creates in one POST /api/batch against 50 separate POSTs, 8
//      clients each, rounds interleaved (the order alternating); medians. Target ≥ 5x.
//   2. Aggregates over `--rows` sales (100,000 by default; the figures are for 1,000,000),
//      1,000 owners (`ownedBy`), an indexed `status`, a numeric `amount`; 1 connection, every
//      answer timed: alice's count by status over her rows (p50 ≤ 5 ms), a whole-table count by
//      status (reported), read by id alone (reported) and while 4 clients run whole-table
//      aggregates (p99 ≤ 25 ms).
// A missed target is printed, not failed: the run exits non-zero only when an answer is not 2xx.

import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import autocannon from "autocannon";
import {
  createResource,
  crudkit,
  databaseFromUrl,
  ownedBy,
  references,
  referencesMany,
  type User,
  withId,
} from "crudkit-api";
import { serve } from "crudkit-api/node";
import { type Kysely, sql } from "kysely";
import { z } from "zod";
import { serveExpandReference } from "./reference-expand.ts";
import { cpuMicros, freshPostgres, stop, type Target } from "./servers.ts";

export interface DataApiOptions {
  /** Sales seeded for the aggregates. */
  rows: number;
  rounds: number;
  /** Seconds each measurement runs. */
  duration: number;
  /** Only this database (sqlite or postgres). */
  db: string | undefined;
}

const THIS_FILE = fileURLToPath(import.meta.url);
const SERVE_FLAG = "CRUDKIT_DATA_API_SERVE";
/** See bench/servers.ts: the API runs on the built package unless --source. */
const BUILT_TSCONFIG = fileURLToPath(new URL("./tsconfig.built.json", import.meta.url));

const BATCH_SIZE = 50;
/** Concurrent clients of the batch comparison. */
const CLIENTS = 8;
const OWNERS = 1_000;
const HEAVY_CLIENTS = 4;
/** The heavy clients start this far apart, so their scans do not run in step (see bench/scale.ts). */
const HEAVY_STAGGER = 250;
const WARM_UP = 1;
const STATUSES = ["open", "paid", "shipped", "refunded", "void"] as const;

const WRITER = { "x-user": "writer", "content-type": "application/json" };
/** One of the 1,000 owners: her aggregates are over her rows only. */
const ALICE = { "x-user": "alice" };
/** Sees every row (the `ownedBy` bypass). */
const ADMIN = { "x-user": "admin", "x-roles": "admin" };

// The API. Callers are named by headers, checked by nobody: x-user (her id), x-roles (a list).

const signedIn = ({ user }: { user: unknown }) => user !== null;
const isAdmin = (user: User) => (user.roles as string[] | undefined)?.includes("admin") === true;

/** What the batches create. */
const item = createResource({
  name: "item",
  schema: withId({ name: z.string().max(100), price: z.number() }),
  access: { create: signedIn, read: signedIn, list: signedIn },
});

/** What the aggregates read: 1,000 owners' sales. */
const sale = createResource({
  name: "sale",
  schema: withId({
    ownerId: z.string().max(100).optional(),
    status: z.enum(STATUSES),
    amount: z.number(),
  }),
  indexes: [["ownerId", "status"], "status"],
  aggregates: { fields: ["amount"], groupBy: ["status"] },
  access: ownedBy("ownerId", { bypass: isAdmin }),
});

/** Many-to-many: articles with an author (a reference) and 5 labels (a list of ids). */
const author = createResource({
  name: "author",
  schema: withId({ name: z.string().max(100) }),
  access: { read: true, list: true },
});
const label = createResource({
  name: "label",
  schema: withId({ name: z.string().max(100) }),
  access: { read: true, list: true },
});
const article = createResource({
  name: "article",
  schema: withId({
    title: z.string().max(100),
    authorId: references(author),
    labelIds: referencesMany(label, { maxItems: 20 }),
  }),
  access: { read: true, list: true },
});
const ARTICLES = 1_000;
const LABELS_EACH = 5;

/** 50 authors, 200 labels, 1,000 articles of 5 labels each, through app.db. */
async function seedArticles(db: Kysely<any>): Promise<void> {
  const at = new Date(Date.UTC(2024, 0, 1)).toISOString();
  const stamped = (row: Record<string, unknown>) => ({ ...row, createdAt: at, updatedAt: at });
  await db.transaction().execute(async (trx) => {
    await trx
      .insertInto("author")
      .values(Array.from({ length: 50 }, (_, i) => stamped({ id: `au${i}`, name: `Author ${i}` })))
      .execute();
    await trx
      .insertInto("label")
      .values(Array.from({ length: 200 }, (_, i) => stamped({ id: `lb${i}`, name: `Label ${i}` })))
      .execute();
    const articles = Array.from({ length: ARTICLES }, (_, i) =>
      stamped({ id: `ar${i}`, title: `Article ${i}`, authorId: `au${i % 50}` }),
    );
    for (let i = 0; i < ARTICLES; i += 250)
      await trx
        .insertInto("article")
        .values(articles.slice(i, i + 250))
        .execute();
    const links = articles.flatMap((_, i) =>
      Array.from({ length: LABELS_EACH }, (_, p) => ({
        owner: `ar${i}`,
        target: `lb${(i * 7 + p * 31) % 200}`,
        position: p,
      })),
    );
    for (let i = 0; i < links.length; i += 500)
      await trx
        .insertInto("article_labelIds")
        .values(links.slice(i, i + 500))
        .execute();
  });
}

/** Sale n: owner n mod 1,000 (owner 0 is alice), a status changing every 1,000 rows, createdAt 1 s apart. */
function saleRow(n: number) {
  const at = new Date(Date.UTC(2024, 0, 1) + n * 1000).toISOString();
  const owner = n % OWNERS;
  return {
    id: saleId(n),
    ownerId: owner === 0 ? "alice" : `owner${owner}`,
    status: STATUSES[Math.floor(n / OWNERS) % STATUSES.length]!,
    amount: (n % 10_000) / 100,
    createdAt: at,
    updatedAt: at,
  };
}
const saleId = (n: number) => `s${String(n).padStart(9, "0")}`;

/** `rows` sales in 1,000-row INSERTs, 100 of them a transaction, then the planner's statistics. */
async function seedSales(db: Kysely<any>, rows: number, postgres: boolean): Promise<void> {
  const CHUNK = 1_000;
  for (let first = 0; first < rows; first += 100 * CHUNK)
    await db.transaction().execute(async (trx) => {
      for (let start = first; start < Math.min(rows, first + 100 * CHUNK); start += CHUNK) {
        const values = [];
        for (let n = start; n < Math.min(rows, start + CHUNK); n++) values.push(saleRow(n));
        await trx.insertInto("sale").values(values).execute();
      }
    });
  await (postgres ? sql`vacuum analyze "sale"` : sql`analyze`).execute(db);
}

/** The child: the API on DATABASE_URL, seeded, then "listening <url>" on stdout. */
async function serveDataApi(): Promise<void> {
  const url = process.env.DATABASE_URL!;
  const app = crudkit({
    database: databaseFromUrl(url),
    autoMigrate: true,
    resources: [item, sale, author, label, article],
    identify: (request): User | null => {
      const id = request.headers.get("x-user");
      if (!id) return null;
      return { id, roles: (request.headers.get("x-roles") ?? "").split(",").filter(Boolean) };
    },
  });
  await app.ready;
  await seedSales(app.db, Number(process.env.SALES ?? 0), url.startsWith("postgres"));
  await seedArticles(app.db);
  const running = await serve(app, { port: 0, hostname: "127.0.0.1", waitForDatabase: false });
  // The many-to-many figure's yardstick, on the same database (bench/reference-expand.ts).
  const reference = await serveExpandReference(url);
  console.log(`reference ${reference.url}`);
  console.log(`listening ${running.url}`);
  const close = async () => {
    await reference.close();
    await running.close();
    process.exit(0);
  };
  process.on("SIGINT", close);
  process.on("SIGTERM", close);
}

if (process.env[SERVE_FLAG] === "on" && process.argv[1] === THIS_FILE) await serveDataApi();

// The bench.

/** The API on `url` with `rows` sales, once it listens; rejects with its error output if it exits first. */
function startServer(url: string, rows: number): Promise<Target & { expandReference: string }> {
  const child: ChildProcess = spawn(process.execPath, ["--import", "tsx", THIS_FILE], {
    env: {
      ...process.env,
      [SERVE_FLAG]: "on",
      DATABASE_URL: url,
      SALES: String(rows),
      ...(process.env.CRUDKIT_BENCH_SOURCE !== "on" ? { TSX_TSCONFIG_PATH: BUILT_TSCONFIG } : {}),
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr!.on("data", (chunk) => {
    stderr += chunk;
  });
  return new Promise((resolve, reject) => {
    let out = "";
    child.stdout!.on("data", (chunk) => {
      out += chunk;
      const listening = /listening (\S+)/.exec(out)?.[1];
      const reference = /reference (\S+)/.exec(out)?.[1];
      if (listening && reference)
        resolve({ name: "api", url: listening, process: child, ids: [], expandReference: reference });
    });
    child.once("exit", (code) => reject(new Error(`the data API exited with ${code}: ${stderr.trim()}`)));
  });
}

interface Run {
  result: autocannon.Result;
  /** Every answer's latency in ms (autocannon's own percentiles are whole milliseconds). */
  latencies: number[];
  /** The API process's CPU time over the run, µs (on PostgreSQL the database's is not in it). */
  cpu: number;
}

function load(
  target: Target,
  requests: autocannon.Request[],
  connections: number,
  duration: number,
): Promise<Run> {
  return new Promise((resolve, reject) => {
    const latencies: number[] = [];
    const before = cpuMicros(target.process);
    const instance = autocannon(
      { url: target.url, connections, duration, requests, timeout: 60 },
      (error, result) =>
        error ? reject(error) : resolve({ result, latencies, cpu: cpuMicros(target.process) - before }),
    );
    instance.on("response", (_client, _status, _bytes, ms) => latencies.push(ms));
  });
}

const bad = (r: autocannon.Result) => r.non2xx + r.errors + r.timeouts;

/** Nearest rank, of a copy. */
function percentile(values: readonly number[], fraction: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil(fraction * sorted.length) - 1)] ?? Number.NaN;
}
const median = (values: readonly number[]) => percentile(values, 0.5);
const ms = (value: number) => `${value.toFixed(value < 10 ? 2 : 1)} ms`;
const verdict = (ok: boolean) => (ok ? "pass" : "MISS");

interface Tables {
  batch: string[][];
  aggregates: string[][];
  expansion: string[][];
  /** Answers that were not 2xx, and errors. */
  failures: number;
}

async function batchVsSeparate(target: Target, engine: string, options: DataApiOptions, tables: Tables) {
  const create = (i: number) => ({ name: `Hat ${i}`, price: 12.5 });
  const variants = [
    {
      name: "separate",
      rowsEach: 1,
      requests: Array.from({ length: BATCH_SIZE }, (_, i) => ({
        method: "POST" as const,
        path: "/api/item",
        headers: WRITER,
        body: JSON.stringify(create(i)),
      })),
    },
    {
      name: "batch",
      rowsEach: BATCH_SIZE,
      requests: [
        {
          method: "POST" as const,
          path: "/api/batch",
          headers: WRITER,
          body: JSON.stringify({
            requests: Array.from({ length: BATCH_SIZE }, (_, i) => ({
              method: "POST",
              path: "/item",
              body: create(i),
            })),
          }),
        },
      ],
    },
  ];
  const runs = new Map(variants.map((v) => [v.name, [] as Run[]]));
  for (const variant of variants) await load(target, variant.requests, CLIENTS, WARM_UP);
  for (let round = 0; round < options.rounds; round++)
    for (const variant of round % 2 === 0 ? variants : [...variants].reverse())
      runs.get(variant.name)!.push(await load(target, variant.requests, CLIENTS, options.duration));
  const figures = variants.map((variant) => {
    const of = runs.get(variant.name)!;
    tables.failures += of.reduce((sum, run) => sum + bad(run.result), 0);
    const rows = of.map((run) => run.result.requests.average * variant.rowsEach);
    const cpu = of.map((run) => run.cpu / Math.max(1, run.result.requests.total * variant.rowsEach));
    return {
      rows: median(rows),
      p99: median(of.map((run) => percentile(run.latencies, 0.99))),
      cpu: median(cpu),
    };
  });
  const [separate, batch] = figures as [(typeof figures)[0], (typeof figures)[0]];
  const ratio = batch.rows / separate.rows;
  tables.batch.push([
    engine,
    separate.rows.toFixed(0),
    ms(separate.p99),
    `${separate.cpu.toFixed(0)} µs`,
    batch.rows.toFixed(0),
    ms(batch.p99),
    `${batch.cpu.toFixed(0)} µs`,
    `${ratio.toFixed(2)}x`,
    "≥ 5x",
    verdict(ratio >= 5),
  ]);
}

const AGGREGATE = "/api/sales/aggregate?aggregate[count]=*&groupBy=status";
/** What the heavy clients run: every row, three functions by status. */
const HEAVY_AGGREGATE =
  "/api/sales/aggregate?aggregate[count]=*&aggregate[sum]=amount&aggregate[avg]=amount&groupBy=status";

interface AggregateScenario {
  name: string;
  requests: autocannon.Request[];
  percentile: "p50" | "p99";
  /** ms; none: reported only. */
  limit?: number;
  underLoad?: boolean;
}

function aggregateScenarios(rows: number): AggregateScenario[] {
  const reads = Array.from({ length: 200 }, () => ({
    method: "GET" as const,
    path: `/api/sale/${saleId(Math.floor(Math.random() * rows))}`,
    headers: ADMIN,
  }));
  return [
    {
      name: "alice's count by status (her rows)",
      requests: [{ method: "GET", path: AGGREGATE, headers: ALICE }],
      percentile: "p50",
      limit: 5,
    },
    {
      name: "whole-table count by indexed status",
      requests: [{ method: "GET", path: AGGREGATE, headers: ADMIN }],
      percentile: "p50",
    },
    { name: "read by id, alone", requests: reads, percentile: "p99" },
    {
      name: `read by id under ${HEAVY_CLIENTS} whole-table aggregates`,
      requests: reads,
      percentile: "p99",
      limit: 25,
      underLoad: true,
    },
  ];
}

const sleep = (wait: number) => new Promise((resolve) => setTimeout(resolve, wait));

/** Clients running the heavy aggregate one after another until `stop()`, which waits for the last. */
function heavyAggregates(url: string): { stop(): Promise<{ done: number; failed: number }> } {
  let stopping = false;
  const counts = { done: 0, failed: 0 };
  const client = async (_: unknown, i: number) => {
    await sleep(i * HEAVY_STAGGER);
    while (!stopping) {
      const response = await fetch(url, { headers: ADMIN }).catch(() => undefined);
      if (response?.ok) counts.done++;
      else counts.failed++;
      await response?.arrayBuffer();
    }
  };
  const running = Promise.all(Array.from({ length: HEAVY_CLIENTS }, client));
  return {
    async stop() {
      stopping = true;
      await running;
      return counts;
    },
  };
}

async function aggregates(target: Target, engine: string, options: DataApiOptions, tables: Tables) {
  for (const scenario of aggregateScenarios(options.rows)) {
    await load(target, scenario.requests, 1, WARM_UP);
    const runs: Run[] = [];
    let heavyDone = 0;
    for (let round = 0; round < options.rounds; round++) {
      const heavy = scenario.underLoad ? heavyAggregates(target.url + HEAVY_AGGREGATE) : undefined;
      if (heavy) await sleep(HEAVY_CLIENTS * HEAVY_STAGGER + 100);
      runs.push(await load(target, scenario.requests, 1, options.duration));
      const counts = await heavy?.stop();
      heavyDone += counts?.done ?? 0;
      tables.failures += counts?.failed ?? 0;
    }
    tables.failures += runs.reduce((sum, run) => sum + bad(run.result), 0);
    const p50 = median(runs.map((run) => percentile(run.latencies, 0.5)));
    const p99 = median(runs.map((run) => percentile(run.latencies, 0.99)));
    const shown = scenario.percentile === "p50" ? p50 : p99;
    const seconds = options.rounds * options.duration;
    tables.aggregates.push([
      engine,
      scenario.name,
      ms(p50),
      ms(p99),
      median(runs.map((run) => run.result.requests.average)).toFixed(0),
      scenario.underLoad ? `${(heavyDone / seconds).toFixed(1)} aggregates/s` : "",
      scenario.limit === undefined
        ? `${scenario.percentile}: reported`
        : `${scenario.percentile} ≤ ${scenario.limit} ms`,
      scenario.limit === undefined ? "" : verdict(shown <= scenario.limit),
    ]);
  }
}

function print(title: string, rows: string[][]): void {
  console.log(`\n${title}`);
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  for (const row of rows) console.log(row.map((cell, i) => cell.padEnd(widths[i]!)).join("  "));
}

export async function runDataApiBench(options: DataApiOptions): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), "crudkit-data-api-"));
  const tables: Tables = {
    batch: [
      [
        "database",
        "separate rows/s",
        "p99/POST",
        "CPU/row",
        "batch rows/s",
        "p99/batch",
        "CPU/row",
        "ratio",
        "target",
        "result",
      ],
    ],
    aggregates: [["database", "scenario", "p50", "p99", "req/s", "meanwhile", "target", "result"]],
    expansion: [
      [
        "database",
        "expand=author req/s",
        "expand=labels req/s",
        "p99 labels",
        "ratio",
        "target",
        "result",
        "hand-written author req/s",
        "hand-written labels req/s",
        "hand-written ratio",
      ],
    ],
    failures: 0,
  };
  try {
    for (const db of options.db ? [options.db] : ["sqlite", "postgres"]) {
      if (db === "postgres" && !process.env.CRUDKIT_TEST_POSTGRES_URL) {
        console.log("PostgreSQL: skipped, CRUDKIT_TEST_POSTGRES_URL is not set (source scripts/services.sh)");
        continue;
      }
      const engine = db === "postgres" ? "PostgreSQL" : "SQLite file";
      const postgres = db === "postgres" ? await freshPostgres("data_api") : undefined;
      try {
        const began = Date.now();
        const target = await startServer(postgres?.url ?? `file:${join(dir, "data-api.db")}`, options.rows);
        console.log(
          `${engine}: API up, ${options.rows} sales seeded through app.db, in ${((Date.now() - began) / 1000).toFixed(1)} s`,
        );
        try {
          await aggregates(target, engine, options, tables);
          await batchVsSeparate(target, engine, options, tables);
          await listExpansion(target, engine, options, tables);
        } finally {
          await stop(target);
        }
      } finally {
        await postgres?.drop();
      }
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
    print(
      `Batch: ${BATCH_SIZE} creates in one POST /api/batch vs ${BATCH_SIZE} separate POST /api/item; the bench's API in a child process over HTTP on 127.0.0.1, ${CLIENTS} clients, ${options.duration}s x ${options.rounds} rounds interleaved, medians (CPU: the API process only)`,
      tables.batch,
    );
    print(
      `Many-to-many: a page of 100 articles with expand=labels (${LABELS_EACH} labels each, a junction table) vs the same page with expand=author (a reference); ${CLIENTS} clients, ${options.duration}s x ${options.rounds} rounds interleaved, medians. Hand-written: the same two pages (the same records, lists and expansions) on node:http and the driver (bench/reference-expand.ts), same process and database`,
      tables.expansion,
    );
    print(
      `Aggregates: ${options.rows} sales of ${OWNERS} owners (ownedBy), indexed status; same server, 1 connection, every answer timed, ${options.duration}s x ${options.rounds} rounds, medians`,
      tables.aggregates,
    );
  }
  if (tables.failures > 0) {
    console.log(`${tables.failures} answers that were not 2xx, or errors`);
    process.exitCode = 1;
  }
}

/** A page of 100 articles expanding their 5 labels each, against the same page expanding its author. */
async function listExpansion(
  target: Target & { expandReference: string },
  engine: string,
  options: DataApiOptions,
  tables: Tables,
) {
  const page = (expand: string, prefix = "/api") =>
    Array.from({ length: 5 }, (_, i) => ({
      method: "GET" as const,
      path: `${prefix}/articles?limit=100&page=${i + 1}&expand=${expand}`,
      headers: ALICE,
    }));
  // The same pages written by hand (bench/reference-expand.ts), same process and database.
  const reference = { ...target, url: target.expandReference };
  const variants = [
    { name: "author", target, requests: page("author") },
    { name: "labels", target, requests: page("labels") },
    { name: "reference author", target: reference, requests: page("author", "") },
    { name: "reference labels", target: reference, requests: page("labels", "") },
  ];
  const runs = new Map(variants.map((v) => [v.name, [] as Run[]]));
  for (const variant of variants) await load(variant.target, variant.requests, CLIENTS, WARM_UP);
  for (let round = 0; round < options.rounds; round++)
    for (const variant of round % 2 === 0 ? variants : [...variants].reverse())
      runs.get(variant.name)!.push(await load(variant.target, variant.requests, CLIENTS, options.duration));
  const rate = (name: string) => {
    const of = runs.get(name)!;
    tables.failures += of.reduce((sum, run) => sum + bad(run.result), 0);
    return median(of.map((run) => run.result.requests.average));
  };
  const single = rate("author");
  const listed = rate("labels");
  const p99 = median(runs.get("labels")!.map((run) => percentile(run.latencies, 0.99)));
  const ratio = listed / single;
  const [referenceSingle, referenceListed] = [rate("reference author"), rate("reference labels")];
  tables.expansion.push([
    engine,
    single.toFixed(0),
    listed.toFixed(0),
    ms(p99),
    ratio.toFixed(2),
    "≥ 0.8",
    verdict(ratio >= 0.8),
    referenceSingle.toFixed(0),
    referenceListed.toFixed(0),
    (referenceListed / referenceSingle).toFixed(2),
  ]);
}
