// `npm run bench -- --logs`: issue 44's cost of operating, over HTTP on loopback. The example API
// (examples/server.ts on the built package, AUDIT=off CACHE=off REALTIME=off) runs three times on
// one SQLite database of --seed products: plain (REQUEST_LOGS=off METRICS=off, tracing API on with
// no SDK, as crudkit's defaults are), observed (REQUEST_LOGS=on with its stderr, where the JSON lines
// go, to a file, and METRICS=on), and untraced (TRACING=off). A read by id and a 10-record list,
// plain vs observed (target ≥ 0.95) and untraced vs plain (target ≥ 0.98), the variants interleaved
// in slices of a second. Each round starts its three processes anew, in an order that rotates:
// two processes of one configuration differed by up to 12% on reads (measured: the same build,
// TRACING alone apart, was 5–12% slower started third), which a process kept for every round
// would weigh on its ratio each time. The servers run on one CPU (serverCpu).

import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { copyFile, mkdtemp } from "node:fs/promises";
import { availableParallelism, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { type HttpBenchOptions, printRows, type Row, runTable, seed, type Table } from "./http.ts";
import { HEADERS, start, stop, type Target } from "./servers.ts";

export async function runLogsBench(options: HttpBenchOptions): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), "crudkit-bench-logs-"));
  const logFile = join(dir, "requests.jsonl");
  const common = { audit: "off", cache: "off", realtime: "off" } as const;
  // The products are written by a process of their own, then each compared process gets a copy
  // of the database: processes sharing one SQLite file read at different speeds (the first one
  // started about 15% faster, measured), which would weigh on the ratios.
  const seeder = await start("api", "examples/server.ts", dir, { ...common, requestLogs: "off" });
  const count = Math.max(100, options.seed);
  const ids = await seed(seeder, count).finally(() => stop(seeder));
  const copy = async () => {
    const own = await mkdtemp(join(tmpdir(), "crudkit-bench-logs-"));
    // The WAL too, in case the seeder stopped before checkpointing.
    for (const file of ["app.db", "app.db-wal"])
      await copyFile(join(dir, file), join(own, file)).catch((error: NodeJS.ErrnoException) => {
        if (error.code !== "ENOENT") throw error;
      });
    return own;
  };
  type Processes = Record<"plain" | "observed" | "untraced", Target>;
  const cpu = serverCpu();
  const configs = {
    plain: { ...common, requestLogs: "off" },
    observed: { ...common, requestLogs: "on", metrics: "on", stderrFile: logFile },
    untraced: { ...common, tracing: "off" },
  } as const;
  const names = Object.keys(configs) as (keyof Processes)[];
  const startAll = async (round: number): Promise<Processes> => {
    const started: Partial<Processes> = {};
    for (let i = 0; i < names.length; i++) {
      const name = names[(i + round) % names.length]!;
      started[name] = await start("api", "examples/server.ts", await copy(), { ...configs[name], cpu });
    }
    return started as Processes;
  };
  const reads = Array.from(
    { length: 500 },
    () => `/api/product/${ids[Math.floor(Math.random() * ids.length)]}`,
  );
  const list10 = Array.from({ length: 500 }, (_, i) => `/api/products?limit=10&page=${1 + (i % 5)}`);
  const cases = [
    ["read by id", reads],
    ["10-record list", list10],
  ] as const;
  const titles = {
    logs: (label: string) => `${label}, request logs and metrics off vs on (JSON lines to a file)`,
    tracing: (label: string) =>
      `${label}, tracing off (TRACING=off) vs the tracing API with no SDK registered (the default)`,
  };
  const tables = (
    processes: Processes,
    label: string,
    paths: readonly string[],
  ): Record<"logs" | "tracing", Table> => ({
    logs: {
      title: titles.logs(label),
      variants: [
        { name: "off", target: processes.plain, method: "GET", paths: [...paths] },
        { name: "logs + metrics", target: processes.observed, method: "GET", paths: [...paths] },
      ],
    },
    tracing: {
      title: titles.tracing(label),
      variants: [
        { name: "tracing off", target: processes.untraced, method: "GET", paths: [...paths] },
        { name: "tracing API, no SDK", target: processes.plain, method: "GET", paths: [...paths] },
      ],
    },
  });
  const [load1] = loadavg();
  console.log(
    `\ncrudkit operations bench (issue 44): the example API on SQLite, AUDIT=off CACHE=off REALTIME=off; ${count} products; ` +
      `${options.connections} connections, ${options.duration}s x ${options.rounds} rounds, each round on new processes; ` +
      `${cpu === undefined ? "servers on any CPU" : `servers on CPU ${cpu} only`}; load average before: ${load1!.toFixed(2)}`,
  );
  // Rows of every round, by case and table: averaged at the end.
  const measured = new Map<string, Row[][]>();
  let scrape = { status: 0, series: 0 };
  for (let round = 0; round < options.rounds; round++) {
    const processes = await startAll(round);
    try {
      for (const [label, paths] of cases)
        for (const [kind, table] of Object.entries(tables(processes, label, paths))) {
          // Each variant's --duration seconds as slices of one second, the variants alternating
          // (off, on, on, off, …). Measured as one block each, off always first, a few seconds of
          // a busier or quieter machine weighed on one variant: the same configuration twice, in
          // two processes, measured 0.95–1.02 of itself in 1-second slices, 0.93–1.13 in blocks.
          const slices = { ...options, duration: 1, rounds: Math.max(1, Math.round(options.duration)) };
          const rows = await runTable(table, slices, false);
          measured.set(`${label}|${kind}`, [...(measured.get(`${label}|${kind}`) ?? []), rows]);
        }
      const scraped = await fetch(`${processes.observed.url}/api/metrics`, { headers: HEADERS });
      scrape = {
        status: scraped.status,
        series: (await scraped.text()).split("\n").filter((line) => line && !line.startsWith("#")).length,
      };
    } finally {
      for (const name of names) await stop(processes[name]);
    }
  }
  const ratios: Record<"logs" | "tracing", string[]> = { logs: [], tracing: [] };
  for (const [label] of cases)
    for (const kind of ["logs", "tracing"] as const) {
      const rounds = measured.get(`${label}|${kind}`)!;
      const rows = rounds[0]!.map((row, i) => ({
        ...row,
        requests: average(rounds.map((each) => each[i]!.requests)),
        cpu: average(rounds.map((each) => each[i]!.cpu)),
        p99: Math.max(...rounds.map((each) => each[i]!.p99)),
        unexpected: rounds.reduce((sum, each) => sum + each[i]!.unexpected, 0),
      }));
      printRows(titles[kind](label), rows);
      const each = rounds.map((round) => (round[1]!.requests / round[0]!.requests).toFixed(2));
      console.log(`ratio in each round (its own processes): ${each.join(", ")}`);
      ratios[kind].push(`${label} ${(rows[1]!.requests / rows[0]!.requests).toFixed(2)}`);
    }
  const lines = readFileSync(logFile, "utf8")
    .split("\n")
    .filter((line) => line.includes('"msg":"request"'));
  console.log(
    `\nrequest logs and metrics on / off: ${ratios.logs.join(", ")} (target ≥ 0.95); ` +
      `${lines.length.toLocaleString("en-US")} request lines written, ${scrape.series} samples in a scrape (${scrape.status})`,
  );
  console.log(`tracing API without an SDK / tracing off: ${ratios.tracing.join(", ")} (target ≥ 0.98)`);
}

/**
 * The CPU each measured server runs on, all its threads; the load generator runs where the
 * scheduler puts it (the other CPU, mostly). Left to the scheduler, a server's main thread shared
 * a CPU with the load for a while now and then: one process answered about 9,000 or about 16,000
 * reads a second from one 1-second slice to the next, and the rounds' ratios spread from 0.89 to
 * 1.09. Pinned, two processes of one setup measured 1.00–1.02 of each other, round by round (both
 * measured on this project's 2-CPU machine). The server's helper threads (libuv's pool writing
 * its log, the garbage collector's) share its CPU, so their work counts. Undefined where a CPU
 * cannot be given (not Linux, one CPU, no `taskset`).
 */
function serverCpu(): number | undefined {
  if (process.platform !== "linux" || availableParallelism() < 2) return undefined;
  try {
    execFileSync("taskset", ["--cpu-list", "0", "true"], { stdio: "ignore" });
    return 0;
  } catch {
    return undefined;
  }
}

function average(values: number[]): number {
  return values.reduce((sum, value) => sum + value, 0) / values.length;
}
