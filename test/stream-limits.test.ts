// Issue 42 §3, §10 and §14 (streams), written as the attacks: 1,024 event streams from one
// low-privilege key took every connection of serve(), so other clients' health checks were reset;
// a stream filtering on a field that later became hidden kept filtering on it; relation filters
// were accepted on event streams. Now a user and an address hold a few streams (429 past them),
// serve() keeps connections for ordinary requests, and the others end or are refused.

import { createResource, crudkit, type DatabaseOptions, references, withId } from "crudkit-api";
import { type RunningServer, serve } from "crudkit-api/node";
import { afterAll, beforeAll, expect, it } from "vitest";
import { z } from "zod";
import { forEachDialect } from "./dialects.ts";

/** Whether `priority` is visible: flipped by the test to make it hidden mid-stream. */
let priorityVisible = true;

const project = createResource({
  name: "project",
  schema: withId({ name: z.string().max(100) }),
  access: { create: true, read: true, list: true },
});
const order = createResource({
  name: "order",
  schema: withId({
    item: z.string().max(100),
    priority: z.number().int().default(0),
    projectId: references(project, { requireRead: false }).optional(),
  }),
  access: {
    create: true,
    read: true,
    list: ({ user }) => user !== null,
    fields: { priority: { read: () => priorityVisible } },
  },
});

const identify = (request: Request) => {
  const key = request.headers.get("x-api-key");
  return key ? { id: key } : null;
};

async function open(url: string, key: string) {
  const controller = new AbortController();
  const response = await fetch(url, {
    headers: { accept: "text/event-stream", "x-api-key": key },
    signal: controller.signal,
  });
  let text = "";
  const done = (async () => {
    if (!response.body || response.status !== 200) {
      await response.text().catch(() => "");
      return;
    }
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return;
        text += value;
      }
    } catch {}
  })();
  return {
    status: response.status,
    get text() {
      return text;
    },
    done,
    stop: async () => {
      controller.abort();
      await done;
    },
  };
}

const makeApp = (database: DatabaseOptions) =>
  crudkit({ database, autoMigrate: true, resources: [project, order], identify, realtime: { recheck: 0.3 } });

forEachDialect(
  (dialect) => {
    let app: ReturnType<typeof makeApp>;
    let server: RunningServer;
    beforeAll(async () => {
      app = makeApp(await dialect.fresh());
      server = await serve(app, { port: 0, maxConnections: 1024 });
    });
    afterAll(() => server.close());

    it("§3: 1,024 streams from one key: a few open, the rest 429, and health/live still answers", async () => {
      const url = `${server.url}/api/orders/events`;
      const streams = await Promise.all(Array.from({ length: 1024 }, () => open(url, "mallory")));
      const counts = new Map<number, number>();
      for (const s of streams) counts.set(s.status, (counts.get(s.status) ?? 0) + 1);
      expect(counts.get(200)).toBe(5);
      expect(counts.get(429)).toBe(1019);
      const live = await fetch(`${server.url}/api/health/live`);
      expect(live.status).toBe(200);
      // Another user still gets a stream of her own.
      const other = await open(url, "alice");
      expect(other.status).toBe(200);
      await other.stop();
      await Promise.all(streams.map((s) => s.stop()));
      // Places are given back when streams close (once the server has seen them go).
      let again = await open(url, "mallory");
      for (let i = 0; i < 40 && again.status !== 200; i++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        again = await open(url, "mallory");
      }
      expect(again.status).toBe(200);
      await again.stop();
    }, 60_000);

    it("§3: serve() keeps an eighth of its connections (16 at least) from streams", async () => {
      const small = crudkit({
        database: await dialect.fresh(),
        autoMigrate: true,
        resources: [project, order],
        identify,
        realtime: true,
      });
      const running = await serve(small, { port: 0, maxConnections: 30 });
      try {
        // 30 connections, 16 kept: 14 streams at most, from users each under their own cap.
        const url = `${running.url}/api/orders/events`;
        const streams = await Promise.all(
          Array.from({ length: 14 }, (_, i) => open(url, `user-${i % 3}-${i}`)),
        );
        expect(streams.map((s) => s.status)).toEqual(Array(14).fill(200));
        expect((await open(url, "one-more")).status).toBe(503);
        expect((await fetch(`${running.url}/api/health/live`)).status).toBe(200);
        await Promise.all(streams.map((s) => s.stop()));
      } finally {
        await running.close();
      }
    });

    it("§10: a stream filtering on a field that becomes hidden is ended with `expired`", async () => {
      priorityVisible = true;
      const stream = await open(`${server.url}/api/orders/events?filter[priority][gte]=5`, "bob");
      expect(stream.status).toBe(200);
      priorityVisible = false;
      await Promise.race([stream.done, new Promise((resolve) => setTimeout(resolve, 3000))]);
      expect(stream.text).toContain("event: expired");
      await stream.stop();
      priorityVisible = true;
    });

    it("an unknown parameter on a stream is named, as on every list (issue 32 §5)", async () => {
      const res = await fetch(`${server.url}/api/orders/events?filters[priority]=1`, {
        headers: { accept: "text/event-stream", "x-api-key": "bob" },
      });
      expect(res.status).toBe(400);
      const body = (await res.json()) as { code: string; message: string };
      expect(body.code).toBe("BAD_REQUEST");
      expect(body.message).toContain('"filters[priority]"');
      expect(body.message).toContain("lastEventId");
    });

    it("§14: relation filters are refused on event streams, as the README says", async () => {
      const stream = await open(`${server.url}/api/orders/events?filter[project.name]=x`, "bob");
      expect(stream.status).toBe(400);
    });
  },
  ["sqlite", "postgres"],
);
