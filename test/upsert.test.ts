// Upsert (issue 41 §3) on SQLite, PostgreSQL and MariaDB: PUT /<resource>/:id creates the record
// with that id (201, create rule) or replaces it whole (200, update rule and row rule, the fields
// left out take their defaults); an id the caller may not update answers byte for byte what a POST
// with that id answers; If-None-Match: * creates only, If-Match replaces only that version;
// POST ?onConflict=<unique field> updates the record holding that value. Through HTTP, app.api and
// the client, with the audit entries saying which happened, and hostile bodies refused.

import { apiKey, createResource, crudkit, type DatabaseOptions, ownedBy, withId } from "crudkit-api";
import { createClient } from "crudkit-api/client";
import { audit } from "crudkit-api/plugins";
import { beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { appPerDialect, forEachDialect } from "./dialects.ts";
import { call, expectNoLeak } from "./helpers.ts";

const isAdmin = ({ user }: { user: { roles?: readonly string[] } | null }) =>
  user?.roles?.includes("admin") === true;

const item = createResource({
  name: "item",
  schema: withId({
    ownerId: z.string().max(255).optional(),
    sku: z.string().max(40),
    name: z.string().max(100),
    status: z.enum(["draft", "live"]).default("draft"),
    note: z.string().max(100).optional(),
    price: z.number().nullable().optional(),
    secret: z.string().max(100).optional(),
    tier: z.enum(["basic", "gold"]).default("basic"),
  }),
  unique: ["sku"],
  access: {
    ...ownedBy("ownerId", { bypass: (user) => user.roles?.includes("admin") ?? false }),
    fields: { secret: { read: isAdmin, write: isAdmin }, tier: { write: isAdmin } },
  },
});

const keys = apiKey({
  keys: {
    "alice-key": { id: "alice" },
    "bob-key": { id: "bob" },
    "admin-key": { id: "admin", roles: ["admin"] },
  },
});
const ALICE = { "x-api-key": "alice-key" };
const BOB = { "x-api-key": "bob-key" };
const ADMIN = { "x-api-key": "admin-key" };

const makeApp = (database: DatabaseOptions) =>
  crudkit({
    database,
    autoMigrate: true,
    resources: [item],
    plugins: [keys, audit({ access: { read: isAdmin } })],
  });

forEachDialect((dialect) => {
  const app = appPerDialect(dialect, makeApp);
  const put = (
    headers: Record<string, string>,
    id: string,
    body: unknown,
    extra: Record<string, string> = {},
  ) => call(app, "PUT", `/api/item/${encodeURIComponent(id)}`, { headers: { ...headers, ...extra }, body });
  // PostgreSQL queues audit entries until they are sealed, a few milliseconds after commit.
  const entries = async (recordId: string) => {
    await app.audit.seal();
    const rows = await app.db
      .selectFrom("audit_logs")
      .select(["operation", "user_id"])
      .where("record_id", "=", recordId)
      .orderBy("created_at")
      .orderBy("id")
      .execute();
    return rows.map((row) => `${row.operation} ${row.user_id}`);
  };
  const count = async () =>
    Number(
      (
        await app.db
          .selectFrom("item")
          .select((eb) => eb.fn.countAll().as("n"))
          .executeTakeFirst()
      )?.n,
    );

  let bobsId = "";
  beforeAll(async () => {
    bobsId = (await call(app, "POST", "/api/item", { headers: BOB, body: { sku: "B-1", name: "bob's" } }))
      .body.id;
  });

  describe("PUT /<resource>/:id", () => {
    it("creates the record with that id (201), then replaces it whole (200): left-out fields take their defaults", async () => {
      const created = await put(ALICE, "a-1", {
        sku: "A-1",
        name: "first",
        status: "live",
        note: "n",
        price: 3,
      });
      expect(created.status).toBe(201);
      expect(created.body).toMatchObject({
        id: "a-1",
        ownerId: "alice",
        sku: "A-1",
        status: "live",
        note: "n",
        price: 3,
      });
      expect(created.headers.get("etag")).toBeTruthy();
      const replaced = await put(ALICE, "a-1", { sku: "A-1", name: "second" });
      expect(replaced.status).toBe(200);
      expect(replaced.body).toMatchObject({ id: "a-1", ownerId: "alice", name: "second", status: "draft" });
      expect(replaced.body.note).toBeUndefined();
      expect(replaced.body.price ?? null).toBeNull();
      expect(replaced.body.createdAt).toBe(created.body.createdAt);
      const read = await call(app, "GET", "/api/item/a-1", { headers: ALICE });
      expect(read.body).toEqual(replaced.body);
      // The audit entries and hooks say which happened.
      expect(await entries("a-1")).toEqual(["create alice", "update alice"]);
    });

    it("an id outside her rows answers byte for byte what a POST with that id answers, and changes nothing", async () => {
      const before = await call(app, "GET", `/api/item/${bobsId}`, { headers: BOB });
      const byPut = await put(ALICE, bobsId, { sku: "X-9", name: "taken" });
      const byPost = await call(app, "POST", "/api/item", {
        headers: ALICE,
        body: { id: bobsId, sku: "X-9", name: "taken" },
      });
      expect(byPut.status).toBe(409);
      expect(byPut.text).toBe(byPost.text);
      expect(byPut.body.code).toBe("CONFLICT");
      expectNoLeak(byPut.text);
      // If-None-Match: * changes nothing about it: still the POST's answer. If-Match never creates:
      // the 412 a missing id gets (below).
      expect((await put(ALICE, bobsId, { sku: "X-9", name: "t" }, { "if-none-match": "*" })).text).toBe(
        byPost.text,
      );
      expect((await put(ALICE, bobsId, { sku: "X-9", name: "t" }, { "if-match": '"abc"' })).status).toBe(412);
      expect((await call(app, "GET", `/api/item/${bobsId}`, { headers: BOB })).body).toEqual(before.body);
      expect(await entries(bobsId)).toEqual(["create bob"]);
    });

    it("If-None-Match: * creates only; If-Match replaces only that version (412 otherwise, nothing changed)", async () => {
      expect((await put(ALICE, "a-2", { sku: "A-2", name: "x" }, { "if-match": '"nope"' })).status).toBe(412);
      expect(await count()).toBeGreaterThan(0);
      expect((await call(app, "GET", "/api/item/a-2", { headers: ALICE })).status).toBe(404);
      const made = await put(ALICE, "a-2", { sku: "A-2", name: "x" }, { "if-none-match": "*" });
      expect(made.status).toBe(201);
      const again = await put(ALICE, "a-2", { sku: "A-2", name: "y" }, { "if-none-match": "*" });
      expect(again.status).toBe(412);
      expect(again.body.code).toBe("PRECONDITION_FAILED");
      const stale = await put(ALICE, "a-2", { sku: "A-2", name: "y" }, { "if-match": '"stale"' });
      expect(stale.status).toBe(412);
      const fresh = await put(
        ALICE,
        "a-2",
        { sku: "A-2", name: "y" },
        { "if-match": made.headers.get("etag")! },
      );
      expect(fresh.status).toBe(200);
      expect(fresh.body.name).toBe("y");
      expect(await entries("a-2")).toEqual(["create alice", "update alice"]);
    });

    it("a field with a write rule keeps its value when a PUT leaves it out; sending it is refused as on PATCH", async () => {
      const made = await put(ADMIN, "s-1", { ownerId: "alice", sku: "S-1", name: "x", secret: "s3cret" });
      expect(made.status).toBe(201);
      const replaced = await put(ALICE, "s-1", { sku: "S-1", name: "by alice" });
      expect(replaced.status).toBe(200);
      expect(replaced.body.secret).toBeUndefined();
      expect(JSON.stringify(replaced.body)).not.toContain("s3cret");
      expect((await call(app, "GET", "/api/item/s-1", { headers: ADMIN })).body.secret).toBe("s3cret");
      const refused = await put(ALICE, "s-1", { sku: "S-1", name: "z", secret: "mine" });
      expect(refused.status).toBe(403);
      expect((await call(app, "GET", "/api/item/s-1", { headers: ADMIN })).body).toMatchObject({
        name: "by alice",
        secret: "s3cret",
      });
    });

    it("a write-ruled field with a default, and the owner, keep their stored values when a PUT leaves them out", async () => {
      const made = await put(ADMIN, "t-1", { ownerId: "alice", sku: "T-1", name: "x", tier: "gold" });
      expect(made.status).toBe(201);
      const byAlice = await put(ALICE, "t-1", { sku: "T-1", name: "by alice" });
      expect(byAlice.status).toBe(200);
      expect(byAlice.body).toMatchObject({ tier: "gold", ownerId: "alice" });
      // The admin (the owner rule's bypass) replacing it without ownerId does not take it over.
      const byAdmin = await put(ADMIN, "t-1", { sku: "T-1", name: "by admin" });
      expect(byAdmin.status).toBe(200);
      expect(byAdmin.body).toMatchObject({ ownerId: "alice", tier: "gold", name: "by admin" });
      expect((await call(app, "GET", "/api/item/t-1", { headers: ALICE })).status).toBe(200);
    });

    it("with If-Match, a missing id and one she may not update get the same 412", async () => {
      const missing = await put(ALICE, "nobody-here", { sku: "M-1", name: "x" }, { "if-match": '"v"' });
      const bobs = await put(ALICE, bobsId, { sku: "M-1", name: "x" }, { "if-match": '"v"' });
      expect(missing.status).toBe(412);
      expect(bobs.text).toBe(missing.text);
      const invalid = await put(ALICE, bobsId, { nope: 1 }, { "if-match": '"v"' });
      expect(invalid.text).toBe(missing.text);
    });

    it("concurrent PUTs of one new id: one creates, the others replace, one row", async () => {
      const answers = await Promise.all(
        Array.from({ length: 6 }, (_, i) => put(ALICE, "race-1", { sku: "R-1", name: `n${i}` })),
      );
      const statuses = answers.map((a) => a.status).sort();
      expect(statuses).toEqual([200, 200, 200, 200, 200, 201]);
      const rows = await app.db.selectFrom("item").select("id").where("id", "=", "race-1").execute();
      expect(rows).toHaveLength(1);
    });

    it("hostile bodies get a 4xx and store nothing", async () => {
      const before = await count();
      const cases: [unknown, number][] = [
        [{ sku: "H-1", name: "x", id: "other" }, 400],
        [{ name: "no sku" }, 400],
        [["an", "array"], 400],
        ["text", 400],
        [{ sku: "H-1", name: "x", extra: 1 }, 400],
        [{ sku: "H-1", name: "x", createdAt: "2020-01-01T00:00:00Z" }, 400],
        [{ sku: "H\u0000-1", name: "x" }, 400],
        [{ sku: "H-1", name: "x".repeat(10_000) }, 400],
        [JSON.parse('{"sku":"H-1","name":"x","__proto__":{"ownerId":"bob"}}'), 400],
      ];
      for (const [body, status] of cases) {
        const res = await put(ALICE, "h-1", body);
        expect(res.status, JSON.stringify(body).slice(0, 80)).toBe(status);
        expectNoLeak(res.text);
      }
      // A JSON body sent without Content-Type, or as text: 415; a constructor key: refused.
      for (const headers of [ALICE, { ...ALICE, "content-type": "text/plain" }]) {
        const raw = await call(app, "PUT", "/api/item/h-1", { headers, rawBody: '{"sku":"H-1","name":"x"}' });
        expect(raw.status).toBe(415);
        expectNoLeak(raw.text);
      }
      const ctor = await put(
        ALICE,
        "h-1",
        JSON.parse('{"sku":"H-1","name":"x","constructor":{"prototype":{"x":1}}}'),
      );
      expect(ctor.status).toBe(400);
      const deep = await call(app, "PUT", "/api/item/h-1", {
        headers: { ...ALICE, "content-type": "application/json" },
        rawBody: `{"sku":"H-1","name":"x","note":${"[".repeat(5000)}${"]".repeat(5000)}}`,
      });
      expect(deep.status).toBe(400);
      const longId = await put(ALICE, "x".repeat(300), { sku: "H-2", name: "x" });
      expect(longId.status).toBe(400);
      // Another owner in the body is refused, as on a create.
      expect((await put(ALICE, "h-2", { ownerId: "bob", sku: "H-3", name: "x" })).status).toBe(403);
      expect(await count()).toBe(before);
      expect(({} as Record<string, unknown>).ownerId).toBeUndefined();
    });

    it("a caller with no rule to create or update is refused before any lookup", async () => {
      const res = await call(app, "PUT", `/api/item/${bobsId}`, { body: { sku: "Z", name: "z" } });
      expect([401, 403]).toContain(res.status);
    });
  });

  describe("POST ?onConflict=<unique field>", () => {
    const post = (headers: Record<string, string>, body: unknown, onConflict = "sku") =>
      call(app, "POST", `/api/item?onConflict=${encodeURIComponent(onConflict)}`, { headers, body });

    it("creates (201), then updates the record holding the value with the fields sent (200)", async () => {
      const made = await post(ALICE, { sku: "OC-1", name: "first", note: "kept" });
      expect(made.status).toBe(201);
      const again = await post(ALICE, { sku: "OC-1", name: "second" });
      expect(again.status).toBe(200);
      expect(again.body).toMatchObject({ id: made.body.id, name: "second", note: "kept" });
      expect(await entries(made.body.id)).toEqual(["create alice", "update alice"]);
      // The body's own id, when it names the holder, is fine; another id is a plain duplicate.
      expect((await post(ALICE, { id: made.body.id, sku: "OC-1", name: "third" })).status).toBe(200);
      expect((await post(ALICE, { id: "someone-else", sku: "OC-1", name: "x" })).status).toBe(409);
    });

    it("a value held by a record she may not update answers byte for byte the plain duplicate's 409", async () => {
      const plain = await call(app, "POST", "/api/item", {
        headers: ALICE,
        body: { sku: "B-1", name: "mine" },
      });
      const upserted = await post(ALICE, { sku: "B-1", name: "mine" });
      expect(plain.status).toBe(409);
      expect(upserted.text).toBe(plain.text);
      expect((await call(app, "GET", `/api/item/${bobsId}`, { headers: BOB })).body.name).toBe("bob's");
    });

    it("onConflict must name a field unique on its own: anything else is a 400 and nothing is stored", async () => {
      const before = await count();
      for (const field of [
        "name",
        "id",
        "sku; drop table item",
        "sku\u0000",
        "s".repeat(10_000),
        "ownerId",
      ]) {
        const res = await post(ALICE, { sku: "OC-9", name: "x" }, field);
        expect(res.status, field.slice(0, 30)).toBe(400);
        // A NUL byte is refused with the query's other parameters, before the endpoint runs.
        if (!field.includes("\u0000"))
          expect(res.body.details).toEqual([{ path: "onConflict", message: "One of: sku." }]);
        expectNoLeak(res.text);
      }
      // A wrong type for the unique field is the create's validation error.
      expect((await post(ALICE, { sku: { $gt: "" }, name: "x" })).status).toBe(400);
      expect(await count()).toBe(before);
    });

    it("through app.api and the client", async () => {
      const made = await app.api.createItem({
        body: { sku: "OC-API", name: "a" },
        query: { onConflict: "sku" },
        headers: ALICE,
      });
      const updated = await app.api.createItem({
        body: { sku: "OC-API", name: "b" },
        query: { onConflict: "sku" },
        headers: ALICE,
      });
      expect(updated).toMatchObject({ id: made.id, name: "b" });
      const client = createClient<typeof app>({
        baseURL: "http://localhost/api",
        headers: ALICE,
        fetch: (input, init) => app.handler(new Request(input, init)),
      });
      const viaClient = await client.item.create({ sku: "OC-API", name: "c" }, { onConflict: "sku" });
      expect(viaClient.data).toMatchObject({ id: made.id, name: "c" });
      const taken = await client.item.create({ sku: "B-1", name: "c" }, { onConflict: "sku" });
      expect(taken.error).toMatchObject({ status: 409, code: "CONFLICT" });
    });
  });

  describe("upsert through app.api and the client", () => {
    it("app.api.upsertItem creates then replaces; the client's upsert does the same", async () => {
      const made = await app.api.upsertItem({
        params: { id: "api-1" },
        body: { sku: "API-1", name: "one" },
        headers: ALICE,
      });
      expect(made).toMatchObject({ id: "api-1", ownerId: "alice", name: "one" });
      const replaced = await app.api.upsertItem({
        params: { id: "api-1" },
        body: { sku: "API-1", name: "two", note: "n" },
        headers: ALICE,
      });
      expect(replaced).toMatchObject({ id: "api-1", name: "two", note: "n" });
      await expect(
        app.api.upsertItem({ params: { id: bobsId }, body: { sku: "Q", name: "q" }, headers: ALICE }),
      ).rejects.toMatchObject({ status: 409, code: "CONFLICT" });

      const client = createClient<typeof app>({
        baseURL: "http://localhost/api",
        headers: ALICE,
        fetch: (input, init) => app.handler(new Request(input, init)),
      });
      const first = await client.item.upsert("cl-1", { sku: "CL-1", name: "c" });
      expect(first.error).toBeNull();
      expect(first.data?.id).toBe("cl-1");
      const second = await client.item.upsert("cl-1", { sku: "CL-1", name: "d" }, { ifMatch: first.etag! });
      expect(second.data?.name).toBe("d");
      const stale = await client.item.upsert("cl-1", { sku: "CL-1", name: "e" }, { ifMatch: first.etag! });
      expect(stale.error?.status).toBe(412);
      const taken = await client.item.upsert(bobsId, { sku: "CL-2", name: "c" });
      expect(taken.error).toMatchObject({ status: 409, code: "CONFLICT" });
    });
  });
});
