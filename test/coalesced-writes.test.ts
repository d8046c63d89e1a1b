// serve() writes the complete answers of one event-loop turn together, all but the first
// (coalescingResponse). The rules are tested with every answer held; what must not change for a
// client: every answer arrives, whole and in order (pipelined ones too),
// streamed answers still stream, end()'s callback and 'finish' still come, a client that left is
// no error, and mistakes (writing after end) are reported as Node reports them.

import { once } from "node:events";
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from "node:http";
import { type AddressInfo, connect } from "node:net";
import { crudkit } from "crudkit-api";
import { serve } from "crudkit-api/node";
import { afterAll, describe, expect, it } from "vitest";
import { type CoalescePolicy, coalescingResponse } from "../src/node/coalescing-response.ts";
import { openProduct } from "./fixtures.ts";
import { tempDatabaseUrl } from "./helpers.ts";

/** A bare Node server whose answers are held (all, or all but a turn's first), with this handler. */
async function bareServer(
  handler: (req: IncomingMessage, res: ServerResponse) => void,
  policy: CoalescePolicy = "always",
) {
  const server = createServer({ ServerResponse: coalescingResponse(policy) }, handler);
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  return { server, port, close: () => new Promise((resolve) => server.close(resolve)) };
}

/** Sends raw bytes on one connection; what comes back until `done` says enough or the server closes. */
function rawExchange(port: number, bytes: string, done: (text: string) => boolean): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1", () => socket.write(bytes));
    let text = "";
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => {
      text += chunk;
      if (done(text)) {
        socket.destroy();
        resolve(text);
      }
    });
    socket.on("error", reject);
    socket.on("close", () => resolve(text));
    socket.setTimeout(5000, () => reject(new Error(`no full answer; got: ${text}`)));
  });
}

