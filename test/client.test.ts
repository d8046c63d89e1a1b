// crudkit-api/client against a listening server on 127.0.0.1: every method, callback form and error.

import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { type ClientError, createClient } from "crudkit-api/client";
import { type RunningServer, serve } from "crudkit-api/node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ClientTestApp, createClientTestApp } from "./client-app.ts";

const app = createClientTestApp();
let server: RunningServer;
let baseURL = "";
beforeAll(async () => {
  server = await serve(app, { port: 0 });
  baseURL = `${server.url}/api`;
});
afterAll(async () => {
  await server.close();
  await app.close();
});

const admin = () => createClient<ClientTestApp>({ baseURL, headers: { "x-api-key": "admin" } });

describe("resource methods", () => {
  it("create, read, update, list and delete", async () => {
    const client = admin();
    const created = await client.product.create({ name: "Hat", price: 5 });
    expect(created.error).toBeNull();
    expect(created.data).toMatchObject({ name: "Hat", price: 5, status: "draft" });
    const id = created.data!.id;
    expect((await client.product.read(id)).data).toEqual(created.data);
    const updated = await client.product.update(id, { status: "active" });
    expect(updated.data).toMatchObject({ id, status: "active", price: 5 });
    const listed = await client.product.list({
      search: "hat",
      sortBy: "price",
      sortOrder: "asc",
      page: 1,
      limit: 10,
    });
    expect(listed.data?.items.map((p) => p.id)).toContain(id);
    expect(listed.data?.pagination).toMatchObject({ page: 1, limit: 10 });
    expect((await client.product.delete(id)).data).toEqual({ success: true, id });
    expect((await client.product.read(id)).error?.code).toBe("NOT_FOUND");
  });

  it("an empty `in` is a 400 naming it, never a list of everything; an empty `nin` keeps every record", async () => {
    const client = admin();
    await client.product.create({ name: "Kept", price: 2 });
    const none = await client.product.list({ where: { id: { in: [] } } });
    expect(none.data).toBeNull();
    expect(none.error).toMatchObject({
      code: "BAD_REQUEST",
      message: expect.stringMatching(/filter\.id\.in needs at least one value/),
    });
    const either = await client.product.list({ where: { or: [] } });
    expect(either.error?.code).toBe("BAD_REQUEST");
    const all = await client.product.list({ where: { id: { nin: [] } } });
    expect(all.data?.items.map((p) => p.name)).toContain("Kept");
  });

  it("lists a resource whose plural is irregular, without knowing it", async () => {
    const client = admin();
    await client.person.create({ name: "Ada", born: new Date("1815-12-10T00:00:00Z") });
    const people = await client.person.list();
    expect(people.data?.items.map((p) => p.name)).toEqual(["Ada"]);
    // Dates arrive as ISO strings, as the types say.
    expect(people.data?.items[0]?.born).toBe("1815-12-10T00:00:00.000Z");
    expect((await fetch(`${baseURL}/people`)).status).toBe(200);
  });

  it("URL-encodes ids with /, ? and spaces", async () => {
    const client = admin();
    const id = "shelf/2?row= a b";
    expect((await client.product.create({ id, name: "Odd", price: 1 })).data?.id).toBe(id);
    expect((await client.product.read(id)).data?.id).toBe(id);
    expect((await client.product.update(id, { price: 2 })).data?.price).toBe(2);
    expect((await client.product.delete(id)).data).toEqual({ success: true, id });
  });
});

