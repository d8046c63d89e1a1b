// The streaming upload parser: same result however the body is cut into chunks, and a clear
// error, early, for every malformed or oversized body.

import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { parseUploadBody, type UploadEvent } from "../src/plugins/upload/upload-body.ts";
import { randomBytesFor as bytes } from "./helpers.ts";

const encoder = new TextEncoder();

async function* chunked(text: string, sizes: () => number): AsyncIterable<Uint8Array> {
  const all = encoder.encode(text);
  for (let i = 0; i < all.length; ) {
    const n = Math.max(1, sizes());
    yield all.subarray(i, i + n);
    i += n;
  }
}

async function parse(text: string, sizes: () => number = () => 1 << 16, maxFileSize = 10 * 1024 * 1024) {
  const fields: Record<string, unknown> = {};
  const parts: Uint8Array[] = [];
  const kinds: string[] = [];
  for await (const event of parseUploadBody(chunked(text, sizes), { maxFileSize })) {
    kinds.push(event.kind);
    if (event.kind === "field") fields[event.name] = event.value;
    if (event.kind === "file-bytes") parts.push(event.bytes);
  }
  return { fields, file: Buffer.concat(parts), kinds };
}

const sha = (b: Uint8Array) => createHash("sha256").update(b).digest("hex");

