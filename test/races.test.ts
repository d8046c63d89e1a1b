// Concurrent writes of one record or file, over real sockets, on every database: exactly one
// delete wins (the rest 404) with exactly one audit entry, and concurrent updates each record the
// true before and after, so the entries chain from the first value to the last.

import { createResource, crudkit, type DatabaseOptions, MemoryStorage, withId } from "crudkit-api";
import { audit, upload } from "crudkit-api/plugins";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { forEachDialect, servedPerDialect } from "./dialects.ts";

const counter = createResource({
  name: "counter",
  schema: withId({ balance: z.number() }),
  access: { create: true, read: true, update: true, delete: true, list: true },
});

const ALL = { upload: true, read: true, download: true, delete: true, list: true } as const;

const makeApp = (database: DatabaseOptions) =>
  crudkit({
    database,
    autoMigrate: true,
    resources: [counter],
    plugins: [upload({ storage: new MemoryStorage(), access: ALL }), audit({ access: { read: true } })],
  });

interface Entry {
  operation: string;
  before: { balance: number } | null;
  after: { balance: number } | null;
}

forEachDialect((dialect) => {
  const served = servedPerDialect(dialect, makeApp);

  const json = async (path: string, init: RequestInit = {}) => {
    const response = await fetch(`${served.server.url}/api${path}`, {
      ...init,
      headers: { "content-type": "application/json" },
    });
    return { status: response.status, body: (await response.json()) as any };
  };
  const entriesOf = async (recordId: string): Promise<Entry[]> =>
    (await json(`/audit/logs?recordId=${recordId}&limit=100`)).body.items;

  describe("races", () => {
    it("20 concurrent updates of one record: every audit entry holds its true before and after", async () => {
      for (let round = 0; round < 3; round++) {
        const { body: created } = await json("/counter", { method: "POST", body: '{"balance":0}' });
        const answers = await Promise.all(
          Array.from({ length: 20 }, (_, i) =>
            json(`/counter/${created.id}`, { method: "PATCH", body: JSON.stringify({ balance: i + 1 }) }),
          ),
        );
        expect(answers.map((a) => a.status)).toEqual(Array(20).fill(200));
        const updates = (await entriesOf(created.id)).filter((e) => e.operation === "update");
        expect(updates).toHaveLength(20);
        // Each entry's before is the after of the one committed just before it: one chain from 0.
        const next = new Map(updates.map((e) => [e.before!.balance, e.after!.balance]));
        expect(next.size).toBe(20);
        let value = 0;
        for (let i = 0; i < 20; i++) value = next.get(value)!;
        expect(value).toBe((await json(`/counter/${created.id}`)).body.balance);
      }
    });

    it("30 concurrent deletes of one record: one 200, the rest 404, one audit entry", async () => {
      for (let round = 0; round < 3; round++) {
        const { body: created } = await json("/counter", { method: "POST", body: '{"balance":1}' });
        const answers = await Promise.all(
          Array.from({ length: 30 }, () => json(`/counter/${created.id}`, { method: "DELETE" })),
        );
        const statuses = answers.map((a) => a.status).sort();
        expect(statuses).toEqual([200, ...Array(29).fill(404)]);
        expect(answers.filter((a) => a.status === 404).every((a) => a.body.code === "NOT_FOUND")).toBe(true);
        const deletes = (await entriesOf(created.id)).filter((e) => e.operation === "delete");
        expect(deletes).toHaveLength(1);
        expect(deletes[0]!.before).toMatchObject({ balance: 1 });
      }
    });

    it("30 concurrent deletes of one file: one 200, the rest 404, one audit entry", async () => {
      for (let round = 0; round < 3; round++) {
        const { body: file } = await json("/upload/file", {
          method: "POST",
          body: JSON.stringify({ file: "aGk=", filename: "race.txt", mimeType: "text/plain" }),
        });
        const answers = await Promise.all(
          Array.from({ length: 30 }, () => json(`/upload/file/${file.id}`, { method: "DELETE" })),
        );
        expect(answers.map((a) => a.status).sort()).toEqual([200, ...Array(29).fill(404)]);
        const deletes = (await entriesOf(file.id)).filter((e) => e.operation === "delete");
        expect(deletes).toHaveLength(1);
      }
    });
  });
});
