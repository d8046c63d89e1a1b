// Request logs: with `requestLogs`, one line per request, in pino's shape, naming the route by its
// template and nothing the caller sent; errors go to the same logger. Without a logger the lines go
// to stderr through a sink that never blocks: a child whose stderr nobody reads still answers.

import { execFileSync, spawn } from "node:child_process";
import { closeSync, constants, mkdtempSync, openSync, readFileSync, readSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { apiKey, createResource, crudkit, jsonLogger, type Logger, withId } from "crudkit-api";
import { describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { lineSink } from "../src/core/line-sink.ts";
import { jsonLogger as ownLogger, requestLineOf } from "../src/core/logger.ts";
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
    ["sqlite", "postgres", "mysql"],
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

  it("jsonLogger({ pretty: true }) writes one readable line per request, as each is answered, and an error's stack under its line", async () => {
    const written: string[] = [];
    const sink = { write: (line: string) => void written.push(line), flush: async () => {} };
    const app = crudkit({
      database: { provider: "sqlite", url: ":memory:" },
      autoMigrate: true,
      resources: [failing],
      logger: jsonLogger({ pretty: true, sink }),
      requestLogs: true,
    });
    try {
      await app.ready;
      await app.handler(
        new Request("http://localhost/api/failings", { headers: { "x-request-id": "list-1" } }),
      );
      // Told as it is answered: the line is there when the answer is.
      expect(written).toHaveLength(1);
      await app.handler(
        new Request("http://localhost/api/failing", {
          method: "POST",
          headers: { "content-type": "application/json", "x-request-id": "bug-2" },
          body: JSON.stringify({ name: "x" }),
        }),
      );
      const [list, error, failed] = written;
      expect(list).toMatch(
        /^\d\d:\d\d:\d\d\.\d{3} INFO {2}request method=GET route=\/api\/failings status=200 durationMs=[\d.]+ requestId=list-1 .*resource=failing operation=list\n$/,
      );
      // The cause: its message on the line, its stack on the lines under it; never JSON.
      expect(error).toMatch(/^\d\d:\d\d:\d\d\.\d{3} ERROR .*requestId=bug-2\nError: a bug in a hook/);
      expect(error).toContain("\n    at ");
      expect(failed).toMatch(
        / INFO {2}request method=POST route=\/api\/failing status=500 .*code=INTERNAL_ERROR\n$/,
      );
      for (const line of written) expect(() => JSON.parse(line)).toThrow();
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

  it("a request's line, written as bytes, is the JSON that info(record, 'request') writes, hostile texts included", async () => {
    const dir = mkdtempSync(join(tmpdir(), "crudkit-log-"));
    // Request lines are made together just before the sink writes: two loggers, one file each.
    const [ownFile, infoFile] = [join(dir, "own.jsonl"), join(dir, "info.jsonl")];
    const logger = ownLogger({ sink: lineSink({ fd: openSync(ownFile, "w") }) });
    const generic = ownLogger({ sink: lineSink({ fd: openSync(infoFile, "w") }) });
    const line = requestLineOf(logger);
    const records = [
      {
        method: "GET",
        route: "/api/product/:id",
        status: 200,
        durationMs: 0.123,
        requestId: "r-1",
        bytes: 172,
      },
      {
        method: "DELETE",
        route: "unmatched",
        status: 404,
        durationMs: 12,
        requestId: "r.2",
        userId: 'u"1\\\n\u0000\u2028\ud800 é',
        resource: "product",
        operation: "delete",
        code: "NOT_FOUND",
      },
      // A length no answer states is never written as NaN (that would not be JSON).
      {
        method: "GET",
        route: '/x/"y"',
        status: 500,
        durationMs: Number.NaN,
        requestId: "r3",
        bytes: Number.NaN,
      },
      { method: "M\u00e9", route: "/a", status: 200, durationMs: 0.1234567, requestId: "r4" },
      // Request ids a Request made in code may carry (the HTTP path keeps sane tokens only), and
      // a route and user of characters past ASCII: escaped as JSON.stringify escapes them.
      ...[
        'a"b',
        "a\\b",
        "nul\u0000",
        "line\nbreak",
        "é",
        "\u2028",
        "\ud800",
        "😀",
        "~",
        "\u007f",
        "",
        // One past the longest id kept as bytes while its line waits (it waits as text), the
        // longest, then a short one in the next slot: were a slot shorter than the longest id,
        // the next one's bytes would overwrite the longest one's end.
        "a".repeat(129),
        "b".repeat(128),
        "c",
      ].map((requestId) => ({
        method: "GET",
        route: "/é/😀",
        status: 200,
        durationMs: 2,
        requestId,
        userId: "ü",
      })),
      { method: "GET", route: "/g", status: 200.5, durationMs: 1, requestId: "r11", bytes: 1e21 },
      {
        method: "GET",
        route: "/g",
        status: Number.POSITIVE_INFINITY,
        durationMs: 1,
        requestId: "r12",
        bytes: -3,
      },
      ...[0, -0, 1.5, 2 ** 53].map((bytes) => ({
        method: "GET",
        route: "/g",
        status: 200,
        durationMs: 1,
        requestId: "r13",
        bytes,
      })),
      // Durations as recordOf rounds them, written from integers: every shape of fraction.
      ...[
        0,
        0.001,
        0.01,
        0.05,
        0.1,
        0.12,
        0.123,
        1,
        10.2,
        10.02,
        99.999,
        1234.5,
        86_400_000.001,
        -1.5,
        -0,
        2 ** 60,
        // Past 2^43 ms three decimals are not the shortest form of a double.
        8796093022208 + 15 / 512,
        Math.round((2 ** 42 + 0.5) * 1000) / 1000,
      ].map((durationMs) => ({ method: "GET", route: "/b", status: 204, durationMs, requestId: "r5" })),
      // A user id that is not a text (a custom identity's number) is written as the generic line does.
      {
        method: "GET",
        route: "/d",
        status: 200,
        durationMs: 1,
        requestId: "r7",
        userId: 42 as unknown as string,
      },
      // The texts kept per route and per user: a route under two methods, user ids that
      // alternate, a resource without an operation and an operation without a resource.
      ...["a", "b", "a", 'a"', "a"].map((userId, i) => ({
        method: i % 2 ? "POST" : "GET",
        route: "/api/product/:id",
        status: 200,
        durationMs: 1,
        requestId: "r8",
        userId,
        resource: i % 2 ? "product" : "order",
        operation: i < 3 ? "read" : "update",
      })),
      { method: "GET", route: "/e", status: 200, durationMs: 1, requestId: "r9", resource: "product" },
      { method: "GET", route: "/e", status: 200, durationMs: 1, requestId: "r9", operation: "read" },
      // More methods, routes, resources and users than are kept: the rest are escaped on each
      // line, and the users kept are let go and kept again.
      ...Array.from({ length: 2100 }, (_, i) => ({
        method: `M${i}`,
        route: `/f/${i}`,
        status: 200,
        durationMs: 1,
        requestId: "r10",
        userId: `u${i % 1500}`,
        resource: `r${i}`,
        operation: "read",
      })),
      ...Array.from({ length: 300 }, () => ({
        method: "GET",
        route: "/c",
        status: 200,
        durationMs: Math.round(Math.random() * 10 ** Math.floor(Math.random() * 8)) / 1000,
        requestId: "r6",
      })),
    ];
    for (const record of records) {
      line(record);
      generic.info(record, "request");
    }
    await Promise.all([logger.flush(), generic.flush()]);
    const own = readFileSync(ownFile, "utf8").trim().split("\n");
    const info = readFileSync(infoFile, "utf8").trim().split("\n");
    expect(own).toHaveLength(records.length);
    expect(info).toHaveLength(records.length);
    const timeless = (line: string) => line.replace(/"time":\d+/, '"time":0');
    for (let i = 0; i < records.length; i++) {
      expect(timeless(own[i]!)).toBe(timeless(info[i]!));
      expect(JSON.parse(own[i]!)).toMatchObject({
        level: 30,
        msg: "request",
        requestId: records[i]!.requestId,
      });
    }
  });

  it("a user id given as an object is written as it is when its line is made, not as it was first", async () => {
    const file = join(mkdtempSync(join(tmpdir(), "crudkit-log-")), "log.jsonl");
    const logger = ownLogger({ sink: lineSink({ fd: openSync(file, "w") }) });
    const line = requestLineOf(logger);
    const user = { n: 1 };
    const record = {
      method: "GET",
      route: "/u",
      status: 200,
      durationMs: 1,
      requestId: "r",
      userId: user as unknown as string,
    };
    line(record);
    await logger.flush();
    user.n = 2;
    line(record);
    await logger.flush();
    const lines = readFileSync(file, "utf8")
      .trim()
      .split("\n")
      .map((text) => JSON.parse(text));
    expect(lines.map((each) => each.userId)).toEqual([{ n: 1 }, { n: 2 }]);
  });

  it("thousands of request lines made in one go, past those kept waiting, are each written once, in order", async () => {
    const file = join(mkdtempSync(join(tmpdir(), "crudkit-log-")), "log.jsonl");
    const logger = ownLogger({ sink: lineSink({ fd: openSync(file, "w") }) });
    const line = requestLineOf(logger);
    for (let i = 0; i < 10_000; i++) {
      line({ method: "GET", route: "/api/product/:id", status: 200, durationMs: 1, requestId: `r${i}` });
      // Records made in code: an id that is not a text is written as the generic line writes it;
      // a field that throws loses that record's line only; a field read twice would give another
      // answer the second time (it is read once).
      if (i === 5000) line({ method: "GET", route: "/x", status: 200, durationMs: 1, requestId: 7 as never });
      if (i === 6000)
        line({
          method: "GET",
          route: "/x",
          status: 200,
          durationMs: 1,
          get requestId(): string {
            throw new Error("no id");
          },
        });
      if (i === 7000) {
        let reads = 0;
        line({
          method: "GET",
          route: "/x",
          get status(): number {
            return reads++ === 0 ? 200 : ("9".repeat(5000) as never);
          },
          durationMs: 1,
          requestId: "flip",
        });
      }
    }
    await logger.flush();
    const ids = readFileSync(file, "utf8")
      .trim()
      .split("\n")
      .map((text) => JSON.parse(text).requestId);
    const expected = Array.from({ length: 10_000 }, (_, i) => `r${i}`);
    expected.splice(7001, 0, "flip");
    expected.splice(5001, 0, 7 as never);
    expect(ids).toEqual(expected);
  });

  it("a burst of multi-byte lines past the first buffer is written byte for byte, in order", async () => {
    const file = join(mkdtempSync(join(tmpdir(), "crudkit-log-")), "log.jsonl");
    const sink = lineSink({ fd: openSync(file, "w") });
    // About 1.5 MB at once: the buffer grows past its first 512 KiB, characters of 2, 3 and 4 bytes
    // land on every offset.
    const lines = Array.from({ length: 6000 }, (_, i) => `${i}:${"é€😀x".repeat(i % 97)}\n`);
    for (const line of lines) sink.write(line);
    await sink.flush();
    expect(readFileSync(file, "utf8")).toBe(lines.join(""));
  });

  it("request lines wait up to 50 ms for others; a warning brings the write forward to 10 ms; flush writes at once", async () => {
    const file = join(mkdtempSync(join(tmpdir(), "crudkit-log-")), "log.jsonl");
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "Date"] });
    try {
      const sink = lineSink({ fd: openSync(file, "w") });
      let made = 0;
      const requestLine = () => {
        made++;
        sink.write(`{"msg":"request","n":${made}}\n`);
      };
      sink.writeLater!(requestLine);
      vi.advanceTimersByTime(49);
      expect(made).toBe(0);
      vi.advanceTimersByTime(1);
      expect(made).toBe(1);
      await sink.flush();
      // A warning while request lines gather: both go out 10 ms after it, not 50 ms after them.
      sink.writeLater!(requestLine);
      vi.advanceTimersByTime(20);
      sink.write('{"level":40,"msg":"warning"}\n');
      vi.advanceTimersByTime(9);
      expect(made).toBe(1);
      vi.advanceTimersByTime(1);
      expect(made).toBe(2);
      await sink.flush();
      // flush() does not wait for the gathering to end.
      sink.writeLater!(requestLine);
      await sink.flush();
      expect(made).toBe(3);
      expect(readFileSync(file, "utf8")).toBe(
        '{"msg":"request","n":1}\n{"level":40,"msg":"warning"}\n{"msg":"request","n":2}\n{"msg":"request","n":3}\n',
      );
    } finally {
      vi.useRealTimers();
    }
  });

  it("a sink of one's own without writeWith and writeLater gets request lines as texts", () => {
    const lines: string[] = [];
    const sink = {
      write: (line: string) => void lines.push(line),
      flush: async () => {},
      // One of the two only: the lines still come as texts.
      writeWith: () => {
        throw new Error("not this way");
      },
    };
    requestLineOf(ownLogger({ sink }))({
      method: "GET",
      route: "/a",
      status: 200,
      durationMs: 1,
      requestId: "r1",
    });
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({ msg: "request", route: "/a", requestId: "r1" });
  });

  it("a copy of our logger, or one whose info was replaced, gets its request lines through info", async () => {
    const base = ownLogger({
      sink: lineSink({ fd: openSync(join(mkdtempSync(join(tmpdir(), "crudkit-log-")), "x"), "w") }),
    });
    const seen: unknown[] = [];
    const wrapped = { ...base, info: (fields: object, message?: string) => seen.push([fields, message]) };
    const record = { method: "GET", route: "/a", status: 200, durationMs: 1, requestId: "r1" };
    requestLineOf(wrapped)(record);
    expect(seen).toEqual([[record, "request"]]);
    base.info = (fields: object, message?: string) => seen.push([fields, message]);
    requestLineOf(base)(record);
    expect(seen).toHaveLength(2);
  });

  it("lines written while a write is under way go out with the next one, every line once and in order", async () => {
    const file = join(mkdtempSync(join(tmpdir(), "crudkit-log-")), "log.jsonl");
    const sink = lineSink({ fd: openSync(file, "w") });
    // 2,000 lines over a few hundred ms, so that many arrive while a write is under way.
    for (let i = 0; i < 200; i++) {
      for (let j = 0; j < 10; j++) sink.write(`{"n":${i * 10 + j}}\n`);
      await new Promise((resolve) => setImmediate(resolve));
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    await sink.flush();
    const lines = readFileSync(file, "utf8").trim().split("\n");
    expect(lines.map((line) => JSON.parse(line).n)).toEqual(Array.from({ length: 2000 }, (_, i) => i));
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
