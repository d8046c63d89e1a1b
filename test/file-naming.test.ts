// Stored names cannot escape the upload directory or bucket prefix, whatever is uploaded.

import { assertPlainName } from "crudkit-api";
import { describe, expect, it } from "vitest";
import { extensionOf, sanitizeFilename, storedName } from "../src/plugins/upload/file-naming.ts";

const HOSTILE = [
  "../x",
  "..\\x",
  "../../etc/passwd",
  "/etc/passwd",
  "C:\\Windows\\win.ini",
  "%2e%2e%2f",
  "%2e%2e%2fsecret.txt",
  "..",
  ".",
  "...",
  "a\u0000b.png",
  "evil\u0000.png\u0000.exe",
  "new\nline\r\t.txt",
  "\u001b[31mred.txt",
  "x".repeat(1000),
  `${"y".repeat(1000)}.png`,
  "",
  "   ",
  ".htaccess",
  "CON.txt",
  "nul",
  "résumé.pdf",
  "名前.png",
  "a/b/../../c.txt",
];

describe("file naming", () => {
  it("sanitizes every hostile name into a plain name inside the directory", () => {
    for (const name of HOSTILE) {
      for (const naming of ["original", "uuid", (n: string) => `prefix-${n}`] as const) {
        const stored = storedName(naming, name);
        expect(
          () => assertPlainName(stored),
          `${JSON.stringify(name)} → ${JSON.stringify(stored)}`,
        ).not.toThrow();
        expect(stored).not.toMatch(/^\.|\.\.|[/\\\s]/);
        expect(stored.length).toBeLessThanOrEqual(200);
        expect(stored.length).toBeGreaterThan(0);
      }
    }
  });

  it("keeps what is safe in the original name", () => {
    expect(sanitizeFilename("report-2026_final.pdf")).toBe("report-2026_final.pdf");
    expect(sanitizeFilename("../x")).toBe("x");
    expect(sanitizeFilename("..\\x")).toBe("x");
    expect(sanitizeFilename("/etc/passwd")).toBe("passwd");
    expect(sanitizeFilename("%2e%2e%2f")).toBe("2e_2e_2f");
    expect(sanitizeFilename("a\u0000b.png")).toBe("a_b.png");
    expect(sanitizeFilename("résumé.pdf")).toBe("resume.pdf");
    expect(sanitizeFilename(".htaccess")).toBe("htaccess");
    expect(sanitizeFilename("CON.txt")).toBe("_CON.txt");
    expect(sanitizeFilename("")).toBe("file");
    expect(sanitizeFilename("..")).toBe("file");
    expect(sanitizeFilename(`${"y".repeat(1000)}.png`)).toBe(`${"y".repeat(196)}.png`);
  });

  it("uuid names take their extension from the MIME type, never the uploader's name", () => {
    expect(storedName("uuid", "Photo.PNG", "image/png")).toMatch(/^[0-9a-f-]{36}\.png$/);
    expect(storedName("uuid", "archive.tar.gz", "application/gzip")).toMatch(/^[0-9a-f-]{36}\.gz$/);
    expect(storedName("uuid", "no-extension", "image/jpeg")).toMatch(/^[0-9a-f-]{36}\.jpg$/);
    expect(storedName("uuid", "evil.p%2fhp")).toMatch(/^[0-9a-f-]{36}$/);
    expect(extensionOf(".bashrc")).toBe("");
  });

  it("issue 42 §5: promo.html declared image/gif is never stored as .html", () => {
    expect(storedName("uuid", "promo.html", "image/gif")).toMatch(/^[0-9a-f-]{36}\.gif$/);
    expect(storedName("original", "promo.html", "image/gif", "alice")).toMatch(/^u[0-9a-f]{12}_promo\.gif$/);
    expect(storedName((n) => n, "promo.html", "image/gif")).toBe("promo.gif");
    // Types a static server would run get no extension at all.
    for (const type of [
      "text/html",
      "image/svg+xml",
      "application/xhtml+xml",
      "text/javascript",
      "application/xml",
    ])
      expect(extensionOf(storedName("uuid", "x.html", type)), type).toBe("");
    // Inner extensions go: x.php.png is never x.php.anything.
    expect(storedName((n) => n, "x.php.png", "image/png")).toBe("x_php.png");
    // A name that agrees with its type is kept.
    expect(storedName("original", "photo.jpeg", "image/jpeg", "alice")).toMatch(/_photo\.jpeg$/);
  });

  it("issue 42 §11: original names live in each uploader's own namespace", () => {
    const alice = storedName("original", "notes.txt", "text/plain", "alice");
    const bob = storedName("original", "notes.txt", "text/plain", "bob");
    expect(alice).not.toBe(bob);
    expect(alice).toBe(storedName("original", "notes.txt", "text/plain", "alice"));
    expect(storedName("original", "notes.txt", "text/plain", null)).toBe("anonymous_notes.txt");
  });

  it("sanitizes what a naming function returns", () => {
    expect(storedName(() => "../../escape.sh", "a.txt", "text/plain")).toBe("escape.txt");
    expect(storedName((n) => `uploads/${n}`, "a.txt", "text/plain")).toBe("a.txt");
  });
});
