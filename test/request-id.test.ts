// Request ids: every answer names its request in `X-Request-Id` (the caller's, when it is a sane
// token, else a new one), a 5xx carries it in its body for the user to quote, and the log line of
// that failure names it, on SQLite and PostgreSQL, through app.handler and a real server.

import { crudkit } from "crudkit-api";
import { serve } from "crudkit-api/node";
import { describe, expect, it, vi } from "vitest";
import { forEachDialect } from "./dialects.ts";
import { failing, openProduct } from "./fixtures.ts";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe("request ids", () => {
  forEachDialect(
    (dialect) => {
      it("a sane X-Request-Id is echoed; anything else is replaced by a new UUID", async () => {
        const app = crudkit({ database: await dialect.fresh(), autoMigrate: true, resources: [openProduct] });
        await app.ready;
        try {
          const ask = (id?: string, method = "GET") =>
            app.handler(
              new Request("http://localhost/api/product", {
                method,
                headers: id === undefined ? {} : { "x-request-id": id },
              }),
            );
          for (const sane of [
            "abc-123",
            "A.b_C-9",
            "x".repeat(128),
            "00-4bf92f3577b34da6a3ce929d0e0e4736-01",
          ])
            expect((await ask(sane)).headers.get("x-request-id")).toBe(sane);
          const hostile = [
            "",
            "x".repeat(129),
            "two words",
            "line\tbreak",
            "ünïcode",
            "a,b",
            "'; drop table product; --",
            "%0d%0aSet-Cookie: x=1",
            "../../etc/passwd",
            '{"json":1}',
          ];
          for (const id of [undefined, ...hostile]) {
            const answered = (await ask(id)).headers.get("x-request-id");
            expect(answered, String(id)).toMatch(UUID);
          }
          // Two requests without one get two ids; HEAD and errors are named too.
          const [a, b] = await Promise.all([ask(), ask()]);
          expect(a!.headers.get("x-request-id")).not.toBe(b!.headers.get("x-request-id"));
          expect((await ask("head-1", "HEAD")).headers.get("x-request-id")).toBe("head-1");
          const missing = await app.handler(
            new Request("http://localhost/api/product/nope", { headers: { "x-request-id": "missing-1" } }),
          );
          expect(missing.status).toBe(404);
          expect(missing.headers.get("x-request-id")).toBe("missing-1");
          // A 4xx body is the caller's own mistake: no id in it.
          expect(await missing.json()).not.toHaveProperty("requestId");
        } finally {
          await app.close();
        }
      });

      it("a 500 carries the id in its body and header; the log line of its cause names it", async () => {
        const logged: { message: string; requestId?: string }[] = [];
        const app = crudkit({
          database: await dialect.fresh(),
          autoMigrate: true,
          resources: [failing],
          log: (message, _error, fields) => logged.push({ message, requestId: fields?.requestId }),
        });
        const server = await serve(app, { port: 0 });
        try {
          const response = await fetch(`${server.url}/api/failing`, {
            method: "POST",
            headers: { "content-type": "application/json", "x-request-id": "quote-me-42" },
            body: JSON.stringify({ name: "x" }),
          });
          expect(response.status).toBe(500);
          expect(response.headers.get("x-request-id")).toBe("quote-me-42");
          const body = await response.json();
          expect(body).toEqual({
            code: "INTERNAL_ERROR",
            message: expect.any(String),
            requestId: "quote-me-42",
          });
          expect(JSON.stringify(body)).not.toContain("/srv/app");
          expect(logged).toContainEqual({ message: expect.any(String), requestId: "quote-me-42" });
          // A made-up id when the caller gives none, the same in header, body and log.
          const unnamed = await fetch(`${server.url}/api/failing`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ name: "y" }),
          });
          const id = unnamed.headers.get("x-request-id");
          expect(id).toMatch(UUID);
          expect((await unnamed.json()).requestId).toBe(id);
          expect(logged.at(-1)?.requestId).toBe(id);
        } finally {
          await server.close();
          await app.close();
        }
      });
    },
    ["sqlite", "postgres", "mysql"],
  );

  it("the default log writes the request's id after the message", async () => {
    const written: string[] = [];
    const spy = vi.spyOn(console, "error").mockImplementation((line: unknown) => {
      written.push(String(line));
    });
    const app = crudkit({
      database: { provider: "sqlite", url: ":memory:" },
      autoMigrate: true,
      resources: [failing],
    });
    try {
      await app.ready;
      await app.handler(
        new Request("http://localhost/api/failing", {
          method: "POST",
          headers: { "content-type": "application/json", "x-request-id": "stderr-7" },
          body: JSON.stringify({ name: "z" }),
        }),
      );
      expect(written.some((line) => line.endsWith("(request stderr-7)"))).toBe(true);
    } finally {
      await app.close();
      spy.mockRestore();
    }
  });
});
