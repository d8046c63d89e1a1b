// serve() against slow, stuck and numerous clients, and shutdown under load: bounded tests on
// 127.0.0.1 with short timeouts, so each finishes in seconds.

import { mkdtempSync, readdirSync } from "node:fs";
import type { Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createResource, crudkit, type DatabaseOptions, withId } from "crudkit-api";
import { type RunningServer, serve } from "crudkit-api/node";
import { upload } from "crudkit-api/plugins";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { createExampleApp } from "../examples/app.ts";
import { forEachDialect } from "./dialects.ts";
import { tempDatabaseUrl, tempUploadDirs } from "./helpers.ts";
import { openSocket } from "./wire.ts";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Collects what a socket receives and whether it was closed. */
function watch(socket: Socket) {
  const state = { data: "", closed: false };
  socket.on("data", (chunk) => {
    state.data += chunk.toString("latin1");
  });
  socket.on("close", () => {
    state.closed = true;
  });
  socket.on("error", () => {});
  return state;
}

const timed = async (url: string) => {
  const started = performance.now();
  const response = await fetch(url);
  await response.text();
  return { status: response.status, ms: performance.now() - started };
};

describe("serve() limits", () => {
  let server: RunningServer;
  let uploadDir: string;
  let spoolDir: string;
  beforeAll(async () => {
    ({ uploadDir, spoolDir } = tempUploadDirs());
    const app = createExampleApp({
      database: { provider: "sqlite", url: tempDatabaseUrl() },
      apiKey: "k",
      uploadDir,
      spoolDir,
    });
    server = await serve(app, {
      port: 0,
      headersTimeout: 2000,
      requestTimeout: 4000,
      idleTimeout: 1000,
      maxConnections: 400,
    });
  });
  afterAll(() => server?.close());

  it("300 slow-header clients: normal requests answer in under 100 ms, the slow ones are cut off with a JSON 408", async () => {
    const sockets = await Promise.all(Array.from({ length: 300 }, () => openSocket(server.url)));
    const states = sockets.map(watch);
    for (const socket of sockets) socket.write("GET /api/products HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ");
    // One header byte every 250 ms: never idle long enough for the idle timeout, only the headers timeout.
    const trickle = setInterval(() => {
      for (const socket of sockets) if (!socket.destroyed) socket.write("a");
    }, 250);
    try {
      const times: number[] = [];
      for (let i = 0; i < 10; i++) {
        const { status, ms } = await timed(`${server.url}/api/health/live`);
        expect(status).toBe(200);
        times.push(ms);
        await sleep(50);
      }
      times.sort((a, b) => a - b);
      expect(times[5]).toBeLessThan(100);
      // Past the headers timeout (2 s) and one check interval (1 s), every slow client is gone.
      await sleep(3500);
      expect(states.filter((s) => !s.closed)).toHaveLength(0);
      const answered = states.filter((s) => s.data.startsWith("HTTP/1.1 408"));
      expect(answered.length).toBeGreaterThan(0);
      for (const state of answered) {
        expect(state.data).toContain("content-type: application/json");
        expect(state.data).toContain('"code":"REQUEST_TIMEOUT"');
      }
    } finally {
      clearInterval(trickle);
      for (const socket of sockets) socket.destroy();
    }
    expect((await timed(`${server.url}/api/health`)).status).toBe(200);
  }, 20_000);

  it("a client that stalls mid-upload is cut off at the idle timeout and leaves no file", async () => {
    const body = `{"file":"${Buffer.alloc(60_000, 7).toString("base64")}","filename":"s.bin","mimeType":"application/octet-stream"}`;
    for (const half of [body.slice(0, 30_000), body.slice(0, 10)]) {
      const socket = await openSocket(server.url);
      const state = watch(socket);
      socket.write(
        "POST /api/upload/file HTTP/1.1\r\nHost: 127.0.0.1\r\nx-api-key: k\r\ncontent-type: application/json\r\n" +
          `content-length: ${body.length}\r\n\r\n${half}`,
      );
      await sleep(2500);
      expect(state.closed).toBe(true);
    }
    expect(readdirSync(uploadDir)).toEqual([]);
    expect(readdirSync(spoolDir)).toEqual([]);
  }, 20_000);

  it("a body trickled past the request timeout gets a JSON 408 and leaves no file", async () => {
    const socket = await openSocket(server.url);
    const state = watch(socket);
    socket.write(
      "POST /api/upload/file HTTP/1.1\r\nHost: 127.0.0.1\r\nx-api-key: k\r\ncontent-type: application/json\r\n" +
        'content-length: 100000\r\n\r\n{"filename":"t.bin","mimeType":"application/octet-stream","file":"',
    );
    const trickle = setInterval(() => socket.destroyed || socket.write("AAAA"), 300);
    await sleep(6000);
    clearInterval(trickle);
    expect(state.closed).toBe(true);
    expect(state.data).toMatch(/^HTTP\/1\.1 408/);
    expect(state.data).toContain('"code":"REQUEST_TIMEOUT"');
    await sleep(200);
    expect(readdirSync(uploadDir)).toEqual([]);
  }, 20_000);
});

