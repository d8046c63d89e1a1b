// A real S3-protocol server for tests: s3rver on 127.0.0.1 with an `uploads` bucket, and a client
// configured the way non-AWS stores need.

import { mkdtempSync, rmSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { S3Client } from "@aws-sdk/client-s3";
import S3rver from "s3rver";

export async function startS3(): Promise<{ client: S3Client; close(): Promise<void> }> {
  const directory = mkdtempSync(join(tmpdir(), "crudkit-s3rver-"));
  const server = new S3rver({
    port: 0,
    address: "127.0.0.1",
    silent: true,
    directory,
    configureBuckets: [{ name: "uploads" }],
  });
  const { port } = (await server.run()) as AddressInfo;
  const client = new S3Client({
    region: "us-east-1",
    endpoint: `http://127.0.0.1:${port}`,
    forcePathStyle: true,
    credentials: { accessKeyId: "S3RVER", secretAccessKey: "S3RVER" },
    // Without these, streamed uploads reach s3rver with chunk framing in the stored bytes.
    requestChecksumCalculation: "WHEN_REQUIRED",
    responseChecksumValidation: "WHEN_REQUIRED",
  });
  return {
    client,
    async close() {
      client.destroy();
      await server.close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}
