// `npm run bench -- --http`: issue 46's measurements, over HTTP on loopback, all in one run. The
// example API (examples/server.ts on the built package, AUDIT=off CACHE=off REALTIME=off) runs as
// three processes on one SQLite database of --seed products (100 at least), each with one switch:
// none (COMPRESS=off LIST_ETAGS=off), compression (COMPRESS=on), list ETags (LIST_ETAGS=on). The
// variants of each table run in turn within every round, their order rotating from round to round;
// every request is the example's admin (HEADERS in bench/servers.ts).
//   1. Compression of a 100-record list: bytes of one answer's body (one raw node:http request per
//      variant: what goes over the wire), identity vs gzip vs brotli, and req/s with compression
//      off vs on (on loopback the bytes cost nothing: this is the CPU price). Target: ≥ 5x fewer
//      bytes and ≥ 0.85 of the uncompressed req/s, else compression stays off by default.
//   2. List ETags on a 100-record and a 10-record list: req/s with listETags on vs off (target: at
//      most 3% slower, else they stay opt-in), and revalidations (If-None-Match, answered 304).
//   3. HEAD vs GET on a read and on the 100-record list (HEAD must cost no more than GET).
//   A read by id with compression off vs on: below the threshold an answer is sent as it is, at
//   the same cost (target ≥ 0.95).
// The bench checks first that each server acts on its switches (and stops when one does not).

import { mkdtemp, rm } from "node:fs/promises";
import { request as httpRequest } from "node:http";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import autocannon from "autocannon";
import { cpuMicros, HEADERS, start, stop, type Target } from "./servers.ts";

export interface HttpBenchOptions {
  duration: number;
  connections: number;
  rounds: number;
  /** Products seeded (100 at least). */
  seed: number;
}

interface Variant {
  name: string;
  target: Target;
  method: "GET" | "HEAD";
  paths: string[];
  /** Sent besides HEADERS (Accept-Encoding). */
  headers?: Record<string, string>;
  /** Each request names its page's current ETag in If-None-Match. */
  revalidate?: boolean;
  /** The status every answer should have. @default 200 */
  status?: number;
  /** Requests per second in all (autocannon's overallRate); unset: as fast as the server goes. */
  rate?: number;
}

export interface Table {
  title: string;
  /** The first variant is the one the others are compared with. */
  variants: Variant[];
}

interface Measurement {
  requests: number;
  /** Server CPU (user + system) per request, µs. */
  cpu: number;
  p99: number;
  /** Answers with another status than the variant's, and errors. */
  unexpected: number;
}

/** What one answer's body weighs on the wire (node:http decompresses nothing). */
interface Wire {
  status: number;
  bytes: number;
  encoding: string;
  etag: string | undefined;
}

const ACCEPT_ALL = "gzip, deflate, br";

/** One request; the body's bytes as received. */
function raw(url: string, method: string, headers: Record<string, string>): Promise<Wire> {
  return new Promise((done, fail) => {
    const request = httpRequest(url, { method, headers, agent: false }, (response) => {
      let bytes = 0;
      response.on("data", (chunk: Buffer) => {
        bytes += chunk.byteLength;
      });
      response.on("end", () =>
        done({
          status: response.statusCode ?? 0,
          bytes,
          encoding: String(response.headers["content-encoding"] ?? "identity"),
          etag: response.headers.etag,
        }),
      );
      response.on("error", fail);
    });
    request.on("error", fail);
    request.end();
  });
}

/**
 * autocannon's parser (http-parser-js) is never told a request was HEAD, nor that a 304 has no
 * body: it would wait for the Content-Length a HEAD states, or for the connection's end after a
 * 304, and time out. This tells it to skip the body, as Node's own client does.
 */
function skipBodies(head: boolean) {
  return (client: autocannon.Client): void => {
    const parser = (client as unknown as { parser: object }).parser;
    const key = (parser.constructor as unknown as { kOnHeadersComplete: number }).kOnHeadersComplete;
    let handler: (info: { statusCode: number }) => unknown = () => undefined;
    // autocannon sets its handler after setupClient: keep it, and answer for it.
    Object.defineProperty(parser, key, {
      configurable: true,
      get: () => (info: { statusCode: number }) => {
        handler(info);
        return head || info.statusCode === 304 || info.statusCode === 204 ? true : undefined;
      },
      set: (fn: typeof handler) => {
        handler = fn;
      },
    });
  };
}

