// SQLite reader threads: a list over a big table runs off the event loop, so a read by id asked
// while a slow list runs is answered first; with `readers: 0` it waits, as it did before. Writes
// are seen by the next list at once, and the option is checked.

import { createResource, crudkit } from "crudkit-api";
import { serve } from "crudkit-api/node";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { internalsOf } from "../src/app/internals.ts";
import { tempDatabaseUrl } from "./helpers.ts";

const ROWS = 300_000;
const row = createResource({
  name: "row",
  schema: z.object({ id: z.string(), label: z.string(), n: z.number().int() }),
  searchable: ["label"],
  timestamps: false,
  access: { read: true, list: true, create: true },
});

const url = tempDatabaseUrl();
let NINETY_NINES = 0;
for (let n = 1; n <= ROWS; n++) if (`label ${n}`.includes("99")) NINETY_NINES++;

beforeAll(async () => {
  const setup = crudkit({
    database: { provider: "sqlite", url, readers: 0 },
    autoMigrate: true,
    resources: [row],
  });
  await setup.ready;
  await sql`with recursive seq(n) as (select 1 union all select n + 1 from seq where n < ${sql.lit(ROWS)})
    insert into "row" ("id", "label", "n") select 'r' || n, 'label ' || n, n from seq`.execute(setup.db);
  await setup.close();
}, 60_000);

/**
 * The longest the event loop was held up while a slow list ran: ticks of a 1 ms timer, and the
 * widest gap between two of them.
 */
async function stall(readers: number): Promise<number> {
  const app = crudkit({ database: { provider: "sqlite", url, readers }, resources: [row] });
  try {
    await app.ready;
    // Warm: the table is known to be big, and a reader thread is running.
    await app.api.listRows({ query: { limit: 1, count: "none" } });
    let last = performance.now();
    let widest = 0;
    const timer = setInterval(() => {
      const now = performance.now();
      widest = Math.max(widest, now - last);
      last = now;
    }, 1);
    // Two characters: too short for the trigram index, so it scans, twice (the count, the page).
    const page = await app.api.listRows({
      query: { search: "99", limit: 5, count: "exact", sortBy: "label" },
    });
    clearInterval(timer);
    widest = Math.max(widest, performance.now() - last);
    expect(page.pagination.total).toBe(NINETY_NINES);
    return widest;
  } finally {
    await app.close();
  }
}

describe("SQLite reader threads", () => {
  it("keep the event loop free while a slow list over a big table runs; without them it stalls", async () => {
    const alone = await stall(0);
    const threaded = await stall(2);
    console.log(
      `event loop held up by a scanning list: ${alone.toFixed(1)} ms alone, ${threaded.toFixed(1)} ms with readers`,
    );
    expect(alone).toBeGreaterThan(20);
    expect(threaded).toBeLessThan(alone / 2);
  });

  describe("served over HTTP", () => {
    const app = crudkit({ database: { provider: "sqlite", url, readers: 1 }, resources: [row] });
    let base = "";
    let close = async () => {};
    beforeAll(async () => {
      const running = await serve(app, { port: 0, hostname: "127.0.0.1" });
      base = running.url;
      close = () => running.close();
    });
    afterAll(() => close());

    it("see a write at once, and answer a list as the main connection would", async () => {
      const created = await fetch(`${base}/api/row`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ id: "fresh", label: "brand new label", n: -1 }),
      });
      expect(created.status).toBe(201);
      const listed = await fetch(`${base}/api/rows?sortBy=n&sortOrder=asc&limit=2`);
      const body = (await listed.json()) as { items: { id: string }[]; pagination: { total: number } };
      expect(body.items.map((i) => i.id)).toEqual(["fresh", "r1"]);
      expect(body.pagination.total).toBe(ROWS + 1);
      const searched = await fetch(`${base}/api/rows?search=brand%20new`);
      expect(((await searched.json()) as { items: { id: string }[] }).items.map((i) => i.id)).toEqual([
        "fresh",
      ]);
      // A malformed filter is still the caller's 400, never a thread's error.
      const bad = await fetch(`${base}/api/rows?filter[n][gt]=abc`);
      expect(bad.status).toBe(400);
    });
  });

  it("refuse a readers option that is not a small whole number", () => {
    for (const readers of [-1, 1.5, 65, "2"]) {
      expect(() =>
        crudkit({ database: { provider: "sqlite", url, readers } as never, resources: [row] }),
      ).toThrow(/database.readers must be a whole number from 0 to 64/);
    }
  });

  it("are not used by an in-memory database, which still answers lists", async () => {
    const app = crudkit({
      database: { provider: "sqlite", url: ":memory:" },
      autoMigrate: true,
      resources: [row],
    });
    await app.api.createRow({ body: { id: "a", label: "x", n: 1 } });
    expect((await app.api.listRows()).pagination.total).toBe(1);
    await app.close();
  });

  it("a reader thread that dies mid-query: its list answers 503, a new thread takes the next one", async () => {
    const app = crudkit({ database: { provider: "sqlite", url, readers: 1 }, resources: [row] });
    try {
      await app.ready;
      await app.api.listRows({ query: { limit: 1, count: "none" } });
      const readers = internalsOf(app)!.database.readers!;
      // A scan long enough to be running when the thread is ended under it.
      const slow = app.api
        .listRows({ query: { search: "99", limit: 5, count: "exact", sortBy: "label" } })
        .then(
          () => "answered",
          (error: { status?: number; code?: string }) => `${error.status} ${error.code}`,
        );
      for (let i = 0; i < 100 && readers.threads().length === 0; i++)
        await new Promise((resolve) => setTimeout(resolve, 5));
      const [thread] = readers.threads();
      expect(thread).toBeDefined();
      await new Promise((resolve) => setTimeout(resolve, 20));
      await thread!.terminate();
      expect(await slow).toBe("503 SERVICE_UNAVAILABLE");
      // The next list runs on a thread of its own, and answers.
      const page = await app.api.listRows({
        query: { search: "99", limit: 5, count: "exact", sortBy: "label" },
      });
      expect(page.pagination.total).toBe(NINETY_NINES);
      expect(readers.threads()).toHaveLength(1);
      expect(readers.threads()[0]).not.toBe(thread);
    } finally {
      await app.close();
    }
  });
});
