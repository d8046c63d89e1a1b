// The admin page's CSV (src/admin/ui/csv.ts): what it writes is read back the same, a formula
// never runs in the reader's spreadsheet, and hostile files parse into plain cells.

import { describe, expect, it } from "vitest";
import { csvLine, parseCsv } from "../src/admin/ui/csv.ts";

describe("admin CSV", () => {
  it("writes quotes, commas and line breaks so they read back as they were", () => {
    const values = ['say "hi"', "a,b", "two\nlines", "plain", "", 12, true, null];
    const text = csvLine(["h1", "h2", "h3", "h4", "h5", "h6", "h7", "h8"]) + csvLine(values);
    expect(parseCsv(text)).toEqual([
      ["h1", "h2", "h3", "h4", "h5", "h6", "h7", "h8"],
      ['say "hi"', "a,b", "two\nlines", "plain", "", "12", "true", ""],
    ]);
  });

  it("never writes a cell a spreadsheet would run as a formula", () => {
    for (const formula of ['=HYPERLINK("http://x")', "+1+1", "-2+3", "@SUM(A1)", "\t=1", "\r=1"]) {
      const [cell] = parseCsv(csvLine([formula]))[0]!;
      expect(cell, formula).toBe(`'${formula}`);
    }
    // Numbers stay numbers: a negative price is not a formula.
    expect(csvLine([-5])).toBe("-5\r\n");
  });

  it("reads CRLF, LF, a last line without a break, blank lines, NUL bytes and a huge cell", () => {
    expect(parseCsv("a,b\r\n1,2\n3,4")).toEqual([
      ["a", "b"],
      ["1", "2"],
      ["3", "4"],
    ]);
    expect(parseCsv("a\n\n\nb\n")).toEqual([["a"], ["b"]]);
    expect(parseCsv("x\u0000y,z")).toEqual([["x\u0000y", "z"]]);
    const huge = "x".repeat(1_000_000);
    expect(parseCsv(`"${huge}",1`)[0]![0]).toHaveLength(1_000_000);
    // An unterminated quote keeps the rest as one cell rather than throwing.
    expect(parseCsv('"open,1\n2')).toEqual([["open,1\n2"]]);
  });
});
