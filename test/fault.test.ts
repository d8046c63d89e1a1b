// PostgreSQL goes away under load and comes back: requests get 503 (never 500, never a hang),
// the app recovers by itself, and every create acknowledged with 201 is there afterwards.
// The test runs a PostgreSQL cluster of its own, so stopping it disturbs no other suite.

import { execFileSync } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { crudkit } from "crudkit-api";
import { type RunningServer, serve } from "crudkit-api/node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openProduct } from "./fixtures.ts";

const PG_BIN = "/usr/lib/postgresql/15/bin";
const present = existsSync(`${PG_BIN}/initdb`);
const suite = present || process.env.CI ? describe : describe.skip;

let dir = "";
let port = 0;
const pgctl = (...args: string[]) =>
  execFileSync("runuser", ["-u", "postgres", "--", `${PG_BIN}/pg_ctl`, "-D", join(dir, "data"), ...args], {
    stdio: "pipe",
  });
const startPostgres = () =>
  pgctl(
    "-l",
    join(dir, "log"),
    "-w",
    "-o",
    `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`,
    "start",
  );
const stopPostgres = () => pgctl("-m", "fast", "-w", "stop");

beforeAll(async () => {
  if (!present && !process.env.CI) return;
  dir = mkdtempSync(join(tmpdir(), "crudkit-fault-"));
  chownSync(dir, uidOf("postgres"), uidOf("postgres"));
  execFileSync(
    "runuser",
    [
      "-u",
      "postgres",
      "--",
      `${PG_BIN}/initdb`,
      "-D",
      join(dir, "data"),
      "-U",
      "postgres",
      "--auth=trust",
      "--no-sync",
    ],
    {
      stdio: "pipe",
    },
  );
  port = await freePort();
  startPostgres();
}, 60_000);

afterAll(() => {
  if (!dir) return;
  try {
    stopPostgres();
  } catch {}
  rmSync(dir, { recursive: true, force: true });
});

suite(`PostgreSQL outage under load${present ? "" : " (skipped: PostgreSQL 15 is not installed)"}`, () => {
  let server: RunningServer;
  const logged: string[] = [];
  const unexpected: string[] = [];

  it("answers 503 while the database is down, recovers when it is back, and loses no acknowledged create", async () => {
    const app = crudkit({
      database: { provider: "postgres", url: `postgres://postgres@127.0.0.1:${port}/postgres` },
      autoMigrate: true,
      resources: [openProduct],
      log: (message, error) => {
        logged.push(message);
        if (message !== "crudkit: the database is unavailable")
          unexpected.push(
            `${message}: ${String(error)} (code ${(error as { code?: unknown } | null)?.code})`,
          );
      },
    });
    server = await serve(app, { port: 0 });

    const statuses: Record<string, number> = {};
    const acknowledged: string[] = [];
    let phase = "before";
    const byPhase: Record<string, Record<number, number>> = { before: {}, down: {}, after: {} };
    let running = true;
    let sequence = 0;
    const worker = async () => {
      while (running) {
        const name = `load ${sequence++}`;
        let status: number;
        try {
          const response = await fetch(`${server.url}/api/product`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ name, price: 1 }),
            signal: AbortSignal.timeout(10_000),
          });
          status = response.status;
          const body = (await response.json()) as { id?: string; code?: string };
          if (status === 201) acknowledged.push(body.id!);
          if (status === 503)
            expect(body).toEqual({
              code: "SERVICE_UNAVAILABLE",
              message: "The database is unavailable; try again shortly.",
            });
        } catch {
          status = -1; // a hang past the timeout, or a dropped connection
        }
        statuses[status] = (statuses[status] ?? 0) + 1;
        const counts = byPhase[phase]!;
        counts[status] = (counts[status] ?? 0) + 1;
      }
    };
    const workers = Array.from({ length: 8 }, worker);
    const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));

    await wait(1500);
    phase = "down";
    stopPostgres();
    await wait(3000);
    startPostgres();
    phase = "after";
    await wait(3000);
    running = false;
    await Promise.all(workers);

    expect(byPhase.before![201]).toBeGreaterThan(0);
    expect(byPhase.down![503]).toBeGreaterThan(0);
    expect(byPhase.after![201]).toBeGreaterThan(0);
    // Never a 500, never a hang or a dropped connection. (A 500 was seen once in CI and not again in
    // 11 local runs; the errors logged say which driver error went unrecognised.)
    expect(Object.keys(statuses).sort(), `other errors logged: ${unexpected.join(" | ")}`).toEqual([
      "201",
      "503",
    ]);
    expect(logged).toContain("crudkit: the database is unavailable");

    // Every create acknowledged with 201 is in the database.
    const stored = new Set(
      (await app.db.selectFrom("product").select("id").execute()).map((r) => r.id as string),
    );
    expect(acknowledged.filter((id) => !stored.has(id))).toEqual([]);
    expect(stored.size).toBe(acknowledged.length);
    await server.close();
    await app.close();
  }, 60_000);
});

function uidOf(user: string): number {
  return Number(execFileSync("id", ["-u", user], { encoding: "utf8" }).trim());
}

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const probe = createServer().listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}
