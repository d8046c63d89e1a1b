// Request logs: with `requestLogs`, one line per request, in pino's shape, naming the route by its
// template and nothing the caller sent; errors go to the same logger. Without a logger the lines go
// to stderr through a sink that never blocks: a child whose stderr nobody reads still answers.

import { execFileSync, spawn } from "node:child_process";
import { closeSync, constants, mkdtempSync, openSync, readFileSync, readSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { apiKey, createResource, crudkit, jsonLogger, type Logger, withId } from "crudkit-api";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { lineSink } from "../src/core/line-sink.ts";
import { forEachDialect } from "./dialects.ts";
import { failing } from "./fixtures.ts";

const SECRETS = {
  apiKey: "key-5ecret-0001",
  bearer: "bearer-5ecret-0002",
  cookie: "cookie-5ecret-0003",
  salary: 987654321,
  bodyValue: "body-5ecret-0004",
};

const staff = createResource({
  name: "staff",
  schema: withId({ name: z.string(), salary: z.number().optional() }),
  access: {
    create: true,
    read: true,
    list: true,
    fields: { salary: { read: ({ user }) => user?.roles?.includes("admin") === true } },
  },
});

/** A logger as pino is called: every line kept, with its level. */
function keepingLogger() {
  const lines: { level: string; fields: Record<string, unknown>; message?: string }[] = [];
  const at = (level: string) => (fields: object, message?: string) =>
    lines.push({ level, fields: fields as Record<string, unknown>, message });
  const logger: Logger = { info: at("info"), warn: at("warn"), error: at("error") };
  return { lines, logger };
}

describe("request logs", () => {
  forEachDialect(
    (dialect) => {
      it("one line per request: route template, status, duration, ids, resource; nothing the caller sent", async () => {
        const { lines, logger } = keepingLogger();
        const app = crudkit({
          database: await dialect.fresh(),
          autoMigrate: true,
          resources: [staff],
          plugins: [apiKey({ keys: { [SECRETS.apiKey]: { id: "ada", roles: ["member"] } } })],
          logger,
          requestLogs: true,
        });
        await app.ready;
        try {
          const send = (path: string, init: RequestInit = {}) =>
            app.handler(new Request(`http://localhost${path}`, init));
          const created = await (
            await send("/api/staff", {
              method: "POST",
              headers: {
                "content-type": "application/json",
                "x-api-key": SECRETS.apiKey,
                "x-request-id": "req-1",
              },
              body: JSON.stringify({ name: SECRETS.bodyValue, salary: SECRETS.salary }),
            })
          ).json();
          const readText = await (
            await send(`/api/staff/${created.id}`, {
              headers: {
                "x-api-key": SECRETS.apiKey,
                authorization: `Bearer ${SECRETS.bearer}`,
                cookie: `s=${SECRETS.cookie}`,
              },
            })
          ).text();
          await send(`/api/staff?filter[salary]=${SECRETS.salary}&search=${SECRETS.bodyValue}`);
          await send("/api/staff/no-such-id");
          await send("/api/staff", {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: "{",
          });
          await send(`/api/nothing-here/${SECRETS.bodyValue}`);
          const requests = lines.filter((line) => line.message === "request");
          expect(requests.map((line) => line.level)).toEqual(Array(6).fill("info"));
          const [create, read, list, missing, malformed, unmatched] = requests.map((line) => line.fields);
          expect(create).toEqual({
            method: "POST",
            route: "/api/staff",
            status: 201,
            durationMs: expect.any(Number),
            bytes: expect.any(Number),
            requestId: "req-1",
            userId: "ada",
            resource: "staff",
            operation: "create",
          });
          expect(read).toMatchObject({
            route: "/api/staff/:id",
            status: 200,
            // The body's bytes as made, before any compression.
            bytes: Buffer.byteLength(readText),
            userId: "ada",
            operation: "read",
          });
          expect(list).toMatchObject({
            route: "/api/staff",
            status: 400,
            operation: "list",
            code: "BAD_REQUEST",
          });
          expect(missing).toMatchObject({ route: "/api/staff/:id", status: 404, code: "NOT_FOUND" });
          expect(malformed).toMatchObject({ route: "/api/staff", status: 400, code: "BAD_REQUEST" });
          expect(unmatched).toMatchObject({
            method: "GET",
            route: "unmatched",
            status: 404,
            code: "NOT_FOUND",
          });
          for (const line of requests) expect(line.fields.requestId).toMatch(/^[\w.-]{1,128}$/);
          const everything = JSON.stringify(lines);
          for (const secret of Object.values(SECRETS)) expect(everything).not.toContain(String(secret));
        } finally {
          await app.close();
        }
      });
    },
    ["sqlite", "postgres"],
  );

  it("errors go to the logger's error, the cause under err, with the request's id", async () => {
    const { lines, logger } = keepingLogger();
    const app = crudkit({
      database: { provider: "sqlite", url: ":memory:" },
      autoMigrate: true,
      resources: [failing],
      logger,
      requestLogs: true,
    });
    try {
      await app.ready;
      await app.handler(
        new Request("http://localhost/api/failing", {
          method: "POST",
          headers: { "content-type": "application/json", "x-request-id": "bug-1" },
          body: JSON.stringify({ name: "x" }),
        }),
      );
      const error = lines.find((line) => line.level === "error");
      expect(error?.fields).toMatchObject({ requestId: "bug-1", err: expect.any(Error) });
      expect(lines.find((line) => line.message === "request")?.fields).toMatchObject({
        status: 500,
        code: "INTERNAL_ERROR",
        requestId: "bug-1",
      });
    } finally {
      await app.close();
    }
  });

  it("a logger that throws changes no answer: the read, the 404 and the 500 go out as made", async () => {
    const throwing: Logger = {
      info: () => {
        throw new Error("the log shipper is down");
      },
      warn: () => {},
      error: () => {
        throw new Error("the log shipper is down");
      },
    };
    const app = crudkit({
      database: { provider: "sqlite", url: ":memory:" },
      autoMigrate: true,
      resources: [failing],
      logger: throwing,
      requestLogs: true,
    });
    try {
      await app.ready;
      expect((await app.handler(new Request("http://localhost/api/failing"))).status).toBe(200);
      expect((await app.handler(new Request("http://localhost/api/failing/nope"))).status).toBe(404);
      const failed = await app.handler(
        new Request("http://localhost/api/failing", {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ name: "x" }),
        }),
      );
      expect(failed.status).toBe(500);
      expect((await failed.json()).code).toBe("INTERNAL_ERROR");
      // Methods named after Object.prototype's members are no route's.
      for (const method of ["constructor", "toString", "hasOwnProperty"]) {
        const odd = await app.handler(new Request("http://localhost/api/failing", { method }));
        expect(odd.status, method).toBe(405);
      }
    } finally {
      await app.close();
    }
  });

  it("jsonLogger writes pino's shape: level, time, msg, the fields, err as { type, message, stack }", async () => {
    const file = join(mkdtempSync(join(tmpdir(), "crudkit-log-")), "log.jsonl");
    const logger = jsonLogger({ sink: lineSink({ fd: openSync(file, "w") }) });
    logger.info({ route: "/api/product/:id", status: 200 }, "request");
    logger.error({ err: new TypeError("boom"), requestId: "r1" }, "crudkit: it failed");
    logger.warn({ cycle: 10n }, "odd value");
    await logger.flush();
    const [info, error, warn] = readFileSync(file, "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(info).toEqual({
      level: 30,
      time: expect.any(Number),
      msg: "request",
      route: "/api/product/:id",
      status: 200,
    });
    expect(error).toMatchObject({
      level: 50,
      msg: "crudkit: it failed",
      requestId: "r1",
      err: { type: "TypeError", message: "boom", stack: expect.stringContaining("TypeError: boom") },
    });
    expect(warn).toMatchObject({ level: 40, msg: "odd value", cycle: "10" });
  });

  it("a full pipe: lines queue up to the cap, the rest are dropped and counted, and all is written once read", async () => {
    const dir = mkdtempSync(join(tmpdir(), "crudkit-fifo-"));
    const fifo = join(dir, "log");
    execFileSync("mkfifo", [fifo]);
    const reader = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
    const writer = openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK);
    const sink = lineSink({ fd: writer, maxQueuedBytes: 100_000 });
    const line = `${"x".repeat(99)}\n`;
    const started = performance.now();
    for (let i = 0; i < 5000; i++) sink.write(line);
    // Queued or dropped at once: nothing waited for the pipe.
    expect(performance.now() - started).toBeLessThan(200);
    let text = "";
    const chunk = Buffer.alloc(65536);
    let flushed = false;
    const done = sink.flush().then(() => {
      flushed = true;
    });
    while (!flushed) {
      try {
        const n = readSync(reader, chunk);
        text += chunk.subarray(0, n).toString();
      } catch {
        // EAGAIN: the pipe is empty for now.
      }
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    await done;
    for (;;) {
      try {
        const n = readSync(reader, chunk);
        if (n === 0) break;
        text += chunk.subarray(0, n).toString();
      } catch {
        break;
      }
    }
    closeSync(reader);
    closeSync(writer);
    const lines = text.trim().split("\n");
    const notice = JSON.parse(lines.at(-1)!);
    const dropped = Number(/(\d+) log lines were dropped/.exec(notice.msg)?.[1]);
    const kept = lines.length - 1;
    expect(dropped).toBeGreaterThan(0);
    expect(kept).toBeGreaterThan(900);
    expect(kept + dropped).toBe(5000);
  });

  it("a stalled stderr does not hold requests up: 3,000 answered while nobody reads the pipe", async () => {
    const child = spawn(
      process.execPath,
      ["--import", "tsx", fileURLToPath(new URL("./child/stalled-log-app.ts", import.meta.url))],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    // stderr is never read: the pipe fills after 64 KiB of lines (each about 200 bytes).
    child.stderr.pause();
    let out = "";
    child.stdout.on("data", (chunk) => {
      out += chunk;
    });
    const code = await new Promise<number | null>((resolve) => {
      const timer = setTimeout(() => {
        child.kill("SIGKILL");
        resolve(-1);
      }, 45_000);
      child.on("exit", (exitCode) => {
        clearTimeout(timer);
        resolve(exitCode);
      });
    });
    expect(out).toMatch(/^done \d+/);
    expect(code).toBe(0);
  }, 60_000);
});
