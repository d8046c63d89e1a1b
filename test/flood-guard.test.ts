// The default log's flood guard: a repeating message is written when it starts, summed up once a
// window while it goes on, and once when it stops; a stack once per distinct error.

import { describe, expect, it } from "vitest";
import { floodGuarded } from "../src/core/flood-guard.ts";

function guardedLines() {
  const lines: { message: string; error?: unknown }[] = [];
  let clock = 0;
  const log = floodGuarded((message, error) => lines.push({ message, error }), { now: () => clock });
  return { lines, log, advance: (ms: number) => (clock += ms) };
}

describe("flood guard", () => {
  it("1,022 occurrences in 5 s: the first with its stack, one summary, one line when it stops", () => {
    const { lines, log, advance } = guardedLines();
    const down = new Error("connect ECONNREFUSED 127.0.0.1:5432");
    for (let i = 0; i < 1023; i++) {
      log("crudkit: the database is unavailable", down);
      advance(4);
    }
    log.tick();
    advance(5000);
    log.tick();
    log.close();
    expect(lines.map((line) => line.message)).toEqual([
      "crudkit: the database is unavailable",
      "crudkit: the database is unavailable: 1,022 more times in the last 5.0 s",
      "crudkit: the database is unavailable: not seen again for 5.0 s; it went on for 4.1 s, 1,023 times in all",
    ]);
    expect(lines[0]!.error).toBe(down);
  });

  it("a stack is written once per distinct error: the next episode of the same error gets its message only", () => {
    const { lines, log, advance } = guardedLines();
    const error = new Error("connection terminated");
    log("crudkit: a PostgreSQL connection failed", error);
    log("crudkit: a PostgreSQL connection failed", error);
    advance(5000);
    log.tick();
    advance(5000);
    log.tick();
    log("crudkit: a PostgreSQL connection failed", new Error("connection terminated"));
    log("crudkit: another failure", new Error("something else"));
    log.close();
    expect(lines).toEqual([
      { message: "crudkit: a PostgreSQL connection failed", error },
      { message: "crudkit: a PostgreSQL connection failed: 1 more time in the last 5.0 s" },
      {
        message:
          "crudkit: a PostgreSQL connection failed: not seen again for 10.0 s; it went on for 0.0 s, 2 times in all",
      },
      { message: "crudkit: a PostgreSQL connection failed: Error: connection terminated" },
      { message: "crudkit: another failure", error: expect.any(Error) },
    ]);
  });

  it("one message with two different errors: each error written once, with its stack; the rest counted", () => {
    const { lines, log } = guardedLines();
    const first = new Error("null is not an object");
    const second = new TypeError("x.map is not a function");
    log("crudkit: the server could not complete the request", first, { requestId: "r1" });
    log("crudkit: the server could not complete the request", first, { requestId: "r2" });
    log("crudkit: the server could not complete the request", second, { requestId: "r3" });
    log.close();
    expect(lines).toEqual([
      { message: "crudkit: the server could not complete the request", error: first },
      { message: "crudkit: the server could not complete the request", error: second },
      { message: "crudkit: the server could not complete the request: 1 more time" },
    ]);
  });

  it("a message that comes once is written once, and nothing closes it", () => {
    const { lines, log, advance } = guardedLines();
    log("crudkit: pruning audit logs failed", "disk full");
    advance(5000);
    log.tick();
    advance(5000);
    log.tick();
    log.close();
    expect(lines).toEqual([{ message: "crudkit: pruning audit logs failed", error: "disk full" }]);
  });

  it("different messages are guarded apart; close() writes the counts still unwritten", () => {
    const { lines, log } = guardedLines();
    for (let i = 0; i < 3; i++) {
      log("a");
      log("b");
    }
    log.close();
    expect(lines.map((line) => line.message)).toEqual(["a", "b", "a: 2 more times", "b: 2 more times"]);
  });
});
