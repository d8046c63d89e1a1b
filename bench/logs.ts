// `npm run bench -- --logs`: issue 44's cost of operating, over HTTP on loopback. The example API
// (examples/server.ts on the built package, AUDIT=off CACHE=off REALTIME=off) runs three times on
// one SQLite database of --seed products: plain (REQUEST_LOGS=off METRICS=off, tracing API on with
// no SDK, as crudkit's defaults are), observed (REQUEST_LOGS=on with its stderr, where the JSON lines
// go, to a file, and METRICS=on), and untraced (TRACING=off). A read by id and a 10-record list,
// plain vs observed (target ≥ 0.95) and untraced vs plain (target ≥ 0.98), the variants interleaved
// and their order rotating from round to round.

import { readFileSync } from "node:fs";
import { copyFile, mkdtemp } from "node:fs/promises";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { type HttpBenchOptions, runTable, seed } from "./http.ts";
import { HEADERS, start, stop } from "./servers.ts";

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
  const plain = await start("api", "examples/server.ts", await copy(), { ...common, requestLogs: "off" });
  const observed = await start("api", "examples/server.ts", await copy(), {
    ...common,
    requestLogs: "on",
    metrics: "on",
    stderrFile: logFile,
  });
  const untraced = await start("api", "examples/server.ts", await copy(), { ...common, tracing: "off" });
  try {
    const reads = Array.from(
      { length: 500 },
      () => `/api/product/${ids[Math.floor(Math.random() * ids.length)]}`,
    );
    const list10 = Array.from({ length: 500 }, (_, i) => `/api/products?limit=10&page=${1 + (i % 5)}`);
    const [load1] = loadavg();
    console.log(
      `\ncrudkit operations bench (issue 44): the example API on SQLite, AUDIT=off CACHE=off REALTIME=off; ${count} products; ` +
        `${options.connections} connections, ${options.duration}s x ${options.rounds} rounds; load average before: ${load1!.toFixed(2)}`,
    );
    const ratios: string[] = [];
    const tracingRatios: string[] = [];
    for (const [label, paths] of [
      ["read by id", reads],
      ["10-record list", list10],
    ] as const) {
      const [off, on] = await runTable(
        {
          title: `${label}, request logs and metrics off vs on (JSON lines to a file)`,
          variants: [
            { name: "off", target: plain, method: "GET", paths },
            { name: "logs + metrics", target: observed, method: "GET", paths },
          ],
        },
        options,
      );
      ratios.push(`${label} ${(on!.requests / off!.requests).toFixed(2)}`);
      const [none, api] = await runTable(
        {
          title: `${label}, tracing off (TRACING=off) vs the tracing API with no SDK registered (the default)`,
          variants: [
            { name: "tracing off", target: untraced, method: "GET", paths },
            { name: "tracing API, no SDK", target: plain, method: "GET", paths },
          ],
        },
        options,
      );
      tracingRatios.push(`${label} ${(api!.requests / none!.requests).toFixed(2)}`);
    }
    const scraped = await fetch(`${observed.url}/api/metrics`, { headers: HEADERS });
    const series = (await scraped.text()).split("\n").filter((line) => line && !line.startsWith("#")).length;
    const lines = readFileSync(logFile, "utf8")
      .split("\n")
      .filter((line) => line.includes('"msg":"request"'));
    console.log(
      `\nrequest logs and metrics on / off: ${ratios.join(", ")} (target ≥ 0.95); ` +
        `${lines.length.toLocaleString("en-US")} request lines written, ${series} samples in a scrape (${scraped.status})`,
    );
    console.log(`tracing API without an SDK / tracing off: ${tracingRatios.join(", ")} (target ≥ 0.98)`);
  } finally {
    await stop(plain);
    await stop(observed);
    await stop(untraced);
  }
}
