// 2,000 rejected uploads at concurrency 4, of every kind of rejection (early and mid-stream,
// name-first and file-first, validation, size, broken base64, clients that vanish) against a served
// app: afterwards neither the upload directory nor the spool directory holds a single file.

import { readdirSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { crudkit } from "crudkit-api";
import { type RunningServer, serve } from "crudkit-api/node";
import { upload } from "crudkit-api/plugins";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { randomBytesFor, tempDatabaseUrl, tempUploadDirs } from "./helpers.ts";

const ALL = { upload: true, read: true, download: true, delete: true, list: true } as const;
const PNG_HEAD = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const TEXT = Buffer.from("plain text, not an image ".repeat(1600)); // 40 KB
const PNG = Buffer.concat([PNG_HEAD, randomBytesFor(40_000, 7)]);

/** Each kind of rejected upload: the body, and the status it must get. */
const KINDS: { name: string; body: () => string; status: number }[] = [
  {
    name: "type not allowed, name first",
    body: () => JSON.stringify({ filename: "a.gif", mimeType: "image/gif", file: PNG.toString("base64") }),
    status: 415,
  },
  {
    name: "content contradicts the type, name first (stored, then removed)",
    body: () => JSON.stringify({ filename: "a.png", mimeType: "image/png", file: TEXT.toString("base64") }),
    status: 415,
  },
  {
    name: "type not allowed, file first (spooled)",
    body: () => `{"file":"${PNG.toString("base64")}","filename":"a.gif","mimeType":"image/gif"}`,
    status: 415,
  },
  {
    name: "content contradicts the type, file first (spooled)",
    body: () => `{"file":"${TEXT.toString("base64")}","filename":"a.png","mimeType":"image/png"}`,
    status: 415,
  },
  {
    name: "refused by validate after storing",
    body: () =>
      JSON.stringify({ filename: "reject.png", mimeType: "image/png", file: PNG.toString("base64") }),
    status: 400,
  },
  {
    name: "file first, refused by validate",
    body: () => `{"file":"${PNG.toString("base64")}","filename":"reject.png","mimeType":"image/png"}`,
    status: 400,
  },
  {
    name: "broken base64 after the first chunks",
    body: () => {
      const b64 = PNG.toString("base64");
      return `{"filename":"a.png","mimeType":"image/png","file":"${b64.slice(0, 40_000)}!!!!${b64.slice(40_004)}"}`;
    },
    status: 400,
  },
  {
    name: "over maxFileSize mid-stream",
    body: () =>
      JSON.stringify({
        filename: "big.png",
        mimeType: "image/png",
        file: Buffer.concat([PNG, PNG]).toString("base64"),
      }),
    status: 413,
  },
  {
    name: "bad metadata after the file",
    body: () =>
      `{"filename":"a.png","mimeType":"image/png","file":"${PNG.toString("base64")}","metadata":{"x":"\\u0000"}}`,
    status: 400,
  },
];

describe("rejected uploads leave no file", () => {
  let server: RunningServer;
  let uploadDir: string;
  let spoolDir: string;
  beforeAll(async () => {
    ({ uploadDir, spoolDir } = tempUploadDirs());
    const app = crudkit({
      database: { provider: "sqlite", url: tempDatabaseUrl() },
      autoMigrate: true,
      resources: [],
      plugins: [
        upload({
          uploadDir,
          spoolDir,
          access: ALL,
          maxFileSize: 60_000,
          allowedMimeTypes: ["image/png", "text/plain"],
          validate: (file) => !file.filename.startsWith("reject"),
        }),
      ],
    });
    server = await serve(app, { port: 0 });
  });
  afterAll(() => server?.close());

  /** Sends half the body, then goes away. */
  const vanish = (body: string) =>
    new Promise<void>((resolve) => {
      const url = new URL(`${server.url}/api/upload/file`);
      const req = httpRequest({
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: "POST",
        headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) },
      });
      req.on("error", () => resolve());
      req.write(body.slice(0, body.length / 2), () =>
        setTimeout(() => {
          req.destroy();
          resolve();
        }, 5),
      );
    });

  it("2,000 rejected uploads at concurrency 4: 0 files in the upload or spool directory", async () => {
    const bodies = KINDS.map((kind) => ({ ...kind, text: kind.body() }));
    const wrong: string[] = [];
    let sent = 0;
    const worker = async () => {
      while (sent < 2000) {
        const n = sent++;
        const kind = bodies[n % bodies.length]!;
        // Every 25th client disconnects halfway instead.
        if (n % 25 === 24) {
          await vanish(kind.text);
          continue;
        }
        const response = await fetch(`${server.url}/api/upload/file`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: kind.text,
        });
        const body = (await response.json()) as { code?: string };
        if (response.status !== kind.status || !body.code) wrong.push(`${kind.name}: ${response.status}`);
      }
    };
    await Promise.all([worker(), worker(), worker(), worker()]);
    expect(wrong).toEqual([]);
    // Disconnected clients are cleaned up as their request ends; give the last ones a moment.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(readdirSync(uploadDir)).toEqual([]);
    expect(readdirSync(spoolDir)).toEqual([]);
    const list = await fetch(`${server.url}/api/upload/files`);
    expect(((await list.json()) as { pagination: { total: number } }).pagination.total).toBe(0);
  }, 120_000);
});
