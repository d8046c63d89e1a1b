// What a review of the HTTP details found, each written as the attack or the failure it was:
// a compressed download whose storage fails mid-stream must end that answer, not the process, and
// a client that goes away must close the file; `Prefer: return=minimal` with an Idempotency-Key
// must create once and replay in the shape asked, whatever the plugin order; an endpoint's
// Response with immutable headers must pass CORS; the list URL's event stream keeps its Vary.

import { Readable } from "node:stream";
import { apiKey, type CrudkitPlugin, createResource, crudkit, withId } from "crudkit-api";
import { idempotency, rateLimit } from "crudkit-api/plugins";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { compressed, compressionOf } from "../src/node/compression.ts";

const OPTIONS = compressionOf(true)!;
const GZIP = new Request("http://api.test/file", { headers: { "accept-encoding": "gzip" } });

/** A text download of `size` bytes (stated) whose storage stream is `source`. */
function download(source: Readable, size: number): Response {
  return new Response(Readable.toWeb(source) as ReadableStream, {
    headers: {
      "content-type": "text/plain",
      "content-length": String(size),
      etag: '"f-1"',
      "accept-ranges": "bytes",
    },
  });
}

describe("a compressed download", () => {
  it("whose storage fails mid-stream ends that answer with an error, and the process lives", async () => {
    let reads = 0;
    const failing = new Readable({
      read() {
        reads++;
        if (reads < 3) this.push(Buffer.alloc(4096, "a"));
        else this.destroy(new Error("storage reset"));
      },
    });
    const answer = await compressed(GZIP, download(failing, 100_000), OPTIONS);
    expect(answer.headers.get("content-encoding")).toBe("gzip");
    await expect(answer.arrayBuffer()).rejects.toThrow();
    // Still here: an unhandled stream error would have ended the test process.
    expect(reads).toBeGreaterThanOrEqual(3);
  });

  it("that the client leaves closes its storage stream; its bytes no longer claim ranges or a strong tag", async () => {
    const endless = new Readable({
      read() {
        this.push(Buffer.alloc(16_384, "b"));
      },
    });
    const answer = await compressed(GZIP, download(endless, 10_000_000), OPTIONS);
    expect(answer.headers.get("accept-ranges")).toBeNull();
    expect(answer.headers.get("etag")).toBe('W/"f-1"');
    const reader = answer.body!.getReader();
    await reader.read();
    await reader.cancel();
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(endless.destroyed).toBe(true);
  });
});

const item = createResource({
  name: "item",
  schema: withId({ name: z.string().max(50) }),
  access: { create: true, read: true, update: true, delete: true, list: true },
});
const redirecting: CrudkitPlugin = {
  id: "redirecting",
  endpoints: [
    { method: "GET", path: "/elsewhere", handler: async () => Response.redirect("http://other.test/", 302) },
  ],
};

const appWith = (plugins: CrudkitPlugin[]) =>
  crudkit({
    database: { provider: "sqlite", url: ":memory:" },
    autoMigrate: true,
    resources: [item],
    plugins: [apiKey({ keys: { "k-1": { id: "ann" } } }), ...plugins, redirecting],
    cors: { origin: ["http://app.test"] },
    listETags: true,
    realtime: true,
  });

describe("Prefer: return=minimal with an Idempotency-Key", () => {
  for (const [order, plugins] of [
    ["idempotency outside the rate limit", () => [idempotency(), rateLimit({ max: 100, window: 60 })]],
    ["idempotency inside the rate limit", () => [rateLimit({ max: 100, window: 60 }), idempotency()]],
    ["idempotency alone", () => [idempotency()]],
  ] as const) {
    it(`creates once and replays minimal (${order})`, async () => {
      const app = appWith([...plugins()]);
      await app.ready;
      const post = (prefer?: string) =>
        app.handler(
          new Request("http://api.test/api/item", {
            method: "POST",
            headers: {
              "content-type": "application/json",
              "x-api-key": "k-1",
              "idempotency-key": "sync-1",
              ...(prefer ? { prefer } : {}),
            },
            body: JSON.stringify({ name: "once" }),
          }),
        );
      const first = await post("return=minimal");
      const again = await post("return=minimal");
      expect(first.status).toBe(201);
      expect(again.status).toBe(201);
      expect(await again.text()).toBe("");
      expect(again.headers.get("location")).toBe(first.headers.get("location"));
      expect(again.headers.get("etag")).toBe(first.headers.get("etag"));
      expect(again.headers.get("preference-applied")).toBe("return=minimal");
      // Asked without the preference, the same key gives the whole first answer.
      const full = await post();
      expect(full.status).toBe(201);
      const record = (await full.json()) as { id: string; name: string };
      expect(first.headers.get("location")).toBe(`/api/item/${record.id}`);
      const page = (await (await app.handler(new Request("http://api.test/api/items"))).json()) as {
        items: unknown[];
      };
      expect(page.items).toHaveLength(1);
      await app.close();
    });
  }
});

describe("answers as endpoints make them", () => {
  it("a Response with immutable headers (a redirect) passes CORS, with or without Origin", async () => {
    const app = appWith([]);
    await app.ready;
    for (const headers of [{}, { origin: "http://app.test" }] as Record<string, string>[]) {
      const res = await app.handler(new Request("http://api.test/api/elsewhere", { headers }));
      expect(res.status).toBe(302);
    }
    await app.close();
  });

  it("the list URL's event stream keeps its Vary when lists are tagged", async () => {
    const app = appWith([]);
    await app.ready;
    const stream = await app.handler(
      new Request("http://api.test/api/items", { headers: { accept: "text/event-stream" } }),
    );
    expect(stream.headers.get("content-type")).toMatch(/^text\/event-stream/);
    expect(stream.headers.get("vary")).toContain("x-api-key");
    await stream.body?.cancel();
    await app.close();
  });
});
