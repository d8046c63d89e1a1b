// A write whose outcome is unknown (the database connection went away mid-request) keeps its
// Idempotency-Key claimed: a retry with the same key waits (409 with Retry-After) instead of
// running again at once and perhaps creating a second record (issue 43). Any other failure frees
// the key, so a corrected retry runs.

import { createResource, crudkit, type DatabaseOptions, withId } from "crudkit-api";
import { idempotency } from "crudkit-api/plugins";
import { expect, it } from "vitest";
import { z } from "zod";
import { forEachDialect, servedPerDialect } from "./dialects.ts";
import { call } from "./helpers.ts";

const ticket = createResource({
  name: "ticket",
  schema: withId({ title: z.string().max(100) }),
  access: { create: true, read: true, list: true },
  hooks: {
    beforeCreate: ({ data }) => {
      // What the driver throws when the connection is lost (classified by its code).
      if (data.title === "lost") throw Object.assign(new Error("Connection lost"), { code: "ECONNRESET" });
      if (data.title === "bug") throw new Error("a bug");
    },
  },
});
const makeApp = (database: DatabaseOptions) =>
  crudkit({
    database,
    autoMigrate: true,
    resources: [ticket],
    plugins: [idempotency({ wait: 0.2 })],
    log: () => {},
  });

forEachDialect((dialect) => {
  const served = servedPerDialect(dialect, makeApp);
  const send = (title: string, key: string) =>
    call(served.app, "POST", "/api/ticket", { body: { title }, headers: { "idempotency-key": key } });

  it("a lost connection keeps the key claimed (409 on retry); another failure frees it", async () => {
    expect((await send("lost", "k-lost")).status).toBe(503);
    const retry = await send("lost", "k-lost");
    expect(retry.status).toBe(409);
    expect(retry.headers.get("retry-after")).toBe("1");

    expect((await send("bug", "k-bug")).status).toBe(500);
    expect((await send("fixed", "k-bug")).status).toBe(201);
  });
});
