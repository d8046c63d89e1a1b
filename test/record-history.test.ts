// Issue 35, section 3: GET /<resource>/:id/history for every caller who may read the record, on
// the three databases, through HTTP, the client on a socket and app.api. Her field rules apply to
// every snapshot (a hidden field is absent), the row rule's outsiders get the read's 404 byte for
// byte, pages walk by cursor, a restore is an ordinary audited PATCH with If-Match, and hostile
// input gets its 400 or 404, never a 500.

import { APIError, createResource, crudkit, type DatabaseOptions, withId } from "crudkit-api";
import { createClient } from "crudkit-api/client";
import { audit } from "crudkit-api/plugins";
import { expect, it } from "vitest";
import { z } from "zod";
import { appPerDialect, forEachDialect, servedPerDialect } from "./dialects.ts";
import { call, expectNoLeak } from "./helpers.ts";

type Caller = { user: { id: string; roles?: readonly string[] } | null };
const isAdmin = ({ user }: Caller) => user?.roles?.includes("admin") === true;
/** Admins read every deal; anyone else her own; nobody signed out. */
const ownRows = ({ user }: Caller) => (user ? (isAdmin({ user }) ? true : { ownerId: user.id }) : false);

const deal = createResource({
  name: "deal",
  schema: withId({
    title: z.string().max(200),
    ownerId: z.string().max(100),
    margin: z.number(),
    pin: z.string().max(20),
  }),
  access: {
    create: ({ user }) => user !== null,
    read: ownRows,
    update: ownRows,
    delete: ownRows,
    list: ownRows,
    fields: { margin: { read: isAdmin } },
  },
});

/** A resource nobody may read: its history answers what its read answers. */
const vault = createResource({
  name: "vault",
  schema: withId({ label: z.string().max(50) }),
  access: { create: true },
});

const identify = (request: Request) => {
  const id = request.headers.get("x-user");
  return id ? { id, roles: id === "admin" ? ["admin"] : [] } : null;
};

const makeApp = (database: DatabaseOptions) =>
  crudkit({
    database,
    autoMigrate: true,
    maxLimit: 20,
    resources: [deal, vault],
    plugins: [audit({ redact: ["pin"], access: { read: isAdmin } })],
    identify,
    log: () => {},
  });

type App = ReturnType<typeof makeApp>;
type Page = { items: any[]; pagination: Record<string, any> };

const ALICE = { "x-user": "alice" };
const BOB = { "x-user": "bob" };
const ADMIN = { "x-user": "admin" };

/** `app.api`'s history method: there at runtime, not in `ResourceApi`'s types (see the README). */
const historyOf = (app: App) =>
  (app.api as unknown as Record<string, (options: object) => Promise<Page>>).readDealHistory!;