describe("upload body parser", () => {
  it("decodes the file identically whatever the chunking and key order", async () => {
    for (const size of [0, 1, 2, 3, 4, 1000, 70_001]) {
      const data = bytes(size, size + 1);
      const file = Buffer.from(data).toString("base64");
      const bodies = [
        JSON.stringify({
          file,
          filename: "a.bin",
          mimeType: "application/octet-stream",
          metadata: { tag: "x", n: [1, { y: "}" }] },
        }),
        JSON.stringify({ filename: "a.bin", metadata: null, mimeType: "application/octet-stream", file }),
        ` { "mimeType" : "application/octet-stream" , "file" : "${file}" , "filename" : "a.bin" } `,
      ];
      for (const body of bodies) {
        for (const sizes of [() => 1, () => 3, () => Math.floor(Math.random() * 50), () => 1 << 16]) {
          const result = await parse(body, sizes);
          expect(sha(result.file), `${size} bytes`).toBe(sha(data));
          expect(result.fields.filename).toBe("a.bin");
          expect(result.fields.mimeType).toBe("application/octet-stream");
        }
      }
    }
  });

  it("decodes a padded file larger than a decode batch when the closing quote comes alone (regression)", async () => {
    for (const size of [300_001, 300_002, 1024 * 1024]) {
      const data = bytes(size, 9);
      const body = JSON.stringify({
        filename: "b.bin",
        mimeType: "application/octet-stream",
        file: Buffer.from(data).toString("base64"),
      });
      const quote = body.lastIndexOf('"');
      async function* split() {
        // Everything up to the padding in one chunk, then the closing quote and brace.
        yield encoder.encode(body.slice(0, quote));
        yield encoder.encode(body.slice(quote));
      }
      const parts: Uint8Array[] = [];
      for await (const event of parseUploadBody(split(), { maxFileSize: 2 * 1024 * 1024 }))
        if (event.kind === "file-bytes") parts.push(event.bytes);
      expect(sha(Buffer.concat(parts))).toBe(sha(data));
    }
  });

  it("reads metadata of any JSON shape and string escapes in names", async () => {
    const body = JSON.stringify({
      filename: 'quote"d \\ /é\u2028.txt',
      mimeType: "text/plain",
      metadata: { a: [1, "]"], b: { c: null } },
      file: "aGk=",
    });
    const result = await parse(body, () => 2);
    expect(result.fields).toEqual({
      filename: 'quote"d \\ /é\u2028.txt',
      mimeType: "text/plain",
      metadata: { a: [1, "]"], b: { c: null } },
    });
    expect(result.file.toString()).toBe("hi");
    expect(result.kinds).toEqual(["field", "field", "field", "file-start", "file-bytes", "file-end"]);
  });

  it('accepts "\\/" for "/" in the base64, as some JSON encoders write it', async () => {
    const data = Buffer.from([0xff, 0xff, 0xff, 0xfb, 0xef, 0xff]);
    const file = data.toString("base64").replace(/\//g, "\\/");
    expect(file).toContain("\\/");
    for (const sizes of [() => 1, () => 1 << 16]) {
      const result = await parse(`{"file":"${file}","filename":"x","mimeType":"a/b"}`, sizes);
      expect(result.file).toEqual(data);
    }
  });

  it("refuses a data-URL prefix, saying to strip it", async () => {
    await expect(
      parse(
        JSON.stringify({ file: "data:image/png;base64,aGk=", filename: "x", mimeType: "image/png" }),
        () => 3,
      ),
    ).rejects.toMatchObject({
      status: 400,
      code: "BAD_REQUEST",
      message: expect.stringContaining("without a data-URL prefix"),
    });
  });

  it("refuses base64 that is not strict", async () => {
    for (const file of ["aGk", "aG=k", "a Gk=", "aGk=\\n", "aGk===", "aGk*", "aGk=aGk=", "aG-k", "aG_k"]) {
      await expect(
        parse(`{"file":"${file}","filename":"x","mimeType":"a/b"}`, () => 1),
        file,
      ).rejects.toMatchObject({ status: 400, code: "BAD_REQUEST" });
    }
  });

  it("answers 413 as soon as the base64 passes the limit, before reading the rest", async () => {
    let pulled = 0;
    async function* endless() {
      yield encoder.encode('{"filename":"x","mimeType":"a/b","file":"');
      for (;;) {
        pulled++;
        yield encoder.encode("A".repeat(1024));
      }
    }
    const events = parseUploadBody(endless(), { maxFileSize: 10_000 });
    await expect(
      (async () => {
        for await (const _ of events);
      })(),
    ).rejects.toMatchObject({ status: 413, code: "PAYLOAD_TOO_LARGE" });
    expect(pulled).toBeLessThanOrEqual(15);
  });

  it("takes a file of exactly the limit, and refuses one byte more", async () => {
    const limit = 3000;
    const exact = JSON.stringify({
      file: Buffer.from(bytes(limit)).toString("base64"),
      filename: "x",
      mimeType: "a/b",
    });
    expect((await parse(exact, () => 7, limit)).file.byteLength).toBe(limit);
    const over = JSON.stringify({
      file: Buffer.from(bytes(limit + 1)).toString("base64"),
      filename: "x",
      mimeType: "a/b",
    });
    await expect(parse(over, () => 7, limit)).rejects.toMatchObject({ status: 413 });
  });

  it("refuses malformed JSON, unknown or repeated fields, and wrong types", async () => {
    const cases: [string, number, string][] = [
      ["", 400, "BAD_REQUEST"],
      ["[]", 400, "BAD_REQUEST"],
      ['{"file":"aGk=","filename":"x"', 400, "BAD_REQUEST"],
      ['{"file":"aGk="} trailing', 400, "BAD_REQUEST"],
      ['{"file":"aGk=","file":"aGk="}', 400, "BAD_REQUEST"],
      ['{"file":"aGk=","owner":"me"}', 400, "VALIDATION_ERROR"],
      ['{"file":12}', 400, "VALIDATION_ERROR"],
      ['{"filename":5,"file":"aGk="}', 400, "VALIDATION_ERROR"],
      ['{"metadata":{"a":},"file":"aGk="}', 400, "BAD_REQUEST"],
      [`{"filename":"${"x".repeat(70_000)}"}`, 400, "BAD_REQUEST"],
    ];
    for (const [body, status, code] of cases) {
      await expect(
        parse(body, () => 5),
        body.slice(0, 40),
      ).rejects.toMatchObject({ status, code });
    }
  });

  it("emits events in body order, file last when it comes last", async () => {
    const { kinds } = await parse(JSON.stringify({ filename: "x", mimeType: "a/b", file: "aGk=" }));
    expect(kinds).toEqual(["field", "field", "file-start", "file-bytes", "file-end"]);
    const events: UploadEvent["kind"][] = kinds as UploadEvent["kind"][];
    expect(events.at(-1)).toBe("file-end");
  });
});