describe("coalescingResponse()", () => {
  it("answers pipelined requests on one connection, each whole and in order", async () => {
    const bare = await bareServer((req, res) => {
      // Out of order on purpose: the third is ready before the first.
      const delay = req.url === "/1" ? 30 : req.url === "/2" ? 10 : 0;
      setTimeout(() => {
        res.writeHead(200, { "content-type": "text/plain" });
        res.end(`answer ${req.url}`);
      }, delay);
    });
    try {
      const request = (path: string) => `GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`;
      const text = await rawExchange(bare.port, request("/1") + request("/2") + request("/3"), (t) =>
        t.includes("answer /3"),
      );
      const bodies = [...text.matchAll(/answer \/\d/g)].map((m) => m[0]);
      expect(bodies).toEqual(["answer /1", "answer /2", "answer /3"]);
    } finally {
      await bare.close();
    }
  });

  it("streams an answer that writes before it ends, and calls end()'s callback and 'finish'", async () => {
    let finished = false;
    let calledBack = false;
    let release: () => void = () => {};
    const bare = await bareServer((_req, res) => {
      res.writeHead(200, { "content-type": "text/plain" });
      res.write("first;");
      res.on("finish", () => (finished = true));
      release = () => res.end("last", () => (calledBack = true));
    });
    try {
      const firstPart = await new Promise<string>((resolve, reject) => {
        const req = httpRequest(`http://127.0.0.1:${bare.port}/`, (res) => {
          res.setEncoding("utf8");
          let text = "";
          res.on("data", (chunk: string) => {
            text += chunk;
            if (text === "first;") {
              // The first part came while the answer is still open: it was not held.
              resolve(text);
              release();
            }
          });
        });
        req.on("error", reject);
        req.end();
      });
      expect(firstPart).toBe("first;");
      await new Promise((r) => setTimeout(r, 50));
      expect(calledBack).toBe(true);
      expect(finished).toBe(true);
    } finally {
      await bare.close();
    }
  });

  it("keeps the first end() when end() is called twice, and reports a write after end as Node does", async () => {
    const errors: string[] = [];
    const bare = await bareServer((_req, res) => {
      res.writeHead(200, { "content-type": "text/plain" });
      res.end("once");
      res.end("twice");
      res.on("error", (error) => errors.push((error as NodeJS.ErrnoException).code ?? "?"));
      res.write("late", (error) =>
        errors.push(error ? ((error as NodeJS.ErrnoException).code ?? "?") : "none"),
      );
    });
    try {
      const response = await fetch(`http://127.0.0.1:${bare.port}/`);
      expect(await response.text()).toBe("once");
      await new Promise((r) => setTimeout(r, 20));
      expect(errors).toContain("ERR_STREAM_WRITE_AFTER_END");
    } finally {
      await bare.close();
    }
  });

  it("leaves an answer Node refuses as it writes to its caller, and still sends the others", async () => {
    const refused: string[] = [];
    const bare = await bareServer((req, res) => {
      if (req.url === "/bad") {
        // Node refuses a body longer than the length announced, and throws to whoever ends it.
        res.strictContentLength = true;
        res.writeHead(200, { "content-length": "2" });
        try {
          res.end("too long");
        } catch (error) {
          refused.push((error as NodeJS.ErrnoException).code ?? "?");
          res.destroy();
        }
        return;
      }
      res.writeHead(200, { "content-type": "text/plain" });
      res.end("fine");
    });
    try {
      const [bad, good] = await Promise.allSettled([
        fetch(`http://127.0.0.1:${bare.port}/bad`).then((r) => r.text()),
        fetch(`http://127.0.0.1:${bare.port}/good`).then((r) => r.text()),
      ]);
      expect(refused).toEqual(["ERR_HTTP_CONTENT_LENGTH_MISMATCH"]);
      expect(bad.status).toBe("rejected");
      expect(good).toEqual({ status: "fulfilled", value: "fine" });
      expect(await (await fetch(`http://127.0.0.1:${bare.port}/after`)).text()).toBe("fine");
    } finally {
      await bare.close();
    }
  });

  it("as serve() uses it: writes the first answer of a turn at once, holds the others of that turn", async () => {
    const heldAtEnd: Record<string, boolean> = {};
    const bare = await bareServer((req, res) => {
      res.writeHead(200, { "content-type": "text/plain" });
      res.end(`answer ${req.url}`);
      heldAtEnd[req.url ?? ""] = !res.writableEnded;
    }, "after-first");
    try {
      // Three pipelined requests arrive in one read, so their answers end in the same turn.
      const request = (path: string) => `GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`;
      const text = await rawExchange(bare.port, request("/a") + request("/b") + request("/c"), (t) =>
        t.includes("answer /c"),
      );
      expect([...text.matchAll(/answer \/\w/g)].map((m) => m[0])).toEqual([
        "answer /a",
        "answer /b",
        "answer /c",
      ]);
      // A lone request in its own turn: written at once.
      expect(await (await fetch(`http://127.0.0.1:${bare.port}/lone`)).text()).toBe("answer /lone");
      expect(heldAtEnd).toEqual({ "/a": false, "/b": true, "/c": true, "/lone": false });
    } finally {
      await bare.close();
    }
  });

  it("drops a held answer whose client left, and goes on serving", async () => {
    let served = 0;
    const bare = await bareServer((req, res) => {
      served++;
      res.writeHead(200, { "content-type": "text/plain" });
      if (req.url === "/leave") req.socket.destroy(); // gone before the turn ends
      res.end("ok");
    });
    try {
      expect(await rawExchange(bare.port, "GET /leave HTTP/1.1\r\nHost: x\r\n\r\n", () => false)).toBe("");
      const response = await fetch(`http://127.0.0.1:${bare.port}/after`);
      expect(await response.text()).toBe("ok");
      expect(served).toBe(2);
    } finally {
      await bare.close();
    }
  });
});

describe("serve() with coalesced writes", () => {
  const app = crudkit({
    database: { provider: "sqlite", url: tempDatabaseUrl() },
    autoMigrate: true,
    resources: [openProduct],
  });
  const running = serve(app, { port: 0 });
  afterAll(async () => (await running).close());

  it("answers 300 concurrent reads of 300 records, each with its own record", async () => {
    const { url } = await running;
    const created = await Promise.all(
      Array.from({ length: 300 }, async (_, i) => {
        const res = await fetch(`${url}/api/product`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ name: `Item ${i}`, price: i }),
        });
        return (await res.json()) as { id: string; name: string };
      }),
    );
    const read = await Promise.all(
      created.map(
        async ({ id }) => (await (await fetch(`${url}/api/product/${id}`)).json()) as { id: string },
      ),
    );
    expect(read).toEqual(created);
  });

  it("answers the same with coalesceWrites off", async () => {
    const plain = await serve(
      crudkit({
        database: { provider: "sqlite", url: tempDatabaseUrl() },
        autoMigrate: true,
        resources: [openProduct],
      }),
      { port: 0, coalesceWrites: false },
    );
    try {
      const res = await fetch(`${plain.url}/api/product`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ name: "Hat", price: 5 }),
      });
      expect(res.status).toBe(201);
    } finally {
      await plain.close();
    }
  });
});
