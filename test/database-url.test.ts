// Database URLs: a scheme crudkit does not know is a startup error naming it (with a "did you
// mean"), never a SQLite file in a directory made from the URL; no output holds the password.
// Also `npm start` (examples/server.ts) with a URL typo, with a database that is not up, and with
// WAIT_FOR_DATABASE=off: what it prints, whether it stays up, and that the secret is never printed.

import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { ConfigError, crudkit, databaseFromUrl, maskUrl } from "crudkit-api";
import { afterAll, describe, expect, it } from "vitest";
import { openProduct } from "./fixtures.ts";
import { freePort } from "./helpers.ts";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const SECRET = "s3cret-pw-never-printed";

describe("databaseFromUrl", () => {
  it("knows postgres, postgresql, mysql, file:, :memory: and paths", () => {
    expect(databaseFromUrl("postgres://u:p@h:5432/d").provider).toBe("postgres");
    expect(databaseFromUrl("postgresql://u@h/d").provider).toBe("postgres");
    expect(databaseFromUrl("mysql://u:p@h:3306/d").provider).toBe("mysql");
    expect(databaseFromUrl("file:./data/app.db")).toEqual({ provider: "sqlite", url: "file:./data/app.db" });
    expect(databaseFromUrl(":memory:").provider).toBe("sqlite");
    expect(databaseFromUrl("./data/app.db").provider).toBe("sqlite");
    expect(databaseFromUrl("C:\\data\\app.db").provider).toBe("sqlite");
  });

  it.each([
    ["postgress", "postgres://"],
    ["postgre", "postgres://"],
    ["mariadb", "mysql://"],
    ["sqlite", "file:"],
  ])("%s:// is an error naming the scheme, with a did-you-mean, and no password", (scheme, guess) => {
    const url = `${scheme}://app:${SECRET}@127.0.0.1:5432/app`;
    let error: unknown;
    try {
      databaseFromUrl(url);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const { message } = error as Error;
    expect(message).toContain(`"${scheme}://"`);
    expect(message).toContain(`did you mean "${guess}"`);
    expect(message).toContain('"postgres://"');
    expect(message).not.toContain(SECRET);
  });

  it.each([
    "",
    "   ",
    "redis://x",
    "constructor://x",
    "__proto__://x",
    "x\u0000y://z",
    `${"a".repeat(10_000)}://x`,
  ])("refuses %j as a startup error", (url) => {
    expect(() => databaseFromUrl(url)).toThrow(ConfigError);
  });

  it("a sqlite provider given another database's URL is a startup error, and no directory is made", () => {
    const cwd = process.cwd();
    const dir = mkdtempSync(join(tmpdir(), "crudkit-url-"));
    process.chdir(dir);
    try {
      expect(() =>
        crudkit({
          database: { provider: "sqlite", url: `postgress://app:${SECRET}@127.0.0.1:5432/app` },
          resources: [openProduct],
        }),
      ).toThrow(/did you mean "postgres:\/\/"/);
      expect(readdirSync(dir)).toEqual([]);
    } finally {
      process.chdir(cwd);
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("maskUrl hides the password wherever a URL is shown", () => {
    expect(maskUrl(`postgres://app:${SECRET}@127.0.0.1:5432/app`)).toBe(
      "postgres://app:***@127.0.0.1:5432/app",
    );
    expect(maskUrl(`mysql://app@h/d?password=${SECRET}&ssl=1`)).toBe("mysql://app@h/d?password=***&ssl=1");
    expect(maskUrl("postgres://app@h/d")).toBe("postgres://app@h/d");
    // A password with unencoded "@", "/" or "?" is masked whole.
    expect(maskUrl("postgres://app:p@ss/w?rd@127.0.0.1:5432/app")).toBe(
      "postgres://app:***@127.0.0.1:5432/app",
    );
  });
});

const children: ChildProcess[] = [];
const dirs: string[] = [];
afterAll(() => {
  for (const child of children) child.kill("SIGKILL");
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** examples/server.ts as `npm start` runs it; resolves when it exits or once `until` was printed. */
function start(env: Record<string, string>, until?: string) {
  const dir = mkdtempSync(join(tmpdir(), "crudkit-start-"));
  dirs.push(dir);
  const child = spawn(process.execPath, ["--import", "tsx", join(root, "examples/server.ts")], {
    cwd: root,
    env: { ...process.env, DATA_DIR: join(dir, "data"), API_KEY: "k", ...env },
  });
  children.push(child);
  let output = "";
  const done = new Promise<{ code: number | null; output: string }>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no answer in time:\n${output}`)), 30_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (until && output.includes(until)) {
        clearTimeout(timer);
        resolve({ code: null, output });
      }
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    child.on("exit", (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
  return { dir, child, done };
}

describe("npm start", () => {
  it("a URL typo exits non-zero with one line, no directory from the URL, no password", async () => {
    const { dir, done } = start({ DATABASE_URL: `postgress://app:${SECRET}@127.0.0.1:5432/app` });
    const { code, output } = await done;
    expect(code).toBe(1);
    expect(
      output
        .trim()
        .split("\n")
        .filter((l) => !l.startsWith("warning:")),
    ).toEqual([expect.stringContaining('did you mean "postgres://"')]);
    expect(output).not.toContain(SECRET);
    expect(existsSync(join(root, "postgress:"))).toBe(false);
    expect(readdirSync(dir)).toEqual([]);
  }, 40_000);

  it("with the database down it stays up: live 200, the API 503, one line per attempt without the password", async () => {
    const port = await freePort();
    const listen = await freePort();
    const { child, done } = start(
      { DATABASE_URL: `postgres://app:${SECRET}@127.0.0.1:${port}/app`, PORT: String(listen) },
      "Retrying in 1 s",
    );
    const { output } = await done;
    expect(output).toContain(`cannot reach the database at 127.0.0.1:${port} (ECONNREFUSED)`);
    expect(output).toContain("Retrying in 0.5 s (attempt 1)");
    expect(output).not.toContain(SECRET);
    expect((await fetch(`http://127.0.0.1:${listen}/api/health/live`)).status).toBe(200);
    const health = await fetch(`http://127.0.0.1:${listen}/api/health`);
    expect(health.status).toBe(503);
    expect(await health.text()).not.toContain(SECRET);
    const list = await fetch(`http://127.0.0.1:${listen}/api/products`);
    expect(list.status).toBe(503);
    expect(list.headers.get("retry-after")).toBeTruthy();
    expect(((await list.json()) as { code: string }).code).toBe("SERVICE_UNAVAILABLE");
    child.kill("SIGTERM");
  }, 40_000);

  it("WAIT_FOR_DATABASE=off exits non-zero with one readable line", async () => {
    const port = await freePort();
    const { done } = start({
      DATABASE_URL: `postgres://app:${SECRET}@127.0.0.1:${port}/app`,
      WAIT_FOR_DATABASE: "off",
    });
    const { code, output } = await done;
    expect(code).toBe(1);
    const lines = output.trim().split("\n");
    expect(lines.at(-1)).toBe(`crudkit: cannot reach the database at 127.0.0.1:${port} (ECONNREFUSED).`);
    expect(output).not.toContain(SECRET);
    expect(output).not.toMatch(/node_modules|\n\s+at /);
  }, 40_000);
});