describe("errors land in error, with readable messages", () => {
  it("400 with details", async () => {
    const { data, error } = await admin().product.create({ name: "", price: -1 });
    expect(data).toBeNull();
    expect(error).toMatchObject({ status: 400, code: "VALIDATION_ERROR" });
    expect(error?.details?.map((d) => d.path)).toEqual(["name", "price"]);
    expect(error?.message).toMatch(/^Invalid product: name: /);
  });

  it("401, 403 and 404", async () => {
    const forged = createClient<ClientTestApp>({ baseURL, headers: { "x-api-key": "forged" } });
    expect((await forged.product.list()).error).toEqual({
      status: 401,
      code: "UNAUTHORIZED",
      message: "The API key in the x-api-key header is not valid.",
    });
    const anonymous = createClient<ClientTestApp>({ baseURL });
    expect((await anonymous.product.list()).error).toMatchObject({
      status: 403,
      code: "FORBIDDEN",
      message: expect.stringContaining("list rule"),
    });
    const user = createClient<ClientTestApp>({ baseURL, headers: { "x-api-key": "user" } });
    const missing = await user.product.read("nope");
    expect(missing.error).toEqual({
      status: 404,
      code: "NOT_FOUND",
      message: 'No product with id "nope" exists.',
    });
  });

  it("a refused connection", async () => {
    const closed = await closedPort();
    const client = createClient<ClientTestApp>({ baseURL: `http://127.0.0.1:${closed}/api` });
    const { data, error } = await client.product.list();
    expect(data).toBeNull();
    expect(error).toEqual({
      status: 0,
      code: "NETWORK_ERROR",
      message: `Could not reach http://127.0.0.1:${closed}/api/product (ECONNREFUSED).`,
    });
  });

  it("an answer that is not JSON", async () => {
    const html = createServer((_, res) =>
      res.writeHead(502, { "content-type": "text/html" }).end("<h1>Bad gateway</h1>"),
    );
    await new Promise<void>((resolve) => html.listen(0, "127.0.0.1", resolve));
    const client = createClient<ClientTestApp>({
      baseURL: `http://127.0.0.1:${(html.address() as AddressInfo).port}/api`,
    });
    expect((await client.product.list()).error).toEqual({
      status: 502,
      code: "INVALID_RESPONSE",
      message: "The server answered 502 with a body that is not JSON.",
    });
    html.close();
  });
});

describe("callbacks and headers", () => {
  it("run in every form, from the widest to the narrowest", async () => {
    const order: string[] = [];
    const client = createClient<ClientTestApp>({
      baseURL,
      headers: { "x-api-key": "user" },
      onRequest: () => void order.push("client.onRequest"),
      onSuccess: () => void order.push("client.onSuccess"),
      fetchOptions: { onRequest: () => void order.push("client.fetchOptions.onRequest") },
    });
    const result = await client.product.list(
      {},
      {
        onRequest: () => void order.push("call.onRequest"),
        onSuccess: ({ data, response }) =>
          void order.push(`call.onSuccess ${response.status} ${data.pagination.page}`),
        fetchOptions: {
          onRequest: () => void order.push("call.fetchOptions.onRequest"),
          onSuccess: () => void order.push("call.fetchOptions.onSuccess"),
        },
      },
    );
    expect(result.error).toBeNull();
    expect(order).toEqual([
      "client.onRequest",
      "client.fetchOptions.onRequest",
      "call.fetchOptions.onRequest",
      "call.onRequest",
      "client.onSuccess",
      "call.fetchOptions.onSuccess",
      "call.onSuccess 200 1",
    ]);
  });

  it("onError gets error.message and the response, directly and under fetchOptions", async () => {
    const seen: string[] = [];
    const client = createClient<ClientTestApp>({
      baseURL,
      onError: ({ error }) => void seen.push(`client: ${error.code}`),
    });
    await client.product.read("x", {
      onError: ({ error, response }) => void seen.push(`call: ${response?.status} ${error.message}`),
      fetchOptions: { onError: ({ error }) => void seen.push(`fetchOptions: ${error.status}`) },
    });
    expect(seen).toEqual([
      "client: FORBIDDEN",
      "fetchOptions: 403",
      'call: 403 Access denied: the read rule of "product" refused this request.',
    ]);
  });

  it("onRequest may change headers; per-call headers win over client headers", async () => {
    const client = createClient<ClientTestApp>({
      baseURL,
      headers: { "x-api-key": "forged", "x-trace": "client" },
      fetchOptions: { headers: { "x-trace": "client-fetch-options" } },
    });
    const overridden = await client.echo({ room: "r1", message: "hi" }, { headers: { "x-api-key": "user" } });
    expect(overridden.data).toMatchObject({ user: "user", trace: "client-fetch-options" });
    const changed = await client.echo(
      { room: "r1", message: "hi" },
      {
        headers: { "x-api-key": "user" },
        onRequest: (ctx) => {
          ctx.headers.set("x-trace", "from-on-request");
        },
      },
    );
    expect(changed.data?.trace).toBe("from-on-request");
  });

  it("a throwing callback becomes an error, never a rejection", async () => {
    const client = admin();
    const result = await client.product.list(
      {},
      {
        onSuccess: () => {
          throw new Error("boom");
        },
      },
    );
    expect(result).toEqual({
      data: null,
      error: { status: 0, code: "CLIENT_ERROR", message: "A client callback failed: boom" },
    });
  });

  it("reads headers from a function per request", async () => {
    let key = "forged";
    const client = createClient<ClientTestApp>({ baseURL, headers: () => ({ "x-api-key": key }) });
    expect((await client.product.list()).error?.status).toBe(401);
    key = "user";
    expect((await client.product.list()).error).toBeNull();
  });
});

