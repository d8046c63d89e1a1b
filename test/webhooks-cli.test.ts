// `crudkit webhooks status` and `crudkit webhooks replay`, run from source as a subprocess against
// a real config and database (SQLite, and PostgreSQL for the round trip): the counts per endpoint;
// replay by ISO time and by duration re-queues delivered and dead events, which then arrive with
// their original webhook-id; an unknown endpoint, a bad time and an app without webhooks() exit 1
// with one line and no stack.

import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { createResource, crudkit, type DatabaseOptions, withId } from "crudkit-api";
import { type WebhookRetryOptions, type WebhooksOptions, webhooks } from "crudkit-api/plugins";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { CLI_RUNNER, cliWorkDir } from "./cli-project.ts";
import { forEachDialect, type TestDialect } from "./dialects.ts";
import { type Receiver, startReceiver } from "./webhook-receiver.ts";

const SECRET = `whsec_${Buffer.from("a webhook secret of 32 bytes!!!!").toString("base64")}`;
/** The CLI's app: a failed event waits an hour, so nothing is due while a command runs unless replayed. */
const SLOW_RETRY: WebhookRetryOptions = { attempts: 3, firstDelay: 3600 };

function webhookOptions(url: string, retry: WebhookRetryOptions): WebhooksOptions {
  return {
    endpoints: [
      { id: "main", url, secret: SECRET, events: ["item.*"] },
      // Hears nothing in these tests: listed with zeros.
      { id: "quiet", url, secret: SECRET, events: ["item.delete"] },
    ],
    allowPrivateNetworks: true,
    retry,
    pollInterval: 0.2,
  };
}

const open = { create: true, read: true, update: true, delete: true, list: true } as const;
const item = createResource({ name: "item", schema: withId({ name: z.string() }), access: open });

/** The app the test process runs on the same database as the CLI's. */
function makeApp(database: DatabaseOptions, url: string, retry: WebhookRetryOptions) {
  return crudkit({
    database,
    autoMigrate: true,
    resources: [item],
    log: () => {},
    plugins: [webhooks(webhookOptions(url, retry))],
  });
}

/** A project directory whose app.config.ts is the test's app, with or without webhooks(). */
function cliProject(database: DatabaseOptions, url: string | undefined): string {
  const dir = cliWorkDir("webhooks");
  const plugins = url ? `webhooks(${JSON.stringify(webhookOptions(url, SLOW_RETRY))})` : "";
  writeFileSync(
    join(dir, "app.config.ts"),
    `import { createResource, crudkit, withId } from "crudkit-api";
import { webhooks } from "crudkit-api/plugins";
import { z } from "zod";

const item = createResource({ name: "item", schema: withId({ name: z.string() }), access: ${JSON.stringify(open)} });

export default crudkit({ database: ${JSON.stringify(database)}, autoMigrate: true, resources: [item], plugins: [${plugins}] });
`,
  );
  return dir;
}

/**
 * Runs `crudkit … --config app.config.ts` in `dir`. Not spawnSync: the receiver lives in this
 * process and must stay able to answer, so that a send from the CLI (there must be none) would show.
 */
