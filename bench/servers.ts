// The servers a bench run measures: the example API and the hand-written reference, each a child
// process on a free loopback port, and a fresh PostgreSQL database when the API runs on one.

import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { openSync, readFileSync } from "node:fs";
import { createServer } from "node:net";
import { fileURLToPath } from "node:url";

/**
 * The example API runs on the built package (dist/, what `npm install crudkit-api` gives), not on
 * the TypeScript sources through tsx: tsx compiles with keepNames, which wraps every closure made
 * per request in a name-setting call the published build does not have (about 5% of a read, 10%
 * of a list). `--source` (CRUDKIT_BENCH_SOURCE=on) measures the sources instead.
 */
const BUILT_TSCONFIG = fileURLToPath(new URL("./tsconfig.built.json", import.meta.url));

export const API_KEY = "bench-key";
export const USER_API_KEY = "bench-user-key";
export const HEADERS = { "x-api-key": API_KEY, "content-type": "application/json" };
/** A user without roles: her order list is scoped by the `ownedBy` row rule. */
export const USER_HEADERS = { "x-api-key": USER_API_KEY, "content-type": "application/json" };

export interface Target {
  name: "api" | "reference";
  url: string;
  process: ChildProcess;
  ids: string[];
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
    server.on("error", reject);
  });
}

export interface StartOptions {
  /** postgres://… for the API; SQLite in `dataDir` when empty. */
  databaseUrl?: string;
  /** Read replicas of `databaseUrl`, comma-separated (DATABASE_REPLICA_URLS). */
  replicaUrls?: string;
  /** @default 10 MiB */
  maxFileSize?: number;
  /** The API's read cache. @default off */
  cache?: "on" | "off";
  /** The audit log (the API's plugin, the reference's audit rows). @default on */
  audit?: "on" | "off";
  /** The API's event streams. @default off (the core scenarios measure the API without them) */
  realtime?: "on" | "off";
  /** serve()'s maxConnections. @default its own (1024) */
  maxConnections?: number;
  /**
   * A receiver's URL: the API sends every change there (webhooks()), the reference writes one
   * outbox row per write in its transaction. @default none
   */
  webhook?: string;
  /** Whether the API sends the events itself (`off`: it writes them only, as the reference does). @default on */
  webhookDeliver?: "on" | "off";
  /**
   * serve()'s compression (the example's COMPRESS). Off unless asked: the reference compresses
   * nothing, and bench/http.ts measures it on its own. @default "off"
   */
  compress?: "on" | "off";
  /** Weak ETags on lists, crudkit({ listETags }) (the example's LIST_ETAGS), off unless asked likewise. @default "off" */
  listETags?: "on" | "off";
  /** A line per request on stderr (the example's REQUEST_LOGS), off unless asked likewise. @default "off" */
  requestLogs?: "on" | "off";
  /** Prometheus metrics at /api/metrics (the example's METRICS), off unless asked likewise. @default "off" */
  metrics?: "on" | "off";
  /** Spans through @opentelemetry/api with no SDK registered (the example's TRACING). @default "on" */
  tracing?: "on" | "off";
  /** Where the server's stderr goes, instead of the bench's own (request logs go there). */
  stderrFile?: string;
  /** The one CPU the server runs on, all its threads (`taskset`; see bench/logs.ts). @default any */
  cpu?: number;
}

/** The secret the bench's webhooks are signed with. */
export const WEBHOOK_SECRET = `whsec_${Buffer.from("the bench's webhook secret, 32 B").toString("base64")}`;

