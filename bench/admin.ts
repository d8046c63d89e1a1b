// `npm run bench -- --admin [--rows 1000000] [--db sqlite|postgres]`: the admin page at scale
// (issue 34), measured in headless Chromium. The example's products are seeded with SQL
// (bench/scale-seed.ts) on a SQLite file, then on PostgreSQL when CRUDKIT_TEST_POSTGRES_URL is
// set; the example app serves them with its cache off, so every page reads the database. Times
// run from the action (navigation, click, submit) until the grid shows the new rows:
//   the first list page (a fresh load of the page, signed in): < 500 ms
//   next and previous pages (cursor): p95 < 200 ms
//   jump to a value on the sort column (price ≥ x): < 200 ms
//   a reference picker's search over the 1M products (a new review's productId): < 300 ms, from
//   the typed text to its options (the picker waits 120 ms for typing to pause, included)
// Lists ask count=estimated: an unfiltered list reads the table's statistics, a narrowed one counts
// at most 10,001 rows; no count(*) over the table on any of these paths.

import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { databaseFromUrl } from "crudkit-api";
import { serve } from "crudkit-api/node";
import type { Page } from "playwright-core";
import { createExampleApp } from "../examples/app.ts";
import { launchChromium } from "../test/chromium.ts";
import { seedPostgresSql, seedSqlite } from "./scale-seed.ts";
import { freshPostgres, vacuumAsInService } from "./servers.ts";

const KEY = "bench-admin-key";
const FIRST_LOADS = 7;
const PAGE_STEPS = 20;
const JUMPS = 10;

export async function runAdminBench(options: { rows: number; db: string | undefined }): Promise<void> {
  const engines = options.db
    ? [options.db]
    : ["sqlite", ...(process.env.CRUDKIT_TEST_POSTGRES_URL ? ["postgres"] : [])];
  const table: string[][] = [["database", "measure", "p50", "p95 / max", "target", "result"]];
  for (const engine of engines) table.push(...(await runOn(engine, options.rows)));
  console.log(
    `\nAdmin page in headless Chromium, ${options.rows} products (times from the action to the rows on screen)`,
  );
  const widths = table[0]!.map((_, i) => Math.max(...table.map((row) => row[i]!.length)));
  for (const row of table) console.log(row.map((cell, i) => cell.padEnd(widths[i]!)).join("  "));
}

