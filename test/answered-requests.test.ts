// Requests answered, told to their observers: at once while any observer asks so (`observe`, a
// logger of yours), else together at the end of the event loop's turn (`observeLater`, crudkit's
// own request log and metrics), every one once and in order; a scrape and app.close() settle those
// still waiting, so nothing read and nothing at close misses a request.

import { mkdtempSync, openSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createResource, crudkit, type DatabaseOptions, jsonLogger, withId } from "crudkit-api";
import type { CrudkitPlugin, PluginContext, RequestRecord } from "crudkit-api/plugin-kit";
import { metrics } from "crudkit-api/plugins";
import { describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { answeredRequests, type Seen } from "../src/core/answered-requests.ts";
import { lineSink } from "../src/core/line-sink.ts";
import { forEachDialect } from "./dialects.ts";
import { parsePrometheusText, sampleValue } from "./prometheus-text.ts";

const endOfTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** An answer made elsewhere than crudkit's own: its bytes are the length it states, when it does. */
const answer = (status: number, body = "{}", length?: number) =>
  new Response(body, {
    status,
    headers: { "content-type": "application/json", ...(length ? { "content-length": String(length) } : {}) },
  });

describe("answeredRequests()", () => {
  it("told later: nothing during the turn, then each request once, in order, as its record", async () => {
    const told: RequestRecord[] = [];
    const answered = answeredRequests({ observe: (record) => void told.push(record), later: true });
    const seen: Seen = { route: "/api/thing/:id", code: "NOT_FOUND" };
    answered.answered(new Request("http://x/api/thing/1"), answer(200, '{"a":"é"}', 10), "r1", {}, 1.23456);
    answered.answered(new Request("http://x/api/thing/2", { method: "DELETE" }), answer(404), "r2", seen, 2);
    expect(told).toEqual([]);
    await endOfTurn();
    expect(told).toEqual([
      { method: "GET", route: "unmatched", status: 200, durationMs: 1.235, requestId: "r1", bytes: 10 },
      {
        method: "DELETE",
        route: "/api/thing/:id",
        status: 404,
        durationMs: 2,
        requestId: "r2",
        code: "NOT_FOUND",
      },
    ]);
    await endOfTurn();
    expect(told).toHaveLength(2);
  });

  it("settle() tells at once those waiting, and the end of the turn tells none twice", async () => {
    const told: string[] = [];
    const answered = answeredRequests({ observe: (record) => void told.push(record.requestId), later: true });
    answered.answered(new Request("http://x/"), answer(200), "a", {}, 1);
    answered.settle();
    expect(told).toEqual(["a"]);
    answered.answered(new Request("http://x/"), answer(200), "b", {}, 1);
    answered.settle();
    answered.settle();
    await endOfTurn();
    expect(told).toEqual(["a", "b"]);
  });

  it("past 256 in one turn, those waiting are told at once; thousands, each once, in order", async () => {
    const told: string[] = [];
    const answered = answeredRequests({ observe: (record) => void told.push(record.requestId), later: true });
    const ids = Array.from({ length: 3000 }, (_, i) => `id-${i}`);
    for (const [i, id] of ids.entries()) {
      answered.answered(new Request("http://x/"), answer(200), id, {}, i);
      if (i === 255) expect(told).toHaveLength(256);
    }
    expect(told.length).toBeLessThan(3000);
    await endOfTurn();
    expect(told).toEqual(ids);
  });

  it("an observer that throws is told the next request still; one told at once gets it before the answer returns", async () => {
    let calls = 0;
    const later = answeredRequests({
      observe: () => {
        calls++;
        throw new Error("observer down");
      },
      later: true,
    });
    later.answered(new Request("http://x/"), answer(200), "a", {}, 1);
    later.answered(new Request("http://x/"), answer(200), "b", {}, 1);
    expect(() => later.settle()).not.toThrow();
    expect(calls).toBe(2);
    const told: string[] = [];
    const now = answeredRequests({ observe: (record) => void told.push(record.requestId), later: false });
    now.answered(new Request("http://x/"), answer(200), "c", {}, 1);
    expect(told).toEqual(["c"]);
  });
});

const gizmo = createResource({
  name: "gizmo",
  schema: withId({ name: z.string() }),
  access: { create: true, read: true, list: true },
});
const TOKEN = "scraper-token-0123456789";

it("a flush writes the requests answered before it with no timer, a test's fake ones included", async () => {
  const file = join(mkdtempSync(join(tmpdir(), "answered-")), "requests.log");
  const logger = jsonLogger({ sink: lineSink({ fd: openSync(file, "w") }) });
  const app = crudkit({
    database: { provider: "sqlite", url: ":memory:" },
    autoMigrate: true,
    resources: [gizmo],
    requestLogs: true,
    logger,
    log: () => {},
  });
  await app.ready;
  vi.useFakeTimers();
  try {
    await app.handler(new Request("http://localhost/api/gizmos", { headers: { "x-request-id": "faked" } }));
    await logger.flush();
    expect(readFileSync(file, "utf8")).toContain('"requestId":"faked"');
  } finally {
    vi.useRealTimers();
    await app.close();
  }
});

/** A plugin keeping what it is told, at once or later; its context, to settle. */
function keeping(id: string, later: boolean) {
  const told: string[] = [];
  let context: PluginContext | undefined;
  const plugin: CrudkitPlugin = {
    id,
    init: (app) => {
      context = app;
    },
    [later ? "observeLater" : "observe"]: (record: RequestRecord) => void told.push(record.requestId),
  };
  return { plugin, told, settle: () => context!.settleRequests() };
}

forEachDialect((dialect) => {
  const appWith = async (database: DatabaseOptions, plugins: CrudkitPlugin[], extra = {}) => {
    const app = crudkit({
      database,
      autoMigrate: true,
      resources: [gizmo],
      plugins,
      log: () => {},
      ...extra,
    });
    await app.ready;
    return app;
  };
  const read = (id: string) =>
    new Request("http://localhost/api/gizmos?limit=1", { headers: { "x-request-id": id } });

  it("observeLater is told at the end of the turn, or when a plugin settles; any observe makes every observer hear at once", async () => {
    const late = keeping("late", true);
    const app = await appWith(await dialect.fresh(), [late.plugin]);
    try {
      await app.handler(read("req-1"));
      expect(late.told).toEqual([]);
      late.settle();
      expect(late.told).toEqual(["req-1"]);
      await app.handler(read("req-2"));
      await endOfTurn();
      expect(late.told).toEqual(["req-1", "req-2"]);
    } finally {
      await app.close();
    }
    const early = keeping("early", false);
    const alongside = keeping("alongside", true);
    const both = await appWith(await dialect.fresh(), [early.plugin, alongside.plugin]);
    try {
      await both.handler(read("req-3"));
      expect(early.told).toEqual(["req-3"]);
      expect(alongside.told).toEqual(["req-3"]);
    } finally {
      await both.close();
    }
  });

  it("a scrape right after concurrent requests counts every one of them", async () => {
    const app = await appWith(await dialect.fresh(), [metrics({ tokens: TOKEN })]);
    try {
      const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => app.handler(read(`c-${i}`))));
      expect(answers.map((each) => each.status)).toEqual(Array(40).fill(200));
      const scraped = await app.handler(
        new Request("http://localhost/api/metrics", { headers: { authorization: `Bearer ${TOKEN}` } }),
      );
      const families = parsePrometheusText(await scraped.text());
      const labels = { method: "GET", route: "/api/gizmos", status: "200" };
      expect(sampleValue(families, "crudkit_http_requests_total", labels)).toBe(40);
    } finally {
      await app.close();
    }
  });

  it("a logger of yours, or a sink of yours, hears each request before its answer returns, metrics or not", async () => {
    const heard: string[] = [];
    const logger = {
      info: (fields: object) => void heard.push((fields as RequestRecord).requestId),
      warn: () => {},
      error: () => {},
    };
    const app = await appWith(await dialect.fresh(), [metrics({ tokens: TOKEN })], {
      requestLogs: true,
      logger,
    });
    try {
      await app.handler(read("mine-1"));
      expect(heard).toEqual(["mine-1"]);
    } finally {
      await app.close();
    }
    const lines: string[] = [];
    const own = jsonLogger({ sink: { write: (line) => void lines.push(line), flush: async () => {} } });
    const sinkApp = await appWith(await dialect.fresh(), [], { requestLogs: true, logger: own });
    try {
      await sinkApp.handler(read("mine-2"));
      expect(lines.map((line) => JSON.parse(line).requestId)).toEqual(["mine-2"]);
    } finally {
      await sinkApp.close();
    }
  });

  it("app.close() while requests are in flight writes each one's line once; a flush writes the turn's lines", async () => {
    const file = join(mkdtempSync(join(tmpdir(), "answered-")), "requests.log");
    const logger = jsonLogger({ sink: lineSink({ fd: openSync(file, "w") }) });
    const app = await appWith(await dialect.fresh(), [], { requestLogs: true, logger });
    await app.handler(read("before-flush"));
    await logger.flush();
    expect(readFileSync(file, "utf8")).toContain('"requestId":"before-flush"');
    const ids = Array.from({ length: 100 }, (_, i) => `close-${i}`);
    // Not awaited: close() waits for them, and their lines.
    const answers = ids.map((id) => app.handler(read(id)));
    await app.close();
    expect((await Promise.all(answers)).every((answer) => answer.status === 200)).toBe(true);
    ids.unshift("before-flush");
    const lines = readFileSync(file, "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { msg: string; requestId: string; route: string });
    const requests = lines.filter((line) => line.msg === "request");
    expect(requests.map((line) => line.requestId).sort()).toEqual([...ids].sort());
    expect(new Set(requests.map((line) => line.route))).toEqual(new Set(["/api/gizmos"]));
  });
});
