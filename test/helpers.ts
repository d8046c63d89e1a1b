// Test helpers: an app on a fresh SQLite file, and a request function that drives app.handler.

import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { createServer as createNetServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll } from "vitest";
import { checkContract } from "./contract.ts";

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** A fresh SQLite database url in a temporary directory, removed after the test file. */
export function tempDatabaseUrl(): string {
  const dir = mkdtempSync(join(tmpdir(), "crudkit-test-"));
  dirs.push(dir);
  return `file:${join(dir, "test.db")}`;
}

/** An upload directory and a spool directory, both empty, removed after the test file. */
export function tempUploadDirs(): { uploadDir: string; spoolDir: string } {
  const dir = mkdtempSync(join(tmpdir(), "crudkit-uploads-"));
  dirs.push(dir);
  const uploadDir = join(dir, "uploads");
  mkdirSync(uploadDir);
  return { uploadDir, spoolDir: join(dir, "spool") };
}

export interface TestResponse {
  status: number;
  headers: Headers;
  body: any;
  text: string;
}

type Handler = (request: Request) => Promise<Response>;

export async function call(
  app: { handler: Handler },
  method: string,
  path: string,
  options: { body?: unknown; headers?: Record<string, string>; rawBody?: BodyInit } = {},
): Promise<TestResponse> {
  const headers: Record<string, string> = { ...options.headers };
  let body: BodyInit | undefined = options.rawBody;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers["content-type"] ??= "application/json";
  }
  const request = new Request(`http://localhost${path}`, { method, headers, body });
  const sent = {
    headers: new Headers(request.headers),
    text: typeof body === "string" ? body : undefined,
    hasBody: body !== undefined,
  };
  const res = await readResponse(await app.handler(request));
  checkContract(app, method, path, res, sent);
  return res;
}

/** A response's status, headers and text, and its body parsed when it is JSON. */
export async function readResponse(response: Response): Promise<TestResponse> {
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  return { status: response.status, headers: response.headers, body: parsed, text };
}

/** Things that must never appear in an answer: stacks, server paths, SQL, driver names. */
export function expectNoLeak(text: string): void {
  for (const marker of [
    "    at ",
    "/work/",
    "node_modules",
    "SQLITE",
    "sqlite",
    "select ",
    "insert into",
    "Error:",
    tmpdir(),
  ]) {
    if (text.includes(marker)) throw new Error(`response leaks "${marker}": ${text}`);
  }
}

/** Pseudo-random bytes (not compressible, so nothing flatters a transfer), the same for a seed. */
export function randomBytesFor(size: number, seed = 1): Uint8Array {
  const out = new Uint8Array(size);
  let x = seed;
  for (let i = 0; i < size; i++) {
    x = (x * 1103515245 + 12345) >>> 0;
    out[i] = x >>> 24;
  }
  return out;
}

/** A loopback port nothing listens on (for the moment). */
export function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const probe = createNetServer().listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

/** Tests' identity: the caller named by the `x-user` header, checked by nobody. */
export function userFromHeader(request: Request): { id: string } | null {
  const id = request.headers.get("x-user");
  return id ? { id } : null;
}

/** Call options (or `call` options) that name the caller `id`. */
export const as = (id: string) => ({ headers: { "x-user": id } });
