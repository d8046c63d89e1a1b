// The app served on a real socket on 127.0.0.1: serve(), toNodeListener(), limits over the wire.

import { createServer, request as httpRequest } from "node:http";
import type { AddressInfo } from "node:net";
import { crudkit, type DatabaseOptions } from "crudkit-api";
import { toNodeListener } from "crudkit-api/node";
import { describe, expect, it } from "vitest";
import { forEachDialect, servedPerDialect } from "./dialects.ts";
import { openProduct } from "./fixtures.ts";

const makeApp = (database: DatabaseOptions) =>
  crudkit({ database, autoMigrate: true, resources: [openProduct], bodyLimit: 64 * 1024 });

forEachDialect((dialect) => {
  const served = servedPerDialect(dialect, makeApp);

  const post = (body: unknown) =>
    fetch(`${served.server.url}/api/product`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });

  describe("serve()", () => {
    it("listens on 127.0.0.1 and answers the CRUD routes", async () => {
      expect(served.server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const created = await post({ name: "Hat", price: 5 });
      expect(created.status).toBe(201);
      const record = (await created.json()) as { id: string };
      const read = await fetch(`${served.server.url}/api/product/${record.id}`);
      expect(read.headers.get("content-type")).toBe("application/json");
      expect(await read.json()).toEqual(record);
    });

    it("lands 200 concurrent creates, every one", async () => {
      const before = (
        (await (await fetch(`${served.server.url}/api/products`)).json()) as { pagination: { total: number } }
      ).pagination.total;
      const responses = await Promise.all(
        Array.from({ length: 200 }, (_, i) => post({ name: `Concurrent ${i}`, price: i })),
      );
      expect(responses.map((r) => r.status)).toEqual(Array(200).fill(201));
      const ids = new Set(
        await Promise.all(responses.map(async (r) => ((await r.json()) as { id: string }).id)),
      );
      expect(ids.size).toBe(200);
      const after = (
        (await (await fetch(`${served.server.url}/api/products`)).json()) as { pagination: { total: number } }
      ).pagination.total;
      expect(after - before).toBe(200);
    });

    it("answers 413 to a chunked body over the limit and stays up", async () => {
      const { status, body } = await rawRequest(served.server.url, (req) => {
        req.setHeader("content-type", "application/json");
        req.setHeader("transfer-encoding", "chunked");
        req.write('{"name":"');
        for (let i = 0; i < 200; i++) req.write("x".repeat(1024));
        req.end('","price":1}');
      });
      expect(status).toBe(413);
      expect(JSON.parse(body).code).toBe("PAYLOAD_TOO_LARGE");
      expect((await post({ name: "still up", price: 1 })).status).toBe(201);
    });

    it("answers 413 to a declared length over the limit", async () => {
      const big = JSON.stringify({ name: "x".repeat(100 * 1024), price: 1 });
      const response = await post(JSON.parse(big));
      expect(response.status).toBe(413);
    });

    it("answers malformed JSON over the wire with 400", async () => {
      const response = await fetch(`${served.server.url}/api/product`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: "{oops",
      });
      expect(response.status).toBe(400);
      expect(await response.json()).toEqual({
        code: "BAD_REQUEST",
        message: "The request body is not valid JSON.",
      });
    });
  });

  describe("toNodeListener()", () => {
    it("plugs into http.createServer", async () => {
      const plain = createServer(toNodeListener(served.app));
      await new Promise<void>((resolve) => plain.listen(0, "127.0.0.1", resolve));
      const { port } = plain.address() as AddressInfo;
      const response = await fetch(`http://127.0.0.1:${port}/api/products?limit=1`);
      expect(response.status).toBe(200);
      expect(((await response.json()) as { pagination: { limit: number } }).pagination.limit).toBe(1);
      await new Promise<void>((resolve) => plain.close(() => resolve()));
    });
  });
});

function rawRequest(
  base: string,
  write: (req: ReturnType<typeof httpRequest>) => void,
): Promise<{ status: number; body: string }> {
  const url = new URL(`${base}/api/product`);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: url.hostname, port: url.port, path: url.pathname, method: "POST" },
      (res) => {
        let body = "";
        res.on("data", (chunk) => (body += chunk));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    // The server may answer and close before the whole body is sent; that is the point.
    req.on("error", (error) =>
      (error as NodeJS.ErrnoException).code === "EPIPE" ? undefined : reject(error),
    );
    write(req);
  });
}
