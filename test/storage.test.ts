// The storage conformance suite on each adapter: local disk, memory, and S3 on a real
// S3-protocol server (s3rver on 127.0.0.1).

import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { S3Client } from "@aws-sdk/client-s3";
import { LocalStorage, MemoryStorage } from "crudkit";
import { S3Storage } from "crudkit/storage/s3";
import S3rver from "s3rver";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { storageAdapterCase } from "./storage-adapter.case.ts";

const dirs: string[] = [];
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), "crudkit-storage-"));
  dirs.push(dir);
  return dir;
};

let s3rver: S3rver;
let client: S3Client;
beforeAll(async () => {
  s3rver = new S3rver({
    port: 0,
    address: "127.0.0.1",
    silent: true,
    directory: tempDir(),
    configureBuckets: [{ name: "uploads" }],
  });
  const { port } = (await s3rver.run()) as AddressInfo;
  client = new S3Client({
    region: "us-east-1",
    endpoint: `http://127.0.0.1:${port}`,
    forcePathStyle: true,
    credentials: { accessKeyId: "S3RVER", secretAccessKey: "S3RVER" },
    // Without these, streamed uploads reach s3rver with chunk framing in the stored bytes.
    requestChecksumCalculation: "WHEN_REQUIRED",
    responseChecksumValidation: "WHEN_REQUIRED",
  });
});
afterAll(async () => {
  client?.destroy();
  await s3rver?.close();
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
