// A date-time without an offset is read as UTC, whatever the server's time zone (issue 43): in a
// body, in a filter, and in the audit log's range. Before, `"2024-06-01T10:00"` was read in the
// server's zone and stored as 14:00Z under TZ=America/New_York. Run under two zones.

import { createResource, crudkit, type DatabaseOptions, withId } from "crudkit-api";
import { afterEach, expect, it } from "vitest";
import { z } from "zod";
import { appPerDialect, forEachDialect } from "./dialects.ts";
import { call } from "./helpers.ts";

const meeting = createResource({
  name: "meeting",
  schema: withId({ at: z.date(), title: z.string() }),
  access: { create: true, read: true, list: true },
});
const makeApp = (database: DatabaseOptions) =>
  crudkit({ database, autoMigrate: true, resources: [meeting], log: () => {} });

const zone = process.env.TZ;
afterEach(() => {
  // Node reads TZ again whenever it is set.
  if (zone === undefined) delete process.env.TZ;
  else process.env.TZ = zone;
});

forEachDialect((dialect) => {
  const app = appPerDialect(dialect, makeApp);

  for (const tz of ["America/New_York", "Asia/Tokyo"]) {
    it(`TZ=${tz}: offset-less date-times are UTC in bodies and filters; offsets are honoured`, async () => {
      process.env.TZ = tz;
      expect(new Date(2024, 5, 1).getTimezoneOffset()).not.toBe(0);
      const title = `at ${tz}`;
      const cases = [
        ["2024-06-01T10:00", "2024-06-01T10:00:00.000Z"],
        ["2024-06-01T10:00:30.250", "2024-06-01T10:00:30.250Z"],
        ["2024-06-01 10:00:00", "2024-06-01T10:00:00.000Z"],
        ["2024-06-01", "2024-06-01T00:00:00.000Z"],
        ["2024-06-01T10:00+02:00", "2024-06-01T08:00:00.000Z"],
        ["2024-06-01T10:00:00Z", "2024-06-01T10:00:00.000Z"],
      ];
      for (const [sent, stored] of cases) {
        const created = await call(app, "POST", "/api/meeting", { body: { at: sent, title } });
        expect(created.status, sent).toBe(201);
        expect(created.body.at, sent).toBe(stored);
      }
      const found = await call(
        app,
        "GET",
        `/api/meetings?filter[title]=${encodeURIComponent(title)}&filter[at][gte]=2024-06-01T10:00&filter[at][lt]=2024-06-01T10:00:01&limit=10`,
      );
      expect(found.status).toBe(200);
      // 10:00Z is in range three times (sent offset-less, with a space, and with Z); 10:00:30.250Z
      // and the others are out of it.
      expect(found.body.items.map((m: { at: string }) => m.at)).toEqual([
        "2024-06-01T10:00:00.000Z",
        "2024-06-01T10:00:00.000Z",
        "2024-06-01T10:00:00.000Z",
      ]);
    });
  }
});
