// 2,000 rejected uploads at concurrency 4, of every kind of rejection (early and mid-stream,
// name-first and file-first, validation, size, broken base64, clients that vanish) against a served
// app: afterwards neither the upload directory nor the spool directory holds a single file. And what
// a process killed mid-upload left (its names carry its tag) goes at the next start, at once.

import { execFileSync, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { join } from "node:path";
import { crudkit } from "crudkit-api";
import { type RunningServer, serve } from "crudkit-api/node";
import { upload } from "crudkit-api/plugins";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PROCESS_TAG, tagEnded } from "../src/storage/local/process-tag.ts";
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

describe("what a killed process left is swept at the next start", () => {
  /** The tag of a process of this machine that has ended: a child that prints its own, then exits. */
  const PRINT_TAG = 'import("./src/storage/local/process-tag.ts").then((m) => console.log(m.PROCESS_TAG))';
  const endedTag = () =>
    execFileSync(process.execPath, ["--import", "tsx", "-e", PRINT_TAG], { encoding: "utf8" }).trim();
  /** Another process of this machine that still runs (another instance), and its tag. */
  const runningProcess = async () => {
    const child = spawn(process.execPath, [
      "--import",
      "tsx",
      "-e",
      `${PRINT_TAG}.then(() => setInterval(() => {}, 1000))`,
    ]);
    const tag = await new Promise<string>((resolve) =>
      child.stdout.once("data", (chunk) => resolve(String(chunk).trim())),
    );
    return { tag, stop: () => child.kill("SIGKILL") };
  };

  it("its spool files, storage temporaries and stored files no record holds go at once; a running process's and recorded files stay", async () => {
    const { uploadDir, spoolDir } = tempUploadDirs();
    mkdirSync(spoolDir, { recursive: true });
    const url = tempDatabaseUrl();
    const plugins = () => [upload({ uploadDir, spoolDir, access: ALL })];
    // A file with its record, made through the API.
    const first = crudkit({
      database: { provider: "sqlite", url },
      autoMigrate: true,
      resources: [],
      plugins: plugins(),
    });
    const made = await first.handler(
      new Request("http://localhost/api/upload/file", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ filename: "kept.png", mimeType: "image/png", file: PNG.toString("base64") }),
      }),
    );
    expect(made.status).toBe(201);
    const kept = (await made.json()) as { filename: string };
    await first.close();

    const dead = endedTag();
    expect(dead).toMatch(/^[0-9a-f]{8}\.\d+\.[0-9a-z]+$/);
    // What the ended process left: a spooled upload, a temporary, and a note naming a stored file
    // with no record, and the recorded one (a name it found taken).
    writeFileSync(join(spoolDir, `crudkit-upload-${dead}-${randomUUID()}`), "spooled");
    writeFileSync(join(uploadDir, `.tmp-${dead}-${randomUUID()}`), "half written");
    writeFileSync(join(uploadDir, "orphan.png"), PNG);
    // A name asked for, not sure to be the upload's (original names): another upload may hold it.
    writeFileSync(join(uploadDir, "maybe.png"), PNG);
    writeFileSync(
      join(spoolDir, `crudkit-storing-${dead}-${randomUUID()}`),
      JSON.stringify([
        { name: "orphan.png", sure: true },
        { name: kept.filename, sure: true },
        { name: "maybe.png", sure: false },
      ]),
    );
    // A note cut short while written (and its next version, half written), and hostile ones: none
    // may remove anything else.
    writeFileSync(join(spoolDir, `crudkit-storing-${dead}-${randomUUID()}`), '[{"name":"orph');
    writeFileSync(join(spoolDir, `crudkit-storing-${dead}-${randomUUID()}.next`), '[{"name":"maybe.png","su');
    writeFileSync(
      join(spoolDir, `crudkit-storing-${dead}-${randomUUID()}`),
      JSON.stringify([
        { name: "../../etc/passwd", sure: true },
        { name: { a: 1 }, sure: true },
        { name: "x\u0000y", sure: true },
        "maybe.png",
        null,
      ]),
    );
    // What running processes (this one, and another instance on the machine) are writing: it stays.
    const other = await runningProcess();
    const live = [
      `crudkit-upload-${PROCESS_TAG}-${randomUUID()}`,
      `crudkit-upload-${other.tag}-${randomUUID()}`,
    ];
    for (const name of live) writeFileSync(join(spoolDir, name), "in flight");
    const liveTemporaries = [`.tmp-${PROCESS_TAG}-${randomUUID()}`, `.tmp-${other.tag}-${randomUUID()}`];
    for (const name of liveTemporaries) writeFileSync(join(uploadDir, name), "in flight");
    // An untagged name of an older version, young: it waits for the hour.
    const untagged = `crudkit-upload-${randomUUID()}`;
    writeFileSync(join(spoolDir, untagged), "old format");

    const restarted = crudkit({
      database: { provider: "sqlite", url },
      autoMigrate: true,
      resources: [],
      plugins: plugins(),
    });
    await restarted.ready;
    try {
      expect(readdirSync(uploadDir).sort()).toEqual([...liveTemporaries, kept.filename, "maybe.png"].sort());
      expect(readdirSync(spoolDir).sort()).toEqual([...live, untagged].sort());
    } finally {
      other.stop();
      await restarted.close();
    }
  });

  it("a tag of this process, of another machine, or of no process is never taken for an ended one", () => {
    expect(tagEnded(PROCESS_TAG)).toBe(false);
    const [host, pid] = PROCESS_TAG.split(".");
    expect(tagEnded(`${host}.${pid}.0`)).toBe(true); // this pid, an earlier start: a restart's predecessor
    expect(tagEnded(`00000000.${pid}.0`)).toBe(false);
    for (const tag of ["", "x", `${host}.abc.1`, `${host}.1`, `${host}.99999999999.1`, "../../x"])
      expect(tagEnded(tag), tag).toBe(false);
  });
});