describe("plugin methods and $fetch", () => {
  it("call plugin endpoints by their declared names", async () => {
    const client = createClient<ClientTestApp>({ baseURL, headers: { "x-api-key": "user" } });
    expect((await client.echo({ room: "lobby", message: "ab", times: 2 })).data).toEqual({
      room: "lobby",
      message: "abab",
      user: "user",
      trace: null,
    });
    expect((await client.echoStats({ scale: 2 })).data).toEqual({ rooms: 6 });
    expect((await client.ping()).data).toEqual({ pong: true });
  });

  it("validate their input and apply their rules", async () => {
    const user = createClient<ClientTestApp>({ baseURL, headers: { "x-api-key": "user" } });
    const invalid = await user.echo({ room: "lobby", message: "", times: 9 });
    expect(invalid.error).toMatchObject({ status: 400, code: "VALIDATION_ERROR" });
    expect(invalid.error?.details?.map((d) => d.path)).toEqual(["message", "times"]);
    const anonymous = createClient<ClientTestApp>({ baseURL });
    expect((await anonymous.echoStats({ scale: 1 })).error).toEqual({
      status: 403,
      code: "FORBIDDEN",
      message: "Sign in to see echo stats.",
    });
    const unknown = await (
      anonymous as unknown as { nothing: (i: object) => Promise<{ error: ClientError }> }
    ).nothing({});
    expect(unknown.error).toMatchObject({ status: 404, code: "NOT_FOUND" });
  });

  it("$fetch reaches any endpoint, with query, body and method", async () => {
    const client = createClient<ClientTestApp>({ baseURL, headers: { "x-api-key": "user" } });
    const stats = await client.$fetch("/echo/stats", { query: { scale: 4 } });
    expect(stats.data).toEqual({ rooms: 12 });
    const echoed = await client.$fetch<{ message: string }>("/echo/hall", { body: { message: "yo" } });
    expect(echoed.data?.message).toBe("yo");
    const products = await client.$fetch<{ pagination: { limit: number } }>("/products", {
      query: { limit: 3, search: undefined },
    });
    expect(products.data?.pagination.limit).toBe(3);
    const wrong = await client.$fetch("/products", { method: "PUT" });
    expect(wrong.error).toMatchObject({ status: 405, code: "METHOD_NOT_ALLOWED" });
  });
});

describe("the audit log through $fetch", () => {
  it("reads GET /audit/logs with typed filters, behind the audit rule", async () => {
    const admin = createClient<ClientTestApp>({ baseURL, headers: { "x-api-key": "admin" } });
    const made = await admin.product.create({ name: "Audited", price: 3 });
    const id = made.data!.id;
    await admin.product.update(id, { price: 4 });
    const logs = await admin.$fetch("/audit/logs", {
      query: { resource: "product", recordId: id, limit: 10 },
    });
    expect(logs.error).toBeNull();
    expect(logs.data?.items.map((e) => [e.operation, e.userId, e.source])).toEqual([
      ["update", "admin", "http"],
      ["create", "admin", "http"],
    ]);
    expect(logs.data?.items[0]?.changes?.price).toEqual({ from: 3, to: 4 });
    // serve() passes the socket's address.
    expect(logs.data?.items[0]?.ip).toMatch(/127\.0\.0\.1/);
    expect(logs.data?.pagination).toMatchObject({ page: 1, limit: 10, total: 2 });
    const user = createClient<ClientTestApp>({ baseURL, headers: { "x-api-key": "user" } });
    expect((await user.$fetch("/audit/logs")).error).toMatchObject({ status: 403, code: "FORBIDDEN" });
    // The answer every list gives a bad limit.
    const bad = await admin.$fetch("/audit/logs", { query: { limit: 0 } });
    expect(bad.error).toMatchObject({ status: 400, code: "BAD_REQUEST" });
  });
});

async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}
