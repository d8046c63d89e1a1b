// Closing the app while requests run: they finish on the open database (even when their client
// hung up), new ones get 503, and the database closes after them, on every database.

import { createResource, crudkit, withId } from "crudkit-api";
import { serve } from "crudkit-api/node";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { forEachDialect } from "./dialects.ts";

const slow = { ms: 0 };

const note = createResource({
  name: "note",
  schema: withId({ text: z.string() }),
  access: { create: true, read: true, update: true, delete: true, list: true },
  hooks: {
    // Holds the request inside the write's transaction, on a database connection.
    afterCreate: () => new Promise((resolve) => setTimeout(resolve, slow.ms)),
  },
});

forEachDialect((dialect) => {
  describe("closing the app", () => {
    it("lets running requests finish before the database closes, and refuses new ones", async () => {
      const app = crudkit({ resources: [note], database: await dialect.fresh(), autoMigrate: true });
      await app.ready;
      slow.ms = 300;
      const post = (text: string) =>
        app.handler(
          new Request("http://x/api/note", {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ text }),
          }),
        );
      const running = [post("over http"), app.api.createNote({ body: { text: "in process" } })];
      await new Promise((resolve) => setTimeout(resolve, 50));
      const closed = app.close();
      const late = await post("too late");
      expect(late.status).toBe(503);
      expect((await late.json()).code).toBe("SERVICE_UNAVAILABLE");
      const [answer, created] = await Promise.all(running);
      expect((answer as Response).status).toBe(201);
      expect(created).toMatchObject({ text: "in process" });
      await closed;
      slow.ms = 0;
    });

    it("waits for a request whose client hung up, then closes; its write is kept", async () => {
      const database = await dialect.fresh();
      const logged: string[] = [];
      const app = crudkit({
        resources: [note],
        database,
        autoMigrate: true,
        log: (message) => logged.push(message),
      });
      const server = await serve(app, { port: 0 });
      slow.ms = 300;
      const controller = new AbortController();
      const request = fetch(`${server.url}/api/note`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ text: "abandoned" }),
        signal: controller.signal,
      }).catch(() => "aborted");
      await new Promise((resolve) => setTimeout(resolve, 100));
      controller.abort();
      expect(await request).toBe("aborted");
      await server.close();
      slow.ms = 0;
      // Nothing ran on a closed database, and the write committed before it closed.
      expect(logged).toEqual([]);
      const again = crudkit({ resources: [note], database });
      const listed = (await again.api.listNotes()) as { items: { text: string }[] };
      expect(listed.items.map((n) => n.text)).toEqual(["abandoned"]);
      await again.close();
    });
  });
});