/** Each path with its headers, made once (as bench/run.ts does, so the load generator keeps up). */
async function requestsOf(variant: Variant): Promise<autocannon.Request[]> {
  const base = { ...HEADERS, ...variant.headers };
  const tags = new Map<string, string>();
  if (variant.revalidate)
    for (const path of new Set(variant.paths)) {
      const { etag } = await raw(variant.target.url + path, "GET", base);
      if (!etag) throw new Error(`${variant.name}: ${path} has no ETag`);
      tags.set(path, etag);
    }
  return variant.paths.map((path) => ({
    method: variant.method,
    path,
    headers: tags.has(path) ? { ...base, "if-none-match": tags.get(path)! } : base,
  }));
}

async function measure(
  variant: Variant,
  requests: autocannon.Request[],
  duration: number,
  connections: number,
): Promise<Measurement> {
  const before = cpuMicros(variant.target.process);
  const result = await autocannon({
    url: variant.target.url,
    connections,
    duration,
    headers: HEADERS,
    requests,
    setupClient: skipBodies(variant.method === "HEAD"),
    ...(variant.rate ? { overallRate: variant.rate } : {}),
  });
  const cpu = cpuMicros(variant.target.process) - before;
  const expected = String(variant.status ?? 200) as `${number}`;
  const matching = result.statusCodeStats?.[expected]?.count ?? 0;
  const answered = Object.values(result.statusCodeStats ?? {}).reduce((n, s) => n + (s.count ?? 0), 0);
  return {
    requests: result.requests.average,
    cpu: result.requests.total > 0 ? cpu / result.requests.total : 0,
    p99: result.latency.p99,
    unexpected: answered - matching + result.errors + result.timeouts,
  };
}

export interface Row {
  variant: Variant;
  requests: number;
  cpu: number;
  p99: number;
  unexpected: number;
  wire: Wire;
}

/**
 * Measures a table's variants, interleaved, and prints it. `print: false` only measures (for a
 * bench that adds up rounds of its own: printRows prints them).
 */
export async function runTable(table: Table, options: HttpBenchOptions, print = true): Promise<Row[]> {
  const requests = new Map<Variant, autocannon.Request[]>();
  for (const variant of table.variants) requests.set(variant, await requestsOf(variant));
  const runs = new Map<Variant, Measurement[]>(table.variants.map((v) => [v, []]));
  // A second of each, unmeasured, so none is measured while its path is still being compiled.
  for (const variant of table.variants)
    await measure(variant, requests.get(variant)!, 1, options.connections);
  for (let round = 0; round < options.rounds; round++) {
    const n = table.variants.length;
    for (let i = 0; i < n; i++) {
      const variant = table.variants[(i + round) % n]!;
      runs
        .get(variant)!
        .push(await measure(variant, requests.get(variant)!, options.duration, options.connections));
    }
  }
  const rows: Row[] = [];
  for (const variant of table.variants) {
    const ms = runs.get(variant)!;
    const first = requests.get(variant)![0]!;
    rows.push({
      variant,
      requests: ms.reduce((sum, m) => sum + m.requests, 0) / ms.length,
      cpu: ms.reduce((sum, m) => sum + m.cpu, 0) / ms.length,
      p99: Math.max(...ms.map((m) => m.p99)),
      unexpected: ms.reduce((sum, m) => sum + m.unexpected, 0),
      wire: await raw(
        variant.target.url + first.path,
        variant.method,
        first.headers as Record<string, string>,
      ),
    });
  }
  if (print) printRows(table.title, rows);
  return rows;
}

/** Prints a table's rows, and fails the bench when a variant got answers it did not expect. */
export function printRows(title: string, rows: Row[]): void {
  printTable(title, rows);
  for (const row of rows)
    if (row.unexpected > 0) {
      console.log(
        `${row.variant.name}: ${row.unexpected} answers not ${row.variant.status ?? 200} (or errors); one answer was ${row.wire.status}`,
      );
      process.exitCode = 1;
    }
}

function printTable(title: string, rows: Row[]): void {
  const base = rows[0]!;
  const cells = [
    ["scenario", "req/s", "p99", "CPU/req", "ratio", "bytes per answer", "status", "other statuses"],
    ...rows.map((row) => [
      row.variant.name,
      row.requests.toFixed(0),
      `${row.p99} ms`,
      `${row.cpu.toFixed(0)} µs`,
      (row.requests / base.requests).toFixed(2),
      `${row.wire.bytes.toLocaleString("en-US")} (${row.wire.bytes === 0 ? "none" : row.wire.encoding})`,
      String(row.wire.status),
      String(row.unexpected),
    ]),
  ];
  const widths = cells[0]!.map((_, i) => Math.max(...cells.map((r) => r[i]!.length)));
  const line = (row: string[]) => `| ${row.map((cell, i) => cell.padEnd(widths[i]!)).join(" | ")} |`;
  console.log(`\n${title}\n`);
  console.log(line(cells[0]!));
  console.log(`|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`);
  for (const row of cells.slice(1)) console.log(line(row));
}

