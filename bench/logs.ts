// `npm run bench -- --logs`: issue 44's cost of request logs, over HTTP on loopback. The example
// API (examples/server.ts on the built package, AUDIT=off CACHE=off REALTIME=off) runs twice on one
// SQLite database of --seed products: REQUEST_LOGS=off, and REQUEST_LOGS=on with its stderr (where
// the JSON lines go) to a file. A read by id and a 10-record list, each off vs on, the variants
// interleaved and their order rotating from round to round. Target: on ≥ 0.95 of off. (The issue's
// target covers logs and metrics together; metrics are not built yet.)

import { readFileSync } from "node:fs";
import { mkdtemp } from "node:fs/promises";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { type HttpBenchOptions, runTable, seed } from "./http.ts";
import { start, stop } from "./servers.ts";

export async function runLogsBench(options: HttpBenchOptions): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), "crudkit-bench-logs-"));
  const logFile = join(dir, "requests.jsonl");
  const common = { audit: "off", cache: "off", realtime: "off" } as const;
  const plain = await start("api", "examples/server.ts", dir, { ...common, requestLogs: "off" });
  const logged = await start("api", "examples/server.ts", dir, {
    ...common,
    requestLogs: "on",
    stderrFile: logFile,
  });
  try {
    const count = Math.max(100, options.seed);
    const ids = await seed(plain, count);
    const reads = Array.from(
      { length: 500 },
      () => `/api/product/${ids[Math.floor(Math.random() * ids.length)]}`,
    );
    const list10 = Array.from({ length: 500 }, (_, i) => `/api/products?limit=10&page=${1 + (i % 5)}`);
    const [load1] = loadavg();
    console.log(
      `\ncrudkit logs bench (issue 44): the example API on SQLite, AUDIT=off CACHE=off REALTIME=off; ${count} products; ` +
        `${options.connections} connections, ${options.duration}s x ${options.rounds} rounds; load average before: ${load1!.toFixed(2)}`,
    );
    const ratios: string[] = [];
    for (const [label, paths] of [
      ["read by id", reads],
      ["10-record list", list10],
    ] as const) {
      const [off, on] = await runTable(
        {
          title: `${label}, request logs off vs on (JSON lines to a file)`,
          variants: [
            { name: "off", target: plain, method: "GET", paths },
            { name: "on", target: logged, method: "GET", paths },
          ],
        },
        options,
      );
      ratios.push(`${label} ${(on!.requests / off!.requests).toFixed(2)}`);
    }
    const lines = readFileSync(logFile, "utf8")
      .split("\n")
      .filter((line) => line.includes('"msg":"request"'));
    console.log(
      `\nrequest logs on / off: ${ratios.join(", ")} (target ≥ 0.95); ${lines.length.toLocaleString("en-US")} request lines written`,
    );
  } finally {
    await stop(plain);
    await stop(logged);
  }
}
