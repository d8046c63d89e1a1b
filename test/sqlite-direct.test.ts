// SQLite statements that run on their own skip Kysely's connection lock (src/db/sqlite.ts). While
// another request's transaction is open, waiting on a hook, they must queue behind it rather
// than run inside it: a rollback there must not take their writes along, nor may they read its
// uncommitted rows.

import { createResource, crudkit, withId } from "crudkit-api";
import { afterAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { tempDatabaseUrl } from "./helpers.ts";

let release: () => void = () => {};
const held = () =>
  new Promise<void>((resolve) => {
    release = resolve;
  });

const slow = createResource({
  name: "slow",
  schema: withId({ text: z.string() }),
  access: { create: true },
  hooks: {
    afterCreate: async () => {
      await held();
      throw new Error("rolled back on purpose");
    },
  },
});
const plain = createResource({
  name: "plain",
  schema: withId({ text: z.string() }),
  access: { create: true, read: true, list: true },
});

const app = crudkit({
  database: { provider: "sqlite", url: tempDatabaseUrl() },
  autoMigrate: true,
  resources: [slow, plain],
  log: () => {},
});
afterAll(() => app.close());

describe("SQLite statements outside a transaction", () => {
  it("wait for an open transaction instead of joining it", async () => {
    await app.ready;
    const rolledBack = app.api.createSlow({ body: { text: "a" } }).catch((e: Error) => e);
    await new Promise((r) => setTimeout(r, 20));
    // The slow create's transaction is open now; this write must not become part of it.
    const written = app.api.createPlain({ body: { id: "kept", text: "b" } });
    const listed = app.api.listSlows({ overrideAccess: true });
    await new Promise((r) => setTimeout(r, 20));
    release();
    expect(await rolledBack).toBeInstanceOf(Error);
    expect((await written).id).toBe("kept");
    expect((await listed).pagination.total).toBe(0);
    expect((await app.api.readPlain({ params: { id: "kept" } })).text).toBe("b");
    expect((await app.api.listSlows({ overrideAccess: true })).pagination.total).toBe(0);
  });
});