describe("serve() connection cap", () => {
  it("refuses connections over maxConnections and serves again once they go", async () => {
    const app = crudkit({ database: { provider: "sqlite", url: tempDatabaseUrl() }, resources: [] });
    const server = await serve(app, { port: 0, maxConnections: 20 });
    try {
      const sockets = await Promise.all(Array.from({ length: 30 }, () => openSocket(server.url)));
      const states = sockets.map(watch);
      await sleep(300);
      expect(states.filter((s) => s.closed)).toHaveLength(10);
      for (const socket of sockets) socket.destroy();
      await sleep(100);
      expect((await timed(`${server.url}/api/health`)).status).toBe(200);
    } finally {
      await server.close();
    }
  });
});

const slowNote = createResource({
  name: "note",
  schema: withId({ text: z.string() }),
  access: { create: true, read: true, list: true },
});

forEachDialect(
  (dialect) => {
    it("shutdown under load: every accepted request gets its answer, then new connections are refused", async () => {
      let arrived = 0;
      const logged: unknown[] = [];
      const database = (await dialect.fresh()) as DatabaseOptions;
      const app = crudkit({
        database,
        autoMigrate: true,
        resources: [
          {
            ...slowNote,
            hooks: {
              async beforeCreate() {
                arrived++;
                await sleep(300);
              },
            },
          },
        ],
        log: (message, error) => logged.push([message, error]),
      });
      const server = await serve(app, { port: 0 });
      const requests = Array.from({ length: 60 }, (_, i) =>
        fetch(`${server.url}/api/note`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ text: `n${i}` }),
        }).then(async (r) => ({ status: r.status, body: await r.text() })),
      );
      while (arrived < 60) await sleep(5);
      const closing = server.close();
      const answers = await Promise.all(requests);
      await closing;
      expect(answers.map((a) => a.status)).toEqual(Array(60).fill(201));
      expect(logged).toEqual([]);
      await expect(fetch(`${server.url}/api/notes`)).rejects.toThrow();
      // Every acknowledged create is there, read by a new app on the same database.
      const reopened = crudkit({ database, resources: [slowNote] });
      const { pagination } = await reopened.api.listNotes({ query: { limit: 100 }, overrideAccess: true });
      expect(pagination.total).toBe(60);
      await reopened.close();
    }, 30_000);
  },
  ["postgres"],
);

describe("upload spool", () => {
  it("is the configured directory, made private at startup", async () => {
    const spoolDir = join(mkdtempSync(join(tmpdir(), "crudkit-spool-")), "nested", "spool");
    const app = crudkit({
      database: { provider: "sqlite", url: tempDatabaseUrl() },
      autoMigrate: true,
      resources: [],
      plugins: [upload({ spoolDir, uploadDir: join(spoolDir, "..", "u"), access: { upload: true } })],
    });
    await app.ready;
    const { statSync } = await import("node:fs");
    expect(statSync(spoolDir).mode & 0o777).toBe(0o700);
    await app.close();
  });
});