forEachDialect((dialect) => {
  const served = servedPerDialect(dialect, makeApp);
  const bare = appPerDialect(dialect, (database) =>
    crudkit({ database, autoMigrate: true, resources: [deal], identify, log: () => {} }),
  );
  const as = (headers: Record<string, string>, method: string, path: string, body?: unknown) =>
    call(served.app, method, path, { headers, ...(body === undefined ? {} : { body }) });
  const clientOf = (headers: Record<string, string>) =>
    createClient<App>({ baseURL: `${served.server.url}/api`, headers });
  const newDeal = async (title: string, ownerId = "alice") => {
    const created = await as(ALICE, "POST", "/api/deal", { title, ownerId, margin: 12, pin: "1234" });
    expect(created.status, created.text).toBe(201);
    return created.body.id as string;
  };

  it("alice reads her record's history without the field hidden from her, the same on every path", async () => {
    const id = await newDeal("Draft");
    expect((await as(ALICE, "PATCH", `/api/deal/${id}`, { title: "Final", margin: 15 })).status).toBe(200);

    const http = await as(ALICE, "GET", `/api/deal/${id}/history`);
    expect(http.status, http.text).toBe(200);
    const [update, create] = http.body.items;
    expect(http.body.items).toHaveLength(2);
    expect(update).toMatchObject({ operation: "update", userId: "alice", source: "http" });
    expect(create).toMatchObject({ operation: "create", userId: "alice", source: "http", before: null });
    expect(Date.parse(update.createdAt)).toBeGreaterThanOrEqual(Date.parse(create.createdAt));
    // margin changed too, but alice may not read it: absent everywhere, not "[redacted]".
    expect(Object.keys(update.changes).sort()).toEqual(["title", "updatedAt"]);
    expect(update.changes.title).toEqual({ from: "Draft", to: "Final" });
    for (const snapshot of [update.before, update.after, create.after]) {
      expect(snapshot).not.toHaveProperty("margin");
      expect(snapshot.pin).toBe("[redacted]");
    }
    expect(http.text).not.toContain('"margin"');
    expect(update.after).toMatchObject({ id, title: "Final", ownerId: "alice" });
    expect(http.body.pagination).toMatchObject({ hasNext: false, hasPrev: false, nextCursor: null });
    // She is no audit reader: the log itself stays closed to her.
    expect((await as(ALICE, "GET", "/api/audit/logs")).status).toBe(403);
    // The admin sees the margin's change.
    const full = await as(ADMIN, "GET", `/api/deal/${id}/history`);
    expect(full.body.items[0].changes.margin).toEqual({ from: 12, to: 15 });

    const viaClient = await clientOf(ALICE).deal.history(id);
    expect(viaClient.error).toBeNull();
    expect(viaClient.data).toEqual(http.body);
    const viaApi = await historyOf(served.app)({ params: { id }, headers: ALICE });
    expect(viaApi).toEqual(http.body);
  });

  it("bob, outside the row rule, gets the 404 of a missing id, byte for byte; no rights at all gets the read's 403", async () => {
    const id = await newDeal("Alice's");
    const history = await as(BOB, "GET", `/api/deal/${id}/history`);
    const read = await as(BOB, "GET", `/api/deal/${id}`);
    expect(history.status).toBe(404);
    expect(history.text).toBe(read.text);
    expect(history.body.code).toBe("NOT_FOUND");
    const missing = await as(ALICE, "GET", "/api/deal/no-such-deal/history");
    expect(missing.text).toBe((await as(ALICE, "GET", "/api/deal/no-such-deal")).text);
    expect(history.text.replace(id, "X")).toBe(missing.text.replace("no-such-deal", "X"));
    // The client and app.api answer the same.
    const { error } = await clientOf(BOB).deal.history(id);
    expect(error).toEqual({ status: 404, code: "NOT_FOUND", message: read.body.message });
    const thrown = await historyOf(served.app)({ params: { id }, headers: BOB }).catch((e: unknown) => e);
    expect(thrown).toBeInstanceOf(APIError);
    expect(thrown).toMatchObject({ status: 404, code: "NOT_FOUND", message: read.body.message });
    // Signed out, the read rule refuses before any lookup: its 403, for a real id and a missing one.
    const refused = await as({}, "GET", `/api/deal/${id}/history`);
    expect(refused.status).toBe(403);
    expect(refused.text).toBe((await as({}, "GET", `/api/deal/${id}`)).text);
    expect((await as({}, "GET", "/api/deal/nope/history")).text).toBe(refused.text);
    // Access is decided first: a bad query changes nothing for those who may not read the record.
    expect((await as({}, "GET", `/api/deal/${id}/history?cursor=bad&colour=red`)).text).toBe(refused.text);
    expect((await as(BOB, "GET", `/api/deal/${id}/history?limit=abc`)).text).toBe(history.text);
    // A resource without a read rule: the read's "no access rule is set" 403.
    const locked = await served.app.api.createVault({ body: { label: "gold" } });
    const vaultHistory = await as(ADMIN, "GET", `/api/vault/${locked.id}/history`);
    expect(vaultHistory.status).toBe(403);
    expect(vaultHistory.text).toBe((await as(ADMIN, "GET", `/api/vault/${locked.id}`)).text);
    // A deleted record is a missing one: its history stays in the audit log, for audit readers.
    await as(ALICE, "DELETE", `/api/deal/${id}`);
    expect((await as(ALICE, "GET", `/api/deal/${id}/history`)).status).toBe(404);
    expect((await as(ADMIN, "GET", `/api/audit/logs?recordId=${id}`)).body.items).toHaveLength(2);
  });

  it("a version from before the record entered her rows is listed without content, as /audit/logs does", async () => {
    const id = (
      await served.app.api.createDeal({
        body: { title: "Carol's", ownerId: "carol", margin: 3, pin: "9" },
        headers: ADMIN,
      })
    ).id;
    await served.app.api.updateDeal({ params: { id }, body: { ownerId: "alice" }, headers: ADMIN });
    await served.app.api.updateDeal({ params: { id }, body: { title: "Alice's now" }, headers: ALICE });
    const { body } = await as(ALICE, "GET", `/api/deal/${id}/history`);
    expect(body.items.map((e: any) => [e.operation, e.userId, e.source])).toEqual([
      ["update", "alice", "server"],
      ["update", "admin", "server"],
      ["create", "admin", "server"],
    ]);
    expect(body.items[0].changes.title).toEqual({ from: "Carol's", to: "Alice's now" });
    for (const entry of body.items.slice(1))
      expect([entry.before, entry.after, entry.changes]).toEqual([null, null, null]);
  });

  it("pages over 35 changes by cursor, each once, newest first, both ways; limit is clamped to maxLimit", async () => {
    const id = await newDeal("v0");
    for (let n = 1; n <= 34; n++)
      await served.app.api.updateDeal({ params: { id }, body: { title: `v${n}` }, headers: ALICE });
    const pages: Page[] = [];
    let cursor: string | null = null;
    do {
      const page = await as(
        ALICE,
        "GET",
        `/api/deal/${id}/history?limit=8${cursor ? `&cursor=${cursor}` : ""}`,
      );
      expect(page.status, page.text).toBe(200);
      pages.push(page.body);
      cursor = page.body.pagination.nextCursor;
    } while (cursor);
    expect(pages.map((p) => p.items.length)).toEqual([8, 8, 8, 8, 3]);
    const titles = pages.flatMap((p) => p.items.map((e) => e.after.title));
    expect(titles).toEqual(Array.from({ length: 35 }, (_, i) => `v${34 - i}`));
    expect(new Set(pages.flatMap((p) => p.items.map((e) => e.id))).size).toBe(35);
    expect(pages[0]!.pagination).toMatchObject({ hasPrev: false, prevCursor: null, total: null, limit: 8 });
    // Back from the third page: the second again.
    const back = await as(
      ALICE,
      "GET",
      `/api/deal/${id}/history?limit=8&cursor=${pages[2]!.pagination.prevCursor}`,
    );
    expect(back.body.items).toEqual(pages[1]!.items);
    expect(back.body.pagination.hasNext).toBe(true);
    // The client and app.api walk the same pages.
    const alice = clientOf(ALICE);
    const walked: string[] = [];
    for (let next: string | undefined; ; ) {
      const { data, error } = await alice.deal.history(id, { limit: 8, ...(next ? { cursor: next } : {}) });
      expect(error).toBeNull();
      walked.push(...data!.items.map((e) => e.id));
      next = data!.pagination.nextCursor ?? undefined;
      if (!next) break;
    }
    expect(walked).toEqual(pages.flatMap((p) => p.items.map((e) => e.id)));
    const second = await historyOf(served.app)({
      params: { id },
      headers: ALICE,
      query: { limit: 8, cursor: pages[0]!.pagination.nextCursor },
    });
    expect(second.items).toEqual(pages[1]!.items);
    // A limit over maxLimit (20) is clamped, as on every list.
    const clamped = await as(ALICE, "GET", `/api/deal/${id}/history?limit=1000000000`);
    expect(clamped.body.items).toHaveLength(20);
    expect(clamped.body.pagination.limit).toBe(20);
  });

  it("restoring a version is an ordinary PATCH with If-Match: audited, in the history, 412 when stale", async () => {
    const id = await newDeal("Original");
    await as(ALICE, "PATCH", `/api/deal/${id}`, { title: "Rewritten" });
    const alice = clientOf(ALICE);
    const current = await alice.deal.read(id);
    const { data } = await alice.deal.history(id);
    const first = data!.items.at(-1)!;
    expect(first.operation).toBe("create");
    // What she may write back: the version's title (the pin is redacted, the margin hidden).
    const restored = await alice.deal.update(id, { title: first.after!.title! }, { ifMatch: current.etag! });
    expect(restored.error).toBeNull();
    expect(restored.data!.title).toBe("Original");
    const stale = await alice.deal.update(id, { title: "Lost update" }, { ifMatch: current.etag! });
    expect(stale.error).toMatchObject({ status: 412, code: "PRECONDITION_FAILED" });
    const after = await alice.deal.history(id);
    expect(after.data!.items).toHaveLength(3);
    expect(after.data!.items[0]).toMatchObject({
      operation: "update",
      userId: "alice",
      source: "http",
      changes: { title: { from: "Rewritten", to: "Original" } },
    });
    // The refused change left no entry, and the audit log itself holds the restore.
    const log = await as(ADMIN, "GET", `/api/audit/logs?recordId=${id}`);
    expect(log.body.items.map((e: any) => e.operation)).toEqual(["update", "update", "create"]);
    expect(log.body.items[0].id).toBe(after.data!.items[0]!.id);
  });

  it("hostile input gets the list's 400 or the read's 404, never a 500 or a leak", async () => {
    const id = await newDeal("Target");
    await as(ALICE, "PATCH", `/api/deal/${id}`, { title: "Moved" });
    const page = (await as(ALICE, "GET", `/api/deal/${id}/history?limit=1`)).body;
    const cursor: string = page.pagination.nextCursor;
    const forged = `h1.${Buffer.from(JSON.stringify(["vault", "a", "2026-01-01T00:00:00.000Z", "x"])).toString("base64url")}`;
    const garbled = `h1.${Buffer.from('["deal","a","not a date","x"]').toString("base64url")}`;
    const bad: [string, string][] = [
      ["cursor=garbage", "cursor is not valid here"],
      [`cursor=${cursor.slice(0, -6)}`, "it is malformed"],
      [`cursor=${forged}`, "it belongs to another list"],
      [`cursor=${garbled}`, "it is malformed"],
      [`cursor=c1.${cursor.slice(3)}`, "cursor is not valid here"],
      [`cursor=h1.${"A".repeat(3000)}`, "it is not a crudkit cursor"],
      ["limit=-1", "limit must be a positive integer"],
      ["limit=0", "limit must be a positive integer"],
      ["limit=1e9", "limit must be a positive integer"],
      ["limit=abc", "limit must be a positive integer"],
      ["page=2", 'Unknown query parameter "page"'],
      ["colour=red", 'Unknown query parameter "colour"'],
      ["filter[title]=x", "Unknown query parameter"],
      ["__proto__=1", "Unknown query parameter"],
      ["cursor=%00", "must not contain NUL"],
    ];
    for (const [query, message] of bad) {
      const answer = await as(ALICE, "GET", `/api/deal/${id}/history?${query}`);
      expect(answer.status, query).toBe(400);
      expect(answer.body.code, query).toBe("BAD_REQUEST");
      expect(answer.body.message, query).toContain(message);
      expectNoLeak(answer.text);
    }
    expect((await as(ALICE, "GET", `/api/deal/${id}/history?colour=red`)).body.details).toEqual([
      { path: "colour", message: "Not a list parameter." },
    ]);
    // Ids: each answered as a read of it is.
    for (const raw of [
      "a%00b",
      "x".repeat(10_240),
      "__proto__",
      "constructor",
      "%E2%80%AE",
      "..%2F..%2Fetc",
    ]) {
      const history = await as(ALICE, "GET", `/api/deal/${raw}/history`);
      const read = await as(ALICE, "GET", `/api/deal/${raw}`);
      expect([history.status, history.text], raw.slice(0, 20)).toEqual([read.status, read.text]);
      expect([400, 404]).toContain(history.status);
      expectNoLeak(history.text);
    }
    // Over a real socket too: the 10 KB id and the NUL byte.
    for (const raw of ["y".repeat(10_240), "a%00b"]) {
      const response = await fetch(`${served.server.url}/api/deal/${raw}/history`, { headers: ALICE });
      expect([400, 404]).toContain(response.status);
      expectNoLeak(await response.text());
    }
    // app.api: a NUL, a missing id and a bad cursor are 400s; server code gets the same answers.
    const call = historyOf(served.app);
    await expect(call({ params: { id: "a\0" }, headers: ALICE })).rejects.toMatchObject({ status: 400 });
    await expect(call({ headers: ALICE })).rejects.toMatchObject({ status: 400, code: "BAD_REQUEST" });
    await expect(call({ params: { id }, headers: ALICE, query: { cursor: "nope" } })).rejects.toMatchObject({
      status: 400,
      code: "BAD_REQUEST",
    });
    await expect(call({ params: { id }, headers: ALICE, query: { limit: -1 } })).rejects.toMatchObject({
      status: 400,
    });
    // The client's query goes out as given: a bad limit is the server's 400 in `error`.
    const { error } = await clientOf(ALICE).deal.history(id, { limit: -1 });
    expect(error).toMatchObject({ status: 400, code: "BAD_REQUEST" });
  });

  it("an app without audit() has no history route: 404", async () => {
    const created = await bare.api.createDeal({
      body: { title: "Plain", ownerId: "alice", margin: 1, pin: "0" },
      headers: ALICE,
    });
    const answer = await call(bare, "GET", `/api/deal/${created.id}/history`, { headers: ALICE });
    expect(answer.status).toBe(404);
    expect(answer.body.code).toBe("NOT_FOUND");
    expect((bare.api as unknown as Record<string, unknown>).readDealHistory).toBeUndefined();
  });
});
