// Dates read back exactly as written, on every database. On PostgreSQL timestamptz reads as ISO
// text, in records and in raw queries: a UTC server's text is rearranged (isoFromTimestamptz); any
// other layout, such as a server in another time zone, takes pg's parser and gives the same text.

import { createResource, crudkit, type DatabaseOptions, withId } from "crudkit-api";
import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { isoFromTimestamptz } from "../src/db/engines/postgres/timestamps.ts";
import { appPerDialect, forEachDialect } from "./dialects.ts";
import { call } from "./helpers.ts";

const moment = createResource({
  name: "moment",
  schema: withId({ at: z.date(), label: z.string() }),
  access: { create: true, read: true, list: true, update: true },
});
const makeApp = (database: DatabaseOptions) =>
  crudkit({ database, autoMigrate: true, resources: [moment], log: () => {} });

const INSTANTS = [
  "2024-06-01T10:00:00.000Z",
  "2024-06-01T10:00:00.001Z",
  "2024-06-01T10:00:00.120Z",
  "1999-12-31T23:59:59.999Z",
  "2038-01-19T03:14:08.500Z",
  "2000-02-29T00:00:00.010Z",
];

/** What pg's own parser and the record codec made of a timestamptz's text before: Date, then ISO. */
function viaDate(text: string): string {
  const [, day, time, fraction = "", sign, hours, minutes = "00"] =
    /^(\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}:\d{2})(\.\d+)?([+-])(\d{2})(?::(\d{2}))?$/.exec(text)!;
  return new Date(`${day}T${time}${fraction}${sign}${hours}:${minutes}`).toISOString();
}

describe("isoFromTimestamptz", () => {
  it("gives toISOString()'s text for UTC timestamptz text, for every fraction length", () => {
    for (let i = 0; i < 2000; i++) {
      const instant = new Date(
        Date.UTC(1000 + (i % 9000), i % 12, 1 + (i % 28), i % 24, i % 60, (i * 7) % 60),
      );
      const base = instant.toISOString().slice(0, 19).replace("T", " ");
      const micros = String((i * 7919) % 1_000_000)
        .padStart(6, "0")
        .slice(0, i % 7);
      const text = `${base}${micros ? `.${micros}` : ""}+00`;
      expect(isoFromTimestamptz(text)).toBe(viaDate(text));
    }
  });

  it("leaves to pg's parser what is not a UTC instant in the ISO layout", () => {
    for (const text of [
      "2024-06-01 10:00:00+05:30",
      "2024-06-01 10:00:00-03",
      "2024-06-01 10:00:00+00 BC",
      "0044-03-15 12:00:00+00 BC",
      "10000-01-01 00:00:00+00",
      "infinity",
      "-infinity",
      "2024-06-01T10:00:00Z",
      "2024-06-01 10:00:00.1234567+00",
      "2024-06-01 10:00:00.+00",
      "2024-06-01 10:00:0x+00",
      "2024-06-01 1a:00:00+00",
      "2024-o6-01 10:00:00+00",
      "2024-06-01 10:00:00\u0000+00",
      "Sat Jun 01 10:00:00 2024 UTC",
      "",
      "+00",
    ]) {
      expect(isoFromTimestamptz(text), text).toBeUndefined();
    }
  });
});

forEachDialect((dialect) => {
  const app = appPerDialect(dialect, makeApp);

  it("reads every date back as the ISO text it was written as, in lists, reads and raw queries", async () => {
    const ids: string[] = [];
    for (const at of INSTANTS) {
      const created = await call(app, "POST", "/api/moment", { body: { at, label: at } });
      expect(created.status).toBe(201);
      expect(created.body.at).toBe(at);
      ids.push(created.body.id);
    }
    const list = await call(app, "GET", "/api/moments?limit=100&sortBy=at&sortOrder=asc");
    expect(list.body.items.map((m: { at: string }) => m.at)).toEqual([...INSTANTS].sort());
    for (const [i, id] of ids.entries()) {
      expect((await call(app, "GET", `/api/moment/${id}`)).body.at).toBe(INSTANTS[i]);
    }
    // A date filter compares instants, whatever the column's type.
    const after = await call(app, "GET", "/api/moments?filter[at][gt]=2024-06-01T10:00:00.000Z&limit=100");
    expect(after.body.items.map((m: { at: string }) => m.at).sort()).toEqual([
      "2024-06-01T10:00:00.001Z",
      "2024-06-01T10:00:00.120Z",
      "2038-01-19T03:14:08.500Z",
    ]);
  });

  it("the first and last years a body may hold are stored as written; a filter from year 0000 is taken", async () => {
    const edges = ["1000-01-01T00:00:00.000Z", "9999-12-31T23:59:59.999Z"];
    for (const at of edges) {
      const created = await call(app, "POST", "/api/moment", { body: { at, label: "edge" } });
      expect(created.status).toBe(201);
      expect(created.body.at).toBe(at);
      expect((await call(app, "GET", `/api/moment/${created.body.id}`)).body.at).toBe(at);
    }
    // PostgreSQL reads ISO year 0000 as 1 BC only from pg's own spelling; every edge row is after it.
    const since = await call(
      app,
      "GET",
      "/api/moments?filter[label]=edge&filter[at][gt]=0000-01-01T00:00:00.000Z&limit=100",
    );
    expect(since.status).toBe(200);
    expect(since.body.items.map((m: { at: string }) => m.at).sort()).toEqual(edges);
  });

  if (dialect.name !== "postgres") return;

  /** An app on a fresh database whose connections answer in `zone`. */
  async function appInZone(zone: string) {
    const database = (await dialect.fresh()) as DatabaseOptions & { url: string };
    const name = new URL(database.url).pathname.slice(1);
    await sql.raw(`alter database "${name}" set timezone = '${zone}'`).execute(app.db);
    const zoned = makeApp(database);
    await zoned.ready;
    return zoned;
  }

  it("reads a UTC server's timestamptz straight into ISO text, sub-milliseconds as toISOString() does", async () => {
    const utc = await appInZone("UTC");
    try {
      const { body } = await call(utc, "POST", "/api/moment", { body: { at: INSTANTS[0], label: "micro" } });
      const raw = await sql<{ at: unknown }>`select "at" from "moment"`.execute(utc.db);
      expect(raw.rows[0]!.at).toBe(INSTANTS[0]);
      await sql`update "moment" set "at" = '2024-06-01 10:00:00.123987+00' where "id" = ${body.id}`.execute(
        utc.db,
      );
      expect((await call(utc, "GET", `/api/moment/${body.id}`)).body.at).toBe("2024-06-01T10:00:00.123Z");
    } finally {
      await utc.close();
    }
  });

  it("reads the same instants as the same text from a server in another time zone", async () => {
    const zoned = await appInZone("Asia/Kolkata");
    try {
      for (const at of INSTANTS) await call(zoned, "POST", "/api/moment", { body: { at, label: at } });
      // The server answers in +05:30: pg's own parser reads that, and the instant becomes ISO text.
      const text = await sql<{ text: string }>`select "at"::text as text from "moment"`.execute(zoned.db);
      expect(text.rows[0]!.text).toMatch(/\+05:30$/);
      const raw = await sql<{ at: unknown }>`select "at" from "moment" order by "at"`.execute(zoned.db);
      expect(raw.rows.map((row) => row.at)).toEqual([...INSTANTS].sort());
      const list = await call(zoned, "GET", "/api/moments?limit=100&sortBy=at&sortOrder=asc");
      expect(list.body.items.map((m: { at: string }) => m.at)).toEqual([...INSTANTS].sort());
    } finally {
      await zoned.close();
    }
  });
});
