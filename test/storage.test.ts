// The storage conformance suite on each adapter: local disk, memory, and S3 on a real
// S3-protocol server (s3rver on 127.0.0.1).

import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LocalStorage, MemoryStorage } from "crudkit-api";
import { S3Storage } from "crudkit-api/storage/s3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startS3 } from "./s3-server.ts";
import { storageAdapterCase } from "./storage-adapter.case.ts";

const dirs: string[] = [];
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), "crudkit-storage-"));
  dirs.push(dir);
  return dir;
};

let s3: Awaited<ReturnType<typeof startS3>>;
let client: Awaited<ReturnType<typeof startS3>>["client"];
beforeAll(async () => {
  s3 = await startS3();
  client = s3.client;
});
afterAll(async () => {
  await s3?.close();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

let prefixes = 0;
storageAdapterCase("local", () => new LocalStorage(tempDir(), "/uploads"));
storageAdapterCase("memory", () => new MemoryStorage());
storageAdapterCase(
  "s3 (s3rver)",
  () => new S3Storage({ client, bucket: "uploads", prefix: `run-${prefixes++}/` }),
);

describe("local storage specifics", () => {
  it("leaves no temporary file behind, even when the source fails halfway", async () => {
    const dir = tempDir();
    const adapter = new LocalStorage(dir);
    async function* failing() {
      yield new Uint8Array(1000);
      throw new Error("client went away");
    }
    await expect(
      adapter.store(failing(), "half.bin", { mimeType: "application/octet-stream" }),
    ).rejects.toThrow("client went away");
    await adapter.store(new Uint8Array(10), "whole.bin", { mimeType: "application/octet-stream" });
    expect(readdirSync(dir)).toEqual(["whole.bin"]);
  });

  it("gives URLs under its base URL, encoded", async () => {
    const adapter = new LocalStorage(tempDir(), "https://cdn.example/uploads/");
    expect(adapter.getUrl("a b.png")).toBe("https://cdn.example/uploads/a%20b.png");
    expect(new LocalStorage(tempDir()).getUrl("a.png")).toBeUndefined();
  });
});

describe("s3 storage specifics", () => {
  it("keeps objects under its prefix and gives URLs under its base URL", async () => {
    const adapter = new S3Storage({
      client,
      bucket: "uploads",
      prefix: "tenant-a/",
      baseUrl: "https://files.example",
    });
    await adapter.store(new Uint8Array([1, 2, 3]), "x.bin", { mimeType: "application/octet-stream" });
    const other = new S3Storage({ client, bucket: "uploads", prefix: "tenant-b/" });
    expect(await other.exists("x.bin")).toBe(false);
    expect(adapter.getUrl("x.bin")).toBe("https://files.example/tenant-a/x.bin");
  });
});