/** Whether each server acts on its switches: compressed only where on, tagged only where on. */
async function switchesWork(plain: Target, compressed: Target, tagged: Target): Promise<string[]> {
  // The OpenAPI document: above the 1 KiB threshold before anything is seeded.
  const headers = { ...HEADERS, "accept-encoding": ACCEPT_ALL };
  const problems: string[] = [];
  const encoding = async (t: Target) => (await raw(`${t.url}/api/openapi.json`, "GET", headers)).encoding;
  const etag = async (t: Target) => (await raw(`${t.url}/api/products`, "GET", headers)).etag;
  if ((await encoding(compressed)) === "identity") problems.push("COMPRESS=on does not compress");
  if ((await encoding(plain)) !== "identity") problems.push("COMPRESS=off compresses");
  if (!(await etag(tagged))) problems.push("LIST_ETAGS=on tags no list");
  if (await etag(plain)) problems.push("LIST_ETAGS=off tags lists");
  return problems;
}

/** The example API three times on one database: no switch, compression, list ETags. */
async function startServers(dir: string) {
  const script = "examples/server.ts";
  const common = { audit: "off", cache: "off", realtime: "off" } as const;
  return {
    plain: await start("api", script, dir, { ...common, compress: "off", listETags: "off" }),
    compressed: await start("api", script, dir, { ...common, compress: "on", listETags: "off" }),
    tagged: await start("api", script, dir, { ...common, compress: "off", listETags: "on" }),
  };
}

export async function seed(target: Target, count: number): Promise<string[]> {
  const names = ["Hat", "Scarf", "Glove", "Boot", "Sock", "Coat", "Belt", "Shirt"];
  const ids: string[] = [];
  for (let i = 0; i < count; i += 16) {
    const batch = Array.from({ length: Math.min(16, count - i) }, async (_, j) => {
      const n = i + j;
      const response = await fetch(`${target.url}/api/product`, {
        method: "POST",
        headers: HEADERS,
        body: JSON.stringify({ name: `${names[n % names.length]} ${n}`, price: n % 50, status: "active" }),
      });
      if (response.status !== 201) throw new Error(`seeding: ${response.status} ${await response.text()}`);
      return ((await response.json()) as { id: string }).id;
    });
    ids.push(...(await Promise.all(batch)));
  }
  return ids;
}

