import { describe, expect, it } from "vitest";
import { contradictsDeclaredType, sniffMimeType } from "../src/plugins/upload/sniff.ts";

const PNG = Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]);
const JPEG = Uint8Array.from([0xff, 0xd8, 0xff, 0xe0, 0, 16]);
const PDF = new TextEncoder().encode("%PDF-1.7\n");
const ZIP = Uint8Array.from([0x50, 0x4b, 0x03, 0x04, 20, 0]);
const EXE = new TextEncoder().encode("MZ\x90\x00");
const TEXT = new TextEncoder().encode("hello, world");

describe("content sniffing", () => {
  it("recognises common signatures", () => {
    expect(sniffMimeType(PNG)).toBe("image/png");
    expect(sniffMimeType(JPEG)).toBe("image/jpeg");
    expect(sniffMimeType(PDF)).toBe("application/pdf");
    expect(sniffMimeType(ZIP)).toBe("application/zip");
    expect(sniffMimeType(new TextEncoder().encode("RIFF\x10\x00\x00\x00WEBPVP8 "))).toBe("image/webp");
    expect(sniffMimeType(TEXT)).toBeUndefined();
    expect(sniffMimeType(new Uint8Array())).toBeUndefined();
  });

  it("rejects a clear mismatch with a checkable declared type", () => {
    expect(contradictsDeclaredType("image/png", EXE)).toBe(true);
    expect(contradictsDeclaredType("image/png", TEXT)).toBe(true);
    expect(contradictsDeclaredType("image/jpeg", PNG)).toBe(true);
    expect(contradictsDeclaredType("application/pdf", new Uint8Array())).toBe(true);
  });

  it("accepts matches, aliases, parameters and zip-based formats", () => {
    expect(contradictsDeclaredType("image/png", PNG)).toBe(false);
    expect(contradictsDeclaredType("IMAGE/JPG", JPEG)).toBe(false);
    expect(contradictsDeclaredType("application/pdf; version=1.7", PDF)).toBe(false);
    expect(
      contradictsDeclaredType("application/vnd.openxmlformats-officedocument.wordprocessingml.document", ZIP),
    ).toBe(false);
  });

  it("lets types that cannot be sniffed pass", () => {
    for (const declared of ["text/plain", "application/json", "text/csv", "application/octet-stream"]) {
      expect(contradictsDeclaredType(declared, TEXT)).toBe(false);
      expect(contradictsDeclaredType(declared, PNG)).toBe(false);
    }
  });
});