async function runOn(engine: string, rows: number): Promise<string[][]> {
  const dir = await mkdtemp(join(tmpdir(), "crudkit-admin-bench-"));
  const postgres = engine === "postgres" ? await freshPostgres("admin") : undefined;
  const url = postgres?.url ?? `file:${join(dir, "app.db")}`;
  const app = createExampleApp({
    database: databaseFromUrl(url),
    apiKey: KEY,
    uploadDir: join(dir, "uploads"),
    cache: false,
    realtime: false,
  });
  await app.ready;
  const began = Date.now();
  await seed(url, rows);
  console.log(`${engine}: ${rows} products seeded in ${((Date.now() - began) / 1000).toFixed(1)} s`);
  const running = await serve(app, { port: 0, hostname: "127.0.0.1" });
  const browser = await launchChromium();
  try {
    const page = await browser.newPage();
    await page.goto(`${running.url}/api/admin`);
    await page.getByLabel("Key or token").fill(KEY);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("navigation", { name: "Resources" }).waitFor();
    const firstLoads = await timesOf(FIRST_LOADS, async () => {
      await page.goto("about:blank");
      const started = performance.now();
      await page.goto(`${running.url}/api/admin#/product`);
      await page.locator("table[role=grid] tbody tr").first().waitFor();
      return performance.now() - started;
    });
    const next = await timesOf(PAGE_STEPS, () => step(page, "Next page"));
    const previous = await timesOf(PAGE_STEPS / 2, () => step(page, "Previous page"));
    await page.getByRole("button", { name: "price" }).click();
    await page.waitForURL(/sortBy=price/);
    await page.locator("table[role=grid] tbody tr").first().waitFor();
    const jumps = await timesOf(JUMPS, async (i) => {
      await page.getByLabel(/Jump to value/).fill(String(5 + i * 9));
      const before = await firstRow(page);
      const started = performance.now();
      await page.getByRole("button", { name: "Go" }).click();
      await changed(page, before);
      const took = performance.now() - started;
      // Back to the plain sorted list for the next jump.
      await page.getByRole("button", { name: /Remove filter price/ }).click();
      await page.locator("table[role=grid] tbody tr").first().waitFor();
      return took;
    });
    // The reference picker of a new review searches the 1M products as she types.
    await page.goto(`${running.url}/api/admin#/review/`);
    const picker = page.getByRole("combobox", { name: /productId/ });
    await picker.waitFor();
    const searches = await timesOf(JUMPS, async (i) => {
      // Product n is named "<word n mod 8> n" (bench/scale-seed.ts).
      const n = 1000 + i * 37;
      const term = `${["Hat", "Scarf", "Glove", "Boot", "Sock", "Coat", "Belt", "Shirt"][n % 8]} ${n}`;
      const started = performance.now();
      await picker.fill(term);
      await page
        .getByRole("option", { name: new RegExp(`^${term}`) })
        .first()
        .waitFor();
      return performance.now() - started;
    });
    return [
      row(engine, "first list page", firstLoads, "< 500 ms", (s) => s.max < 500),
      row(engine, "next page (cursor)", next, "p95 < 200 ms", (s) => s.p95 < 200),
      row(engine, "previous page (cursor)", previous, "p95 < 200 ms", (s) => s.p95 < 200),
      row(engine, "jump to value (price ≥ x)", jumps, "< 200 ms", (s) => s.p95 < 200),
      row(engine, "reference picker search (as typed)", searches, "< 300 ms", (s) => s.p95 < 300),
    ];
  } finally {
    await browser.close();
    await running.close();
    await app.close();
    await postgres?.drop();
    await rm(dir, { recursive: true, force: true });
  }
}

async function seed(url: string, rows: number): Promise<void> {
  if (url.startsWith("file:")) {
    const db = new Database(url.slice("file:".length));
    seedSqlite(db, rows);
    db.close();
    return;
  }
  const { default: pg } = await import("pg");
  const client = new pg.Client(url);
  await client.connect();
  try {
    await client.query(seedPostgresSql(rows));
    await vacuumAsInService(client);
  } finally {
    await client.end();
  }
}

const firstRow = (page: Page) => page.locator("table[role=grid] tbody tr").first().textContent();

async function changed(page: Page, before: string | null): Promise<void> {
  await page.waitForFunction(
    (text) => document.querySelector("table[role=grid] tbody tr")?.textContent !== text,
    before,
    { polling: "raf" },
  );
}

/** Clicks `button` and waits for the grid's first row to change. */
async function step(page: Page, button: string): Promise<number> {
  const before = await firstRow(page);
  const started = performance.now();
  await page.getByRole("button", { name: button }).click();
  await changed(page, before);
  return performance.now() - started;
}

async function timesOf(count: number, measure: (i: number) => Promise<number>): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < count; i++) times.push(await measure(i));
  return times;
}

interface Stats {
  p50: number;
  p95: number;
  max: number;
}

function row(
  engine: string,
  name: string,
  times: number[],
  target: string,
  met: (s: Stats) => boolean,
): string[] {
  const sorted = [...times].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
  const stats = { p50: at(0.5), p95: at(0.95), max: sorted.at(-1)! };
  return [
    engine,
    name,
    `${stats.p50.toFixed(0)} ms`,
    `${stats.p95.toFixed(0)} / ${stats.max.toFixed(0)} ms`,
    target,
    met(stats) ? "met" : "NOT MET",
  ];
}
