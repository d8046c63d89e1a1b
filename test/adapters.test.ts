// A crudkit app inside the frameworks users already run, each on a real socket: Express 5 mounted
// under a path (also behind express.json()), Fastify 5 as a plugin, Hono mounting the handler.
// Routes answer under the mount path, the framework's own routes still work, and an upload
// streams: an oversized one is refused long before its body is sent.

import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { getRequestListener } from "@hono/node-server";
import { apiKey, createResource, crudkit, withId } from "crudkit-api";
import { crudkitFastify, toExpressHandler } from "crudkit-api/node";
import { upload } from "crudkit-api/plugins";
import express from "express";
import Fastify from "fastify";
import { Hono } from "hono";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { tempDatabaseUrl, tempUploadDirs } from "./helpers.ts";
import { streamOversizedUpload } from "./oversized-upload.ts";

const key = { "x-api-key": "adapter-key" };
const signedIn = ({ user }: { user: unknown }) => user !== null;

function makeApp() {
  const { uploadDir, spoolDir } = tempUploadDirs();
  return crudkit({
    database: { provider: "sqlite", url: tempDatabaseUrl() },
    autoMigrate: true,
    resources: [
      createResource({
        name: "product",
        schema: withId({ name: z.string().max(100), price: z.number() }),
        access: { create: signedIn, read: signedIn, list: signedIn, update: signedIn, delete: signedIn },
      }),
    ],
    plugins: [
      apiKey({ keys: { "adapter-key": { id: "u" } } }),
      upload({ uploadDir, spoolDir, maxFileSize: 1024 * 1024, access: { upload: signedIn, read: signedIn } }),
    ],
  });
}

type Started = { url: string; close(): Promise<void> };

const listen = async (server: Server): Promise<string> => {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
};
const closing = (server: Server) => () => new Promise<void>((resolve) => server.close(() => resolve()));

async function startExpress(app: ReturnType<typeof makeApp>, parseJson: boolean): Promise<Started> {
  const server = express();
  if (parseJson) server.use(express.json());
  server.get("/hello", (_req, res) => void res.send("express says hi"));
  server.use("/api", toExpressHandler(app));
  const http = server.listen(0, "127.0.0.1");
  await new Promise((resolve) => http.once("listening", resolve));
  return { url: `http://127.0.0.1:${(http.address() as AddressInfo).port}`, close: closing(http) };
}

const FRAMEWORKS: { name: string; start(app: ReturnType<typeof makeApp>): Promise<Started> }[] = [
  { name: "Express 5, mounted under /api", start: (app) => startExpress(app, false) },
  { name: "Express 5, behind express.json()", start: (app) => startExpress(app, true) },
  {
    name: "Fastify 5, as a plugin",
    async start(app) {
      const server = Fastify();
      server.get("/hello", async () => "fastify says hi");
      await server.register(crudkitFastify(app), { prefix: "/api" });
      const url = await server.listen({ port: 0, host: "127.0.0.1" });
      return { url, close: () => server.close() };
    },
  },
  {
    name: "Hono, mounting the handler",
    async start(app) {
      const hono = new Hono();
      hono.get("/hello", (c) => c.text("hono says hi"));
      // The original request, path included: crudkit routes under its own basePath.
      hono.mount("/api", (request) => app.handler(request), { replaceRequest: false });
      const { createServer } = await import("node:http");
      const http = createServer(getRequestListener(hono.fetch));
      return { url: await listen(http), close: closing(http) };
    },
  },
];

for (const framework of FRAMEWORKS) {
  describe(framework.name, () => {
    let started: Started;
    let app: ReturnType<typeof makeApp>;
    beforeAll(async () => {
      app = makeApp();
      await app.ready;
      started = await framework.start(app);
    });
    afterAll(async () => {
      await started?.close();
      await app?.close();
    });
    const send = (method: string, path: string, body?: unknown) =>
      fetch(`${started.url}${path}`, {
        method,
        headers: { ...key, "content-type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body),
      });

    it("serves every operation under the mount path, and leaves the framework's routes alone", async () => {
      const created = await send("POST", "/api/product", { name: "Hat", price: 5 });
      expect(created.status).toBe(201);
      const { id } = (await created.json()) as { id: string };
      expect(((await (await send("GET", `/api/product/${id}`)).json()) as { name: string }).name).toBe("Hat");
      const updated = await send("PATCH", `/api/product/${id}`, { price: 6 });
      expect(((await updated.json()) as { price: number }).price).toBe(6);
      const listed = (await (await send("GET", "/api/products?filter[price][gte]=6")).json()) as {
        pagination: { total: number };
      };
      expect(listed.pagination.total).toBe(1);
      expect((await send("DELETE", `/api/product/${id}`)).status).toBe(200);
      const missing = await send("GET", "/api/nowhere");
      expect(missing.status).toBe(404);
      expect(((await missing.json()) as { code: string }).code).toBe("NOT_FOUND");
      expect(await (await fetch(`${started.url}/hello`)).text()).toMatch(/says hi/);
      // Errors keep crudkit's body.
      const invalid = await send("POST", "/api/product", { name: 5 });
      expect(invalid.status).toBe(400);
      expect(((await invalid.json()) as { code: string }).code).toBe("VALIDATION_ERROR");
    });

    it("uploads through it, streamed: an oversized upload is refused before its body is sent", async () => {
      const small = await send("POST", "/api/upload/file", {
        file: Buffer.from("hello").toString("base64"),
        filename: "a.txt",
        mimeType: "text/plain",
      });
      expect(small.status).toBe(201);
      if (framework.name.includes("express.json()")) return; // that parser buffers by design
      const { status, sent, body } = await streamOversizedUpload(started.url, key);
      expect(status).toBe(413);
      expect(JSON.parse(body).code).toBe("PAYLOAD_TOO_LARGE");
      expect(JSON.parse(body).code).toBe("PAYLOAD_TOO_LARGE");
      // The limit is 1 MiB (1.4 MB of base64): a buffering server would have read all 50 MB first.
      expect(sent).toBeLessThan(16 * 1024 * 1024);
    });
  });
}
