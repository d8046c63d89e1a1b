// The container recipes (issue 37 §4): examples/Dockerfile and the one docs/deploying.md shows.
// Docker is not on the test machines, so they are linted: a pinned Node 20 base, `npm ci` from the
// lockfile, an unprivileged user, exec-form CMD, SIGTERM, no secret baked into ENV, and a
// HEALTHCHECK whose command is run for real against a served app (0 while it answers, 1 once it is
// gone). Where `docker` exists, the example's image is built too.

import { execFileSync, spawn, spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { createResource, crudkit, withId } from "crudkit-api";
import { serve } from "crudkit-api/node";
import { describe, expect, it } from "vitest";
import { z } from "zod";

const root = new URL("..", import.meta.url).pathname;
const read = (path: string) => readFileSync(`${root}${path}`, "utf8");

interface Instruction {
  keyword: string;
  args: string;
}

/** A Dockerfile's instructions, continuation lines joined, comments dropped. */
function instructions(text: string): Instruction[] {
  return text
    .replace(/\\\n/g, " ")
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "" && !line.startsWith("#"))
    .map((line) => {
      const [keyword = "", ...rest] = line.split(/\s+/);
      return { keyword: keyword.toUpperCase(), args: rest.join(" ") };
    });
}

/** The dockerfile block of a Markdown page. */
function block(markdown: string): string {
  const found = /```dockerfile\n([\s\S]*?)```/.exec(markdown);
  if (!found) throw new Error("no dockerfile block");
  return found[1]!;
}

function lint(text: string): Instruction[] {
  const all = instructions(text);
  const one = (keyword: string) => {
    const found = all.filter((i) => i.keyword === keyword);
    expect(found, keyword).toHaveLength(1);
    return found[0]!.args;
  };
  expect(all[0]?.keyword).toBe("FROM");
  expect(one("FROM")).toMatch(/^node:20\.\d+-bookworm-slim$/);
  expect(all.some((i) => i.keyword === "RUN" && /\bnpm ci\b/.test(i.args))).toBe(true);
  expect(all.some((i) => i.keyword === "COPY" && /package-lock\.json/.test(i.args))).toBe(true);
  expect(one("USER")).not.toMatch(/^(root|0)(:|$)/);
  expect(one("STOPSIGNAL")).toBe("SIGTERM");
  const cmd = JSON.parse(one("CMD")) as string[];
  expect(Array.isArray(cmd) && cmd[0] === "node").toBe(true);
  for (const env of all.filter((i) => i.keyword === "ENV")) {
    expect(env.args).toMatch(/HOST=0\.0\.0\.0/);
    expect(env.args).not.toMatch(/(KEY|SECRET|PASSWORD|TOKEN)=/i);
  }
  expect(one("HEALTHCHECK")).toMatch(/\/api\/health\/live/);
  return all;
}

/** The HEALTHCHECK's command (exec form), as the container would run it. */
function healthCommand(all: Instruction[]): string[] {
  const args = all.find((i) => i.keyword === "HEALTHCHECK")!.args;
  return JSON.parse(args.slice(args.indexOf("CMD") + 3).trim()) as string[];
}

describe("container recipes", () => {
  it("examples/Dockerfile: pinned, from the lockfile, unprivileged, exec-form, and its files exist", () => {
    const all = lint(read("examples/Dockerfile"));
    const cmd = JSON.parse(all.find((i) => i.keyword === "CMD")!.args) as string[];
    expect(existsSync(`${root}${cmd.at(-1)}`)).toBe(true);
    for (const copied of ["package.json", "package-lock.json", "scripts/build-admin.ts"])
      expect(existsSync(`${root}${copied}`), copied).toBe(true);
    const ignored = read(".dockerignore").split("\n");
    for (const path of ["node_modules", ".git", "data"]) expect(ignored).toContain(path);
  });

  it("the docs' recipe passes the same checks", () => {
    lint(block(read("docs/deploying.md")));
  });

  it("the HEALTHCHECK command exits 0 while the app answers and 1 once it is gone", async () => {
    const command = healthCommand(instructions(read("examples/Dockerfile")));
    const app = crudkit({
      database: { provider: "sqlite", url: ":memory:" },
      autoMigrate: true,
      resources: [createResource({ name: "thing", schema: withId({ name: z.string() }) })],
      log: () => {},
    });
    const running = await serve(app, { port: 0, hostname: "127.0.0.1" });
    const port = new URL(running.url).port;
    // Asynchronously: the app answers from this process.
    const probe = () =>
      new Promise<number | null>((resolve) => {
        const child = spawn(
          command[0]!,
          command.slice(1).map((arg) => arg.replace("127.0.0.1:3000", `127.0.0.1:${port}`)),
          { stdio: "ignore" },
        );
        child.on("exit", (code) => resolve(code));
      });
    try {
      expect(await probe()).toBe(0);
    } finally {
      await running.close();
    }
    expect(await probe()).toBe(1);
  });

  // The rule: built where Docker is, linted (above) everywhere. Without Docker there is no
  // such test at all (a skipped test reads as a failure in CI's count).
  const docker = spawnSync("docker", ["version"], { stdio: "ignore" }).status === 0;
  if (docker)
    it("builds where docker is available", () => {
      execFileSync("docker", ["build", "-f", "examples/Dockerfile", "-t", "crudkit-example:test", "."], {
        cwd: root,
        stdio: "inherit",
        timeout: 600_000,
      });
    });
});
