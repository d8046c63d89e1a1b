// A real shared cache in front of crudkit (issue 46 §5): nginx keeps every 200 for ten minutes,
// keyed on the URL alone, unless the origin's Cache-Control or Vary says otherwise. Through it, no
// caller may ever get an answer made for another: a user's records are never cached, and the
// cached anonymous answer is never handed to a signed-in caller.

import { connect } from "node:net";
import { apiKey, createResource, crudkit, ownedBy, withId } from "crudkit-api";
import { type RunningServer, serve } from "crudkit-api/node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { tempDatabaseUrl } from "./helpers.ts";
import { nginxPresent, type RunningNginx, startNginx } from "./nginx.ts";

const ALICE = { "x-api-key": "alice-key" };
const BOB = { "x-api-key": "bob-key" };

const note = createResource({
  name: "note",
  schema: withId({ ownerId: z.string().optional(), text: z.string() }),
  access: ownedBy("ownerId"),
});
// Readable by anyone, drafts by signed-in callers only: the anonymous and the signed-in list
// differ, so an answer served to the wrong one shows in the body, not only in a header.
const article = createResource({
  name: "article",
  schema: withId({ title: z.string(), draft: z.boolean().default(false) }),
  access: {
    create: ({ user }) => user !== null,
    read: true,
    list: ({ user }) => (user ? true : { draft: false }),
  },
});

const vary = (headers: Headers) =>
  (headers.get("vary") ?? "")
    .toLowerCase()
    .split(",")
    .map((name) => name.trim());

describe.skipIf(!nginxPresent && !process.env.CI)("behind a shared cache (nginx)", () => {
  const app = crudkit({
    database: { provider: "sqlite", url: tempDatabaseUrl() },
    autoMigrate: true,
    resources: [note, article],
    plugins: [apiKey({ keys: { "alice-key": { id: "alice" }, "bob-key": { id: "bob" } } })],
  });
  let server: RunningServer;
  let proxy: RunningNginx;
  const notes: { id: string; text: string }[] = [];

  const send = async (method: string, path: string, headers: Record<string, string> = {}, body?: unknown) => {
    const res = await fetch(`${proxy.url}${path}`, {
      method,
      headers: body === undefined ? headers : { ...headers, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, headers: res.headers, cache: res.headers.get("x-cache-status"), text };
  };
  const titles = (text: string) =>
    JSON.parse(text)
      .items.map((a: { title: string }) => a.title)
      .sort();

  beforeAll(async () => {
    server = await serve(app, { port: 0 });
    proxy = await startNginx({ upstream: server.url });
    for (const text of ["alice's first secret", "alice's second secret"]) {
      const res = await send("POST", "/api/note", ALICE, { text });
      expect(res.status).toBe(201);
      notes.push(JSON.parse(res.text));
    }
    for (const body of [{ title: "Published" }, { title: "Draft", draft: true }])
      expect((await send("POST", "/api/article", ALICE, body)).status).toBe(201);
  });
  afterAll(async () => {
    await proxy?.stop();
    await server?.close();
  });

  it("never gives bob alice's list, however often she read it", async () => {
    for (let i = 0; i < 2; i++) {
      const mine = await send("GET", "/api/notes", ALICE);
      expect(mine.status).toBe(200);
      expect(JSON.parse(mine.text).items).toHaveLength(2);
      expect(mine.cache).not.toBe("HIT");
    }
    const his = await send("GET", "/api/notes", BOB);
    expect(his.status).toBe(200);
    expect(his.cache).not.toBe("HIT");
    expect(JSON.parse(his.text).items).toEqual([]);
    for (const { id, text } of notes) {
      expect(his.text).not.toContain(id);
      expect(his.text).not.toContain(text);
    }
  });

  it("never gives bob alice's record: he gets 404", async () => {
    const [{ id, text }] = notes as [{ id: string; text: string }];
    for (let i = 0; i < 2; i++) expect((await send("GET", `/api/note/${id}`, ALICE)).status).toBe(200);
    const his = await send("GET", `/api/note/${id}`, BOB);
    expect(his.status).toBe(404);
    expect(his.cache).not.toBe("HIT");
    expect(his.text).not.toContain(text);
  });

  it("caches the anonymous list (so the cases around it mean something)", async () => {
    await send("GET", "/api/articles");
    const again = await send("GET", "/api/articles");
    expect(again.status).toBe(200);
    expect(again.cache).toBe("HIT");
    expect(titles(again.text)).toEqual(["Published"]);
  });

  it("does not serve the cached anonymous list to a signed-in caller, nor hers to the anonymous", async () => {
    const hers = await send("GET", "/api/articles", ALICE);
    expect(hers.cache).not.toBe("HIT");
    expect(titles(hers.text)).toEqual(["Draft", "Published"]);
    const anonymous = await send("GET", "/api/articles");
    expect(titles(anonymous.text)).toEqual(["Published"]);
  });

  it("answers HEAD through the cache with 200 and no body, and leaves the GET's body cached", async () => {
    // A raw socket: fetch drops whatever follows a HEAD answer's headers, which is what is checked.
    const head = async (base: string, path: string) => {
      const socket = connect(Number(new URL(base).port), "127.0.0.1");
      // write, not end: nginx takes a half-closed connection for a client that went away.
      socket.write(`HEAD ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`);
      let raw = "";
      for await (const chunk of socket) raw += chunk;
      const end = raw.indexOf("\r\n\r\n");
      return { statusLine: raw.slice(0, raw.indexOf("\r\n")), after: raw.slice(end + 4), end };
    };
    // A cached URL, one never asked for (nginx turns that HEAD into a GET upstream, to cache it),
    // and crudkit's own HEAD at the origin.
    for (const [base, path] of [
      [proxy.url, "/api/articles"],
      [proxy.url, "/api/articles?limit=5"],
      [server.url, "/api/articles?limit=6"],
    ] as const) {
      const res = await head(base, path);
      expect(res.end).toBeGreaterThan(0);
      expect(res.statusLine).toMatch(/^HTTP\/1\.1 200 /);
      expect(res.after).toBe("");
    }
    const get = await send("GET", "/api/articles?limit=5");
    expect(get.status).toBe(200);
    expect(titles(get.text)).toEqual(["Published"]);
  });

  it("marks signed-in answers private, and anonymous ones as varying with the credential headers", async () => {
    // At the origin: these headers are what lets any shared cache, not only this nginx, get it right.
    const hers = await fetch(`${server.url}/api/articles`, { headers: ALICE });
    expect(hers.headers.get("cache-control")).toBe("private, no-store");
    const anonymous = await fetch(`${server.url}/api/articles`);
    // The app identifies callers by an API key only: that header is what the anonymous page depends on.
    expect(vary(anonymous.headers)).toEqual(["x-api-key"]);
    const missing = await fetch(`${server.url}/api/note/no-such-id`);
    expect(missing.status).toBe(403);
    expect(vary(missing.headers)).toEqual(["x-api-key"]);
    const hersMissing = await fetch(`${server.url}/api/note/no-such-id`, { headers: ALICE });
    expect(hersMissing.headers.get("cache-control")).toBe("private, no-store");
    await Promise.all([missing.body?.cancel(), hersMissing.body?.cancel()]);
    await Promise.all([hers.body?.cancel(), anonymous.body?.cancel()]);
  });
});