export async function start(
  name: Target["name"],
  script: string,
  dataDir: string,
  {
    databaseUrl = "",
    replicaUrls = "",
    maxFileSize = 10 * 1024 * 1024,
    cache = "off",
    audit = "on",
    realtime = "off",
    maxConnections,
    webhook,
    webhookDeliver = "on",
    compress = "off",
    listETags = "off",
    requestLogs = "off",
    metrics = "off",
    tracing = "on",
    stderrFile,
    cpu,
  }: StartOptions = {},
): Promise<Target> {
  const port = await freePort();
  const node = [process.execPath, "--import", "tsx", script];
  const command = cpu === undefined ? node : ["taskset", "--cpu-list", String(cpu), ...node];
  const child = spawn(command[0]!, command.slice(1), {
    env: {
      ...process.env,
      PORT: String(port),
      HOST: "127.0.0.1",
      DATA_DIR: dataDir,
      MAX_FILE_SIZE: String(maxFileSize),
      API_KEY,
      USER_API_KEY,
      DATABASE_URL: databaseUrl,
      DATABASE_REPLICA_URLS: replicaUrls,
      CACHE: cache,
      AUDIT: audit,
      REALTIME: realtime,
      // The realtime bench opens all its subscribers with one key from one address.
      ...(realtime === "on" ? { MAX_STREAMS_PER_USER: "100000", MAX_STREAMS_PER_ADDRESS: "100000" } : {}),
      MAX_CONNECTIONS: maxConnections === undefined ? "" : String(maxConnections),
      ...(webhook
        ? { WEBHOOK_URL: webhook, WEBHOOK_SECRET, WEBHOOK_DELIVER: webhookDeliver, OUTBOX: "on" }
        : {}),
      COMPRESS: compress,
      LIST_ETAGS: listETags,
      REQUEST_LOGS: requestLogs,
      METRICS: metrics,
      TRACING: tracing,
      ...(name === "api" && process.env.CRUDKIT_BENCH_SOURCE !== "on"
        ? { TSX_TSCONFIG_PATH: BUILT_TSCONFIG }
        : {}),
    },
    stdio: ["ignore", "pipe", stderrFile ? openSync(stderrFile, "a") : "inherit"],
  });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 200; i++) {
    try {
      const response = await fetch(`${url}/api/products`, { headers: HEADERS });
      if (response.ok) return { name, url, process: child, ids: [] };
    } catch {}
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${name} server did not start`);
}

/** Builds dist/ from the sources as they are now, for the API processes (unless `--source`). */
export function buildPackage(): void {
  if (process.env.CRUDKIT_BENCH_SOURCE === "on")
    console.log("crudkit: the TypeScript sources through tsx (--source)");
  else {
    execFileSync("npx", ["tsdown", "--logLevel", "error"], { stdio: ["ignore", "ignore", "inherit"] });
    console.log("crudkit: the built package (dist/, built now with tsdown), as npm installs it");
  }
  // The example serves the admin page, from dist/admin/ either way (tsdown's clean removed it).
  execFileSync("npx", ["tsx", "scripts/build-admin.ts"], { stdio: ["ignore", "ignore", "inherit"] });
}

/** Stops a server and waits until its process is gone (its database file closed). */
export async function stop(target: Target): Promise<void> {
  if (target.process.exitCode !== null) return;
  const exited = new Promise((resolve) => target.process.once("exit", resolve));
  target.process.kill();
  await exited;
}

/** Linux reports process CPU time in clock ticks of 1/100 s. */
const CLOCK_TICKS = 100;

/** CPU time (user + system, every thread) a server process has used so far, in µs. */
export function cpuMicros(child: ChildProcess): number {
  // Fields after the command name: state is the 1st, utime the 12th, stime the 13th.
  const fields = readFileSync(`/proc/${child.pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return (Number(fields[11]) + Number(fields[12])) * (1_000_000 / CLOCK_TICKS);
}

export function peakRss(child: ChildProcess): number {
  const status = readFileSync(`/proc/${child.pid}/status`, "utf8");
  const kb = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return Math.round(kb / 1024);
}

/** A new database on the PostgreSQL server the tests use, dropped after the run. */
export async function freshPostgres(label = "api"): Promise<{ url: string; drop(): Promise<void> }> {
  const admin = process.env.CRUDKIT_TEST_POSTGRES_URL;
  if (!admin)
    throw new Error(
      "--db postgres needs CRUDKIT_TEST_POSTGRES_URL (source scripts/services.sh && services_start)",
    );
  const { default: pg } = await import("pg");
  const name = `crudkit_bench_${label}_${process.pid}`;
  const run = async (statement: string) => {
    const client = new pg.Client(admin);
    await client.connect();
    await client.query(statement);
    await client.end();
  };
  await run(`create database ${name}`);
  const url = new URL(admin);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => run(`drop database if exists ${name} with (force)`) };
}

/** What `vacuumAsInService` needs of a pg client. */
interface SqlClient {
  query(text: string, values?: unknown[]): Promise<{ rows: any[] }>;
}

/**
 * VACUUM ANALYZE of freshly seeded tables, as a table in service is vacuumed: with every page
 * marked all-visible. A standby with hot_standby_feedback (scripts/services.sh starts one) holds
 * back the horizon it reports, and a VACUUM straight after the seed then marks some tables' pages
 * and not others': every index-only scan on those reads the table too (a teams member's first page
 * made 3,000 heap fetches, 3 ms against 1.2). So it vacuums again until each table's pages are
 * all visible (pg_class.relallvisible), for at most 30 s.
 */
export async function vacuumAsInService(client: SqlClient): Promise<void> {
  for (const deadline = Date.now() + 30_000; ; ) {
    await client.query("vacuum analyze");
    const [{ behind }] = (
      await client.query(`select count(*)::integer as behind from pg_class
        where relnamespace = current_schema()::regnamespace and relkind = 'r'
          and relpages > 0 and relallvisible < relpages`)
    ).rows;
    if (behind === 0 || Date.now() > deadline) return;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}
