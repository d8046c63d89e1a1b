// Starts the example API as `npm start` does and runs the docs' curl walk-through
// (docs/walk-through.md) against it, comparing each command's output with the JSON the page shows
// (ids and times aside).

import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openSocket } from "./wire.ts";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const root = new URL("..", import.meta.url).pathname;
const started: { child: ChildProcess; dir: string }[] = [];

afterAll(() => {
  for (const { child, dir } of started) {
    child.kill();
    rmSync(dir, { recursive: true, force: true });
  }
});

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** Starts examples/server.ts and resolves with everything it printed once it listens. */
async function startExample(
  env: Record<string, string>,
): Promise<{ port: number; output: string; dir: string; child: ChildProcess }> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), "crudkit-example-"));
  const child = spawn(process.execPath, ["--import", "tsx", "examples/server.ts"], {
    cwd: root,
    env: { ...process.env, PORT: String(port), DATA_DIR: dir, ...env },
  });
  started.push({ child, dir });
  let output = "";
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`example did not start:\n${output}`)), 15_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes("curl")) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
  });
  return { port, output, dir, child };
}

/** The walk-through page: each ```sh block with the ```json block that follows it. */
function walkThrough(): { setup: string; steps: { command: string; expected: unknown }[] } {
  const page = readFileSync(join(root, "docs/walk-through.md"), "utf8");
  const section = page.split("# Walk-through")[1]!.split("\n## ")[0]!;
  const blocks = [...section.matchAll(/^```(sh|json)\n([\s\S]*?)^```$/gm)].map((m) => ({
    lang: m[1],
    code: m[2]!,
  }));
  const [setup, ...rest] = blocks;
  const steps: { command: string; expected: unknown }[] = [];
  for (let i = 0; i < rest.length; i += 2) {
    expect(rest[i]!.lang).toBe("sh");
    expect(rest[i + 1]!.lang).toBe("json");
    steps.push({ command: rest[i]!.code, expected: JSON.parse(rest[i + 1]!.code) });
  }
  return { setup: setup!.code, steps };
}

/** Ids, times and curl's version differ from run to run; everything else must match. */
function normalize(value: unknown): unknown {
  if (typeof value === "string") {
    if (UUID.test(value)) return "<id>";
    if (ISO.test(value)) return "<time>";
    return /^curl\/[\d.]+$/.test(value) ? "curl/<version>" : value;
  }
  if (Array.isArray(value)) return value.map(normalize);
  if (value && typeof value === "object")
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, normalize(v)]));
  return value;
}

describe("the walk-through (docs/walk-through.md)", () => {
  it("works as printed against the example started like npm start", async () => {
    const key = "walkthrough-key";
    const userKey = "walkthrough-user-key";
    const { port, output } = await startExample({ API_KEY: key, USER_API_KEY: userKey });
    expect(output).toContain(`crudkit example API listening on http://127.0.0.1:${port}/api`);
    expect(output).toContain(`API key: ${key}`);
    expect(output).toContain(`User API key (sees only her own orders): ${userKey}`);

    const { setup, steps } = walkThrough();
    expect(setup).toMatch(/^export API=http:\/\/127\.0\.0\.1:3000\/api KEY=/);
    expect(steps.length).toBeGreaterThanOrEqual(7);
    const marker = "---crudkit-step---";
    const script = steps.map((s) => `${s.command}\necho; echo ${marker}`).join("\n");
    const stdout = execFileSync("bash", ["-e", "-c", script], {
      env: { ...process.env, API: `http://127.0.0.1:${port}/api`, KEY: key, USER_KEY: userKey },
      encoding: "utf8",
    });
    const outputs = stdout.split(marker).slice(0, steps.length);
    steps.forEach((step, i) => {
      expect(normalize(JSON.parse(outputs[i]!)), step.command).toEqual(normalize(step.expected));
    });
  });

  it("takes uploads and serves them under /uploads with nosniff", async () => {
    const { port } = await startExample({ API_KEY: "upload-key" });
    const base = `http://127.0.0.1:${port}`;
    const png = Buffer.concat([
      Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
      Buffer.alloc(64, 1),
    ]);
    const denied = await fetch(`${base}/api/upload/file`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    expect(denied.status).toBe(403);
    const created = await fetch(`${base}/api/upload/file`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": "upload-key" },
      body: JSON.stringify({ file: png.toString("base64"), filename: "dot.png", mimeType: "image/png" }),
    });
    expect(created.status).toBe(201);
    const record = (await created.json()) as { url: string };
    expect(record.url).toMatch(/^\/uploads\/[0-9a-f-]{36}\.png$/);
    const served = await fetch(`${base}${record.url}`);
    expect(served.headers.get("content-type")).toBe("image/png");
    expect(served.headers.get("x-content-type-options")).toBe("nosniff");
    expect(Buffer.from(await served.arrayBuffer())).toEqual(png);
    for (const path of [
      "/uploads/..%2Fapp.db",
      "/uploads/%2e%2e%2fapp.db",
      "/uploads/missing.png",
      "/uploads/",
    ]) {
      expect((await fetch(`${base}${path}`)).status, path).toBe(404);
    }
  });

  it("prints a working curl, and makes up a key with a warning when API_KEY is unset", async () => {
    const { output, dir } = await startExample({ API_KEY: "" });
    expect(output).toContain("warning: API_KEY is not set");
    const devKey = /API key: (dev-[0-9a-f]+)/.exec(output)?.[1];
    expect(devKey).toBeDefined();
    const curl = output.split("\n").find((line) => line.trim().startsWith("curl"))!;
    const created = JSON.parse(execFileSync("bash", ["-c", curl], { encoding: "utf8" }));
    expect(created).toMatchObject({ name: "Hat", price: 5, status: "draft" });
    expect(readFileSync(join(dir, "app.db")).length).toBeGreaterThan(0);
    // The admin page is on, and its URL printed: the page answers with its strict CSP.
    const adminUrl = /Admin \(sign in with an API key above\): (\S+)/.exec(output)?.[1];
    expect(adminUrl).toMatch(/\/api\/admin$/);
    const page = await fetch(adminUrl!);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-security-policy")).toContain("script-src 'self'");
    expect(await page.text()).toContain('<div id="admin">');
  });

  it("on SIGTERM finishes the request in flight, then exits 0", async () => {
    const { port, child } = await startExample({ API_KEY: "term-key" });
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    const body = JSON.stringify({
      file: Buffer.alloc(200_000, 3).toString("base64"),
      filename: "t.bin",
      mimeType: "application/octet-stream",
    });
    // Half the body is sent, then the signal, then the rest: the upload must still be answered.
    const socket = await openSocket(`http://127.0.0.1:${port}`);
    let answer = "";
    socket.on("data", (chunk) => {
      answer += chunk.toString();
    });
    socket.write(
      `POST /api/upload/file HTTP/1.1\r\nHost: 127.0.0.1\r\nx-api-key: term-key\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body.slice(0, 100_000)}`,
    );
    await new Promise((resolve) => setTimeout(resolve, 200));
    child.kill("SIGTERM");
    await new Promise((resolve) => setTimeout(resolve, 200));
    socket.write(body.slice(100_000));
    expect(await exited).toBe(0);
    expect(answer).toMatch(/^HTTP\/1\.1 201/);
    expect(answer).toContain('"originalName":"t.bin"');
    socket.destroy();
  }, 30_000);
});