function cli(dir: string, ...args: string[]): Promise<CliResult> {
  const child = spawn(process.execPath, [join(dir, CLI_RUNNER), ...args, "--config", "app.config.ts"], {
    cwd: dir,
    timeout: 60_000,
  });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  return new Promise((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** One line on stderr, `crudkit: …`, no stack. */
async function expectOneLineError(running: Promise<CliResult>, message: RegExp) {
  const result = await running;
  expect(result.code, result.stdout).toBe(1);
  expect(result.stderr.trimEnd().split("\n")).toHaveLength(1);
  expect(result.stderr).toMatch(message);
  expect(result.stderr).not.toMatch(/\bat .*:\d+:\d+/);
}

function roundTrip(dialect: TestDialect) {
  let receiver: Receiver;
  let database: DatabaseOptions;
  let app: ReturnType<typeof makeApp>;
  let dir: string;
  /** Records whose events the receiver answers 500. */
  const refusing = new Set(["dead", "late"]);
  const start = new Date(Date.now() - 1000);
  const idOf = (name: string) =>
    [...receiver.refused, ...receiver.deliveries].find((d) => d.payload.data.record.name === name)!.id;
  const deliveredTimes = (name: string) =>
    receiver.deliveries.filter((d) => d.payload.data.record.name === name).length;

  beforeAll(async () => {
    receiver = await startReceiver();
    receiver.answer = (delivery) => (refusing.has(delivery.payload.data.record.name) ? 500 : 200);
    database = await dialect.fresh();
    // One try only: "dead" is dead-lettered at its first 500, "ok" delivered.
    const once = makeApp(database, receiver.url, { attempts: 1 });
    await once.ready;
    await once.api.createItem({ body: { name: "ok" } });
    await once.api.createItem({ body: { name: "dead" } });
    await once.webhooks.flush();
    await once.close();
    // "late" fails once and waits an hour for its second attempt: pending and failing.
    app = makeApp(database, receiver.url, SLOW_RETRY);
    await app.ready;
    await app.api.createItem({ body: { name: "late" } });
    await app.webhooks.flush();
    dir = cliProject(database, receiver.url);
  });
  afterAll(async () => {
    await app?.close();
    await receiver?.close();
  });

  it("status prints pending, failing, delivered and dead per endpoint", async () => {
    const result = await cli(dir, "webhooks", "status");
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe(
      [
        "endpoint  pending  failing  delivered  dead",
        "main            1        1          1     1",
        "quiet           0        0          0     0",
        "",
      ].join("\n"),
    );
  });

  it("replay --since ISO time re-queues the delivered and dead events; they arrive with their webhook-id", async () => {
    refusing.delete("dead");
    const deadId = idOf("dead");
    const result = await cli(dir, "webhooks", "replay", "--endpoint", "main", "--since", start.toISOString());
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe(
      `re-queued 2 events of endpoint "main" created since ${start.toISOString()}\n`,
    );
    // Sent by the CLI's dispatcher before it closed, or by this app's.
    await app.webhooks.flush();
    expect(receiver.deliveries.filter((d) => d.id === deadId)).toHaveLength(1);
    expect(deliveredTimes("ok")).toBe(2);
    expect(deliveredTimes("late")).toBe(0);
    expect(await app.webhooks.status()).toEqual([
      { endpoint: "main", pending: 1, failing: 1, delivered: 2, dead: 0 },
      { endpoint: "quiet", pending: 0, failing: 0, delivered: 0, dead: 0 },
    ]);
    const status = await cli(dir, "webhooks", "status");
    expect(status.stdout).toContain("main            1        1          2     0\n");
  });

  it("replay --since ISO time leaves out events created before it", async () => {
    const since = new Date().toISOString();
    await app.api.createItem({ body: { name: "fresh" } });
    await app.webhooks.flush();
    expect(deliveredTimes("fresh")).toBe(1);
    const result = await cli(dir, "webhooks", "replay", "--endpoint", "main", "--since", since);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe(`re-queued 1 event of endpoint "main" created since ${since}\n`);
    await app.webhooks.flush();
    expect(deliveredTimes("fresh")).toBe(2);
    expect(deliveredTimes("ok")).toBe(2);
  });

  it("replay --since 1h re-queues every delivered event of the last hour", async () => {
    const result = await cli(dir, "webhooks", "replay", "--endpoint", "main", "--since", "1h");
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(
      /^re-queued 3 events of endpoint "main" created since \d{4}-\d\d-\d\dT[\d:.]+Z\n$/,
    );
    const since = Date.parse(result.stdout.split("since ")[1]!.trim());
    expect(Math.abs(since - (Date.now() - 3_600_000))).toBeLessThan(60_000);
    await app.webhooks.flush();
    expect([deliveredTimes("ok"), deliveredTimes("dead"), deliveredTimes("fresh")]).toEqual([3, 2, 3]);
    // The event still waiting for its retry is not replayed.
    expect((await app.webhooks.status())[0]).toEqual({
      endpoint: "main",
      pending: 1,
      failing: 1,
      delivered: 3,
      dead: 0,
    });
  });
}

describe("crudkit webhooks status and replay", () => {
  forEachDialect(roundTrip, ["sqlite", "postgres"]);
});

describe("crudkit webhooks: mistakes", () => {
  let dir: string;
  beforeAll(() => {
    const base = cliWorkDir("webhooks-db");
    // Nothing listens there, and no event is ever written: nothing is sent.
    dir = cliProject({ provider: "sqlite", url: `file:${join(base, "app.db")}` }, "http://127.0.0.1:9/hooks");
  });

  it("an unknown endpoint: exit 1, naming it and the endpoints there are", async () => {
    await expectOneLineError(
      cli(dir, "webhooks", "replay", "--endpoint", "billing", "--since", "24h"),
      /^crudkit: webhooks: no endpoint "billing"; the endpoints are main, quiet\.\n$/,
    );
  });

  it.each([
    ["yesterday", "yesterday"],
    ["99999999d", "99999999d"],
    ["", ""],
    ["2024-02-30", "2024-02-30"], // Date would read it as March 1st
    ["March 7", "March 7"], // Date would read it as 2001
    ["2024-05-01T25:00Z", "2024-05-01T25:00Z"],
  ])("a bad --since %j: exit 1, naming it", async (since, named) => {
    await expectOneLineError(
      cli(dir, "webhooks", "replay", "--endpoint", "main", "--since", since),
      new RegExp(
        `^crudkit: --since takes an ISO 8601 date or date-time \\(2024-05-01, 2024-05-01T12:00:00Z\\) or a time back from now \\(30m, 24h, 7d\\), not "${named}"\\.\n$`,
      ),
    );
  });

  it("a --since in the future: exit 1", async () => {
    await expectOneLineError(
      cli(dir, "webhooks", "replay", "--endpoint", "main", "--since", "2999-01-01"),
      /^crudkit: --since "2999-01-01" is in the future: no event was created after it\.\n$/,
    );
  });

  it("an ISO date with an offset and a date alone are taken", async () => {
    for (const since of ["2024-05-01", "2024-05-01T12:00+02:00"]) {
      const result = await cli(dir, "webhooks", "replay", "--endpoint", "main", "--since", since);
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toBe(
        `re-queued 0 events of endpoint "main" created since ${new Date(since).toISOString()}\n`,
      );
    }
  });

  it("an app without webhooks(): exit 1, saying so", async () => {
    const base = cliWorkDir("webhooks-db");
    const bare = cliProject({ provider: "sqlite", url: `file:${join(base, "app.db")}` }, undefined);
    for (const args of [["status"], ["replay", "--endpoint", "main", "--since", "1h"]])
      await expectOneLineError(
        cli(bare, "webhooks", ...args),
        /^crudkit: The app in .*app\.config\.ts has no webhooks plugin: add webhooks\(\{ endpoints \}\) to its plugins to send webhooks\.\n$/,
      );
  });
});
