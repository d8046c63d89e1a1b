// One conformance suite for every StorageAdapter: what each must do, checked the same way.

import { createHash } from "node:crypto";
import type { StorageAdapter } from "crudkit-api";
import { describe, expect, it } from "vitest";
import { randomBytesFor as bytes } from "./helpers.ts";

const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");
const text = (value: string) => new TextEncoder().encode(value);

async function readAll(stream: ReadableStream<Uint8Array>): Promise<Uint8Array> {
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

export function storageAdapterCase(name: string, make: () => StorageAdapter | Promise<StorageAdapter>) {
  describe(`storage adapter: ${name}`, () => {
    it("stores bytes and gives them back identical", async () => {
      const adapter = await make();
      const data = bytes(70_000);
      const stored = await adapter.store(data, "photo.png", { mimeType: "image/png" });
      expect(stored.path).toBe("photo.png");
      expect(await adapter.exists(stored.path)).toBe(true);
      expect(sha256(await adapter.retrieve(stored.path))).toBe(sha256(data));
    });

    it("stores a stream larger than one S3 part, in bounded pieces", async () => {
      const adapter = await make();
      const data = bytes(12 * 1024 * 1024 + 17, 7);
      async function* pieces() {
        for (let offset = 0; offset < data.length; offset += 64 * 1024)
          yield data.subarray(offset, offset + 64 * 1024);
      }
      const stored = await adapter.store(pieces(), "big.bin", { mimeType: "application/octet-stream" });
      expect(sha256(await adapter.retrieve(stored.path))).toBe(sha256(data));
      const web = await adapter.store(
        new Blob([Uint8Array.from(data.subarray(0, 1000))]).stream(),
        "web.bin",
        { mimeType: "application/octet-stream" },
      );
      expect(sha256(await adapter.retrieve(web.path))).toBe(sha256(data.subarray(0, 1000)));
    });

    it("never overwrites: a taken name gets a suffix", async () => {
      const adapter = await make();
      const first = await adapter.store(text("first"), "notes.txt", { mimeType: "text/plain" });
      const second = await adapter.store(text("second"), "notes.txt", { mimeType: "text/plain" });
      const third = await adapter.store(text("third"), "notes.txt", { mimeType: "text/plain" });
      expect([first.path, second.path, third.path]).toEqual(["notes.txt", "notes-1.txt", "notes-2.txt"]);
      expect(new TextDecoder().decode(await adapter.retrieve("notes.txt"))).toBe("first");
      expect(new TextDecoder().decode(await adapter.retrieve("notes-1.txt"))).toBe("second");
    });

    it("streams a file and a byte range of it", async () => {
      const adapter = await make();
      const data = bytes(10_000, 3);
      const { path } = await adapter.store(data, "range.bin", { mimeType: "application/octet-stream" });
      expect(adapter.read).toBeTypeOf("function");
      const whole = await adapter.read!(path);
      expect(whole?.size).toBe(10_000);
      expect(sha256(await readAll(whole!.body))).toBe(sha256(data));
      const part = await adapter.read!(path, { start: 100, end: 199 });
      expect(await readAll(part!.body)).toEqual(data.subarray(100, 200));
      expect(await adapter.read!("missing.bin")).toBeUndefined();
      expect(await adapter.size!(path)).toBe(10_000);
    });

    it("deletes; a missing file does not exist and deleting it again is fine", async () => {
      const adapter = await make();
      const { path } = await adapter.store(text("bye"), "gone.txt", { mimeType: "text/plain" });
      await adapter.delete(path);
      expect(await adapter.exists(path)).toBe(false);
      await expect(adapter.retrieve(path)).rejects.toThrow();
      await adapter.delete(path);
      expect(await adapter.exists("never-stored.txt")).toBe(false);
    });

    it("refuses names that could leave its directory or bucket prefix", async () => {
      const adapter = await make();
      for (const unsafe of [
        "../x",
        "..\\x",
        "/etc/passwd",
        "a/b",
        "C:\\x",
        "..",
        ".",
        "",
        "a\u0000b",
        "a\nb",
        "x".repeat(256),
      ]) {
        await expect(
          adapter.store(text("no"), unsafe, { mimeType: "text/plain" }),
          JSON.stringify(unsafe),
        ).rejects.toThrow(/unsafe name/);
        await expect(adapter.exists(unsafe)).rejects.toThrow(/unsafe name/);
      }
    });
  });
}