export async function runHttpBench(options: HttpBenchOptions): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), "crudkit-bench-http-"));
  const servers = await startServers(dir);
  try {
    const problems = await switchesWork(servers.plain, servers.compressed, servers.tagged);
    if (problems.length > 0) throw new Error(`examples/server.ts: ${problems.join("; ")}`);
    const { plain, compressed, tagged } = servers;
    const count = Math.max(100, options.seed);
    const ids = await seed(plain, count);
    const pages100 = Array.from({ length: Math.min(5, Math.floor(count / 100)) }, (_, i) => i + 1);
    const list100 = Array.from(
      { length: 500 },
      (_, i) => `/api/products?limit=100&page=${pages100[i % pages100.length]}`,
    );
    const list10 = Array.from({ length: 500 }, (_, i) => `/api/products?limit=10&page=${1 + (i % 5)}`);
    const reads = Array.from(
      { length: 500 },
      () => `/api/product/${ids[Math.floor(Math.random() * ids.length)]}`,
    );
    const all = { "accept-encoding": ACCEPT_ALL };
    const [load1, load5] = loadavg();
    console.log(
      `\ncrudkit HTTP bench (issue 46): the example API (examples/server.ts) on SQLite, AUDIT=off CACHE=off REALTIME=off; ${count} products seeded; ` +
        `${options.connections} connections, ${options.duration}s x ${options.rounds} rounds, variants interleaved; ` +
        `load average before: ${load1!.toFixed(2)} (1 min), ${load5!.toFixed(2)} (5 min)`,
    );

    const compression = await runTable(
      {
        title: "100-record list, serve({ compress }) off vs on (bytes: one answer's body as sent)",
        variants: [
          {
            name: `off (Accept-Encoding: ${ACCEPT_ALL})`,
            target: plain,
            method: "GET",
            paths: list100,
            headers: all,
          },
          {
            name: `on, brotli (Accept-Encoding: ${ACCEPT_ALL})`,
            target: compressed,
            method: "GET",
            paths: list100,
            headers: all,
          },
          {
            name: "on, gzip (Accept-Encoding: gzip)",
            target: compressed,
            method: "GET",
            paths: list100,
            headers: { "accept-encoding": "gzip" },
          },
          { name: "on, identity (no Accept-Encoding)", target: compressed, method: "GET", paths: list100 },
        ],
      },
      options,
    );
    const [off, br, gzip] = compression;
    const fewer = (row: Row) => off!.wire.bytes / row.wire.bytes;
    const share = (row: Row) => row.requests / off!.requests;
    const met = fewer(br!) >= 5 && share(br!) >= 0.85;
    console.log(
      `\nbytes: brotli ${fewer(br!).toFixed(1)}x fewer, gzip ${fewer(gzip!).toFixed(1)}x fewer (target ≥ 5x); ` +
        `throughput compressed / uncompressed: brotli ${share(br!).toFixed(2)}, gzip ${share(gzip!).toFixed(2)} (target ≥ 0.85): ` +
        (met ? "both met (compression may be on by default)" : "missed (compression stays off by default)"),
    );

    // A read by id is below the threshold: compression on must send it as it is, at the same cost.
    const [readOff, readOn] = await runTable(
      {
        title: `read by id (below the compression threshold), serve({ compress }) off vs on (Accept-Encoding: ${ACCEPT_ALL})`,
        variants: [
          { name: "off", target: plain, method: "GET", paths: reads, headers: all },
          { name: "on", target: compressed, method: "GET", paths: reads, headers: all },
        ],
      },
      options,
    );
    const small = readOn!.requests / readOff!.requests;
    console.log(
      `
read by id, compression on / off: ${small.toFixed(2)} (target ≥ 0.95: a small answer is sent as it is): ${small >= 0.95 ? "met" : "missed"}`,
    );

    const tagCost: string[] = [];
    for (const [label, paths] of [
      ["100-record list", list100],
      ["10-record list", list10],
    ] as const) {
      const [untagged, withTags] = await runTable(
        {
          title: `${label}, crudkit({ listETags }) off vs on`,
          variants: [
            { name: "off", target: plain, method: "GET", paths },
            { name: "on", target: tagged, method: "GET", paths },
            {
              name: "on, revalidated (If-None-Match: its ETag, 304 expected)",
              target: tagged,
              method: "GET",
              paths,
              revalidate: true,
              status: 304,
            },
          ],
        },
        options,
      );
      tagCost.push(`${label} ${((1 - withTags!.requests / untagged!.requests) * 100).toFixed(1)}%`);
    }
    console.log(`\nlist ETags cost in req/s: ${tagCost.join(", ")} (target ≤ 3%, else they stay opt-in)`);

    const headRatios: string[] = [];
    // At full speed a read by id is bound by the load generator, and a server answering fewer
    // requests per turn of its event loop spends more CPU on each: the fixed rate compares both
    // methods at the same load.
    for (const [label, target, paths, headers, rate] of [
      ["read by id", plain, reads, undefined, undefined],
      ["read by id, 8,000 req/s for both", plain, reads, undefined, 8000],
      ["100-record list", plain, list100, undefined, undefined],
      [
        `100-record list, compression on (Accept-Encoding: ${ACCEPT_ALL})`,
        compressed,
        list100,
        all,
        undefined,
      ],
    ] as const) {
      const [get, head] = await runTable(
        {
          title: `HEAD vs GET: ${label}`,
          variants: [
            { name: "GET", target, method: "GET", paths, headers, rate },
            { name: "HEAD", target, method: "HEAD", paths, headers, rate },
          ],
        },
        options,
      );
      headRatios.push(
        `${label} ${(head!.requests / get!.requests).toFixed(2)}x the req/s, ${(head!.cpu / get!.cpu).toFixed(2)}x the CPU/req`,
      );
    }
    console.log(`\nHEAD vs GET: ${headRatios.join("; ")} (target: HEAD costs no more than GET)`);
  } finally {
    await Promise.all(Object.values(servers).map(stop));
    await rm(dir, { recursive: true, force: true });
  }
}
