// Optimistic concurrency on every database: ETag on read, create and update (also from the cache),
// 304 for a current If-None-Match, If-Match on update and delete (412 when stale, decided under
// the row lock: of 50 concurrent writers holding one version exactly one wins), 428 where the
// resource requires it, and tags that follow field rules and row rules without leaking either.

import { APIError, createResource, crudkit, type DatabaseOptions, etagOf, withId } from "crudkit-api";
import { createClient } from "crudkit-api/client";
import { cache } from "crudkit-api/plugins";
import { describe, expect, expectTypeOf, it } from "vitest";
import { z } from "zod";
import { forEachDialect, servedPerDialect } from "./dialects.ts";
import { call } from "./helpers.ts";

const isAdmin = ({ user }: { user: { roles?: readonly string[] } | null }) =>
  user?.roles?.includes("admin") === true;

const note = createResource({
  name: "note",
  schema: withId({
    title: z.string().max(200),
    owner: z.string(),
    secret: z.string().optional(),
    tags: z.array(z.string()).optional(),
    meta: z.record(z.string(), z.unknown()).optional(),
  }),
  access: {
    create: true,
    read: ({ user }) => (isAdmin({ user }) ? true : { owner: user?.id ?? "" }),
    list: true,
    update: ({ user }) => (isAdmin({ user }) ? true : { owner: user?.id ?? "" }),
    delete: ({ user }) => (isAdmin({ user }) ? true : { owner: user?.id ?? "" }),
    fields: { secret: { read: isAdmin } },
  },
});

const ledger = createResource({
  name: "ledger",
  schema: withId({ balance: z.number() }),
  requireIfMatch: true,
  access: { create: true, read: true, update: true, delete: true, list: true },
});

const makeApp = (database: DatabaseOptions) =>
  crudkit({
    database,
    autoMigrate: true,
    resources: [note, ledger],
    plugins: [cache({ resources: ["ledger"] })],
    identify: (request) => {
      const id = request.headers.get("x-user");
      return id ? { id, roles: id === "root" ? ["admin"] : [] } : null;
    },
  });

const ROOT = { "x-user": "root" };
const ANN = { "x-user": "ann" };
const BOB = { "x-user": "bob" };

forEachDialect((dialect) => {
  const served = servedPerDialect(dialect, makeApp);
  const api = () => served.app.api;
  const createNote = async (body: Record<string, unknown>, headers = ANN) => {
    const res = await call(served.app, "POST", "/api/note", { body, headers });
    expect(res.status).toBe(201);
    return res;
  };

  describe("ETag", () => {
    it("create, read and update carry the record's version; read agrees with create, and etagOf agrees with both", async () => {
      const created = await createNote({
        title: "Plan",
        owner: "ann",
        tags: ["b", "a"],
        meta: { z: 1, a: { y: [1, 2], b: null } },
      });
      const etag = created.headers.get("etag")!;
      expect(etag).toMatch(/^"[0-9a-f]{16}"$/);
      expect(etagOf(created.body)).toBe(etag);
      const read = await call(served.app, "GET", `/api/note/${created.body.id}`, { headers: ANN });
      expect(read.headers.get("etag")).toBe(etag);
      const updated = await call(served.app, "PATCH", `/api/note/${created.body.id}`, {
        body: { title: "Plan B" },
        headers: ANN,
      });
      expect(updated.status).toBe(200);
      expect(updated.headers.get("etag")).not.toBe(etag);
      expect(updated.headers.get("etag")).toBe(etagOf(updated.body));
      const again = await call(served.app, "GET", `/api/note/${created.body.id}`, { headers: ANN });
      expect(again.headers.get("etag")).toBe(updated.headers.get("etag"));
      // Lists and deletes carry no single version.
      expect((await call(served.app, "GET", "/api/notes", { headers: ANN })).headers.get("etag")).toBeNull();
    });

    it("If-None-Match: 304 with no body for the current version (weak or strong, or *), 200 otherwise", async () => {
      const { body, headers } = await createNote({ title: "Cached", owner: "ann" });
      const etag = headers.get("etag")!;
      const path = `/api/note/${body.id}`;
      for (const ifNoneMatch of [etag, `W/${etag}`, `"other", ${etag}`, "*"]) {
        const res = await call(served.app, "GET", path, {
          headers: { ...ANN, "if-none-match": ifNoneMatch },
        });
        expect(res.status).toBe(304);
        expect(res.text).toBe("");
        expect(res.headers.get("etag")).toBe(etag);
      }
      for (const ifNoneMatch of ['"other"', "not a tag"]) {
        const res = await call(served.app, "GET", path, {
          headers: { ...ANN, "if-none-match": ifNoneMatch },
        });
        expect(res.status).toBe(200);
        expect(res.body.title).toBe("Cached");
      }
      // A caller outside the row gets the 404 of a missing id, never a 304 that confirms it exists.
      const outside = await call(served.app, "GET", path, { headers: { ...BOB, "if-none-match": "*" } });
      expect(outside.status).toBe(404);
    });

    it("a hidden field shapes the tag (each caller's version is what she sees) and never leaks through it", async () => {
      const { body } = await createNote({ title: "Payroll", owner: "ann", secret: "s3cr3t-pay" }, ROOT);
      const asRoot = await call(served.app, "GET", `/api/note/${body.id}`, { headers: ROOT });
      const asAnn = await call(served.app, "GET", `/api/note/${body.id}`, { headers: ANN });
      expect(asAnn.body.secret).toBeUndefined();
      expect(asRoot.body.secret).toBe("s3cr3t-pay");
      expect(asAnn.headers.get("etag")).toBe(etagOf(asAnn.body));
      expect(asRoot.headers.get("etag")).toBe(etagOf(asRoot.body));
      expect(asAnn.headers.get("etag")).not.toBe(asRoot.headers.get("etag"));
      // Ann's own version is the one she may change with.
      const changed = await call(served.app, "PATCH", `/api/note/${body.id}`, {
        body: { title: "Payroll 2" },
        headers: { ...ANN, "if-match": asAnn.headers.get("etag")! },
      });
      expect(changed.status).toBe(200);
      expect(changed.body.secret).toBeUndefined();
      expect(changed.text).not.toContain("s3cr3t-pay");
    });

    it("the cache answers with the same tag, and 304 from a hit", async () => {
      const created = await call(served.app, "POST", "/api/ledger", { body: { balance: 10 } });
      const etag = created.headers.get("etag")!;
      const path = `/api/ledger/${created.body.id}`;
      const miss = await fetch(`${served.server.url}${path}`);
      expect(miss.headers.get("x-cache")).toBe("MISS");
      expect(miss.headers.get("etag")).toBe(etag);
      expect(await miss.json()).toEqual(created.body);
      const hit = await fetch(`${served.server.url}${path}`);
      expect(hit.headers.get("x-cache")).toBe("HIT");
      expect(hit.headers.get("etag")).toBe(etag);
      expect(await hit.json()).toEqual(created.body);
      const revalidated = await fetch(`${served.server.url}${path}`, { headers: { "if-none-match": etag } });
      expect(revalidated.status).toBe(304);
      expect(revalidated.headers.get("etag")).toBe(etag);
      // After a write the hit is gone and the tag moved on.
      await call(served.app, "PATCH", path, { body: { balance: 11 }, headers: { "if-match": etag } });
      const fresh = await fetch(`${served.server.url}${path}`, { headers: { "if-none-match": etag } });
      expect(fresh.status).toBe(200);
      expect(fresh.headers.get("etag")).not.toBe(etag);
    });
  });

  describe("If-Match", () => {
    it("a stale version answers 412 and changes nothing; the current one (or *, or a list holding it) passes", async () => {
      const { body, headers } = await createNote({ title: "v1", owner: "ann" });
      const v1 = headers.get("etag")!;
      const path = `/api/note/${body.id}`;
      const v2 = await call(served.app, "PATCH", path, {
        body: { title: "v2" },
        headers: { ...ANN, "if-match": v1 },
      });
      expect(v2.status).toBe(200);
      const stale = await call(served.app, "PATCH", path, {
        body: { title: "lost update" },
        headers: { ...ANN, "if-match": v1 },
      });
      expect(stale.status).toBe(412);
      expect(stale.body.code).toBe("PRECONDITION_FAILED");
      expect(stale.headers.get("etag")).toBe(v2.headers.get("etag"));
      // A weak tag never matches If-Match (strong comparison).
      const weak = await call(served.app, "PATCH", path, {
        body: { title: "weak" },
        headers: { ...ANN, "if-match": `W/${v2.headers.get("etag")}` },
      });
      expect(weak.status).toBe(412);
      expect((await call(served.app, "GET", path, { headers: ANN })).body.title).toBe("v2");
      const listed = await call(served.app, "PATCH", path, {
        body: { title: "v3" },
        headers: { ...ANN, "if-match": `"nope", ${v2.headers.get("etag")}` },
      });
      expect(listed.status).toBe(200);
      const star = await call(served.app, "PATCH", path, {
        body: { title: "v4" },
        headers: { ...ANN, "if-match": "*" },
      });
      expect(star.status).toBe(200);
      const staleDelete = await call(served.app, "DELETE", path, { headers: { ...ANN, "if-match": v1 } });
      expect(staleDelete.status).toBe(412);
      expect((await call(served.app, "GET", path, { headers: ANN })).status).toBe(200);
      const deleted = await call(served.app, "DELETE", path, {
        headers: { ...ANN, "if-match": star.headers.get("etag")! },
      });
      expect(deleted.status).toBe(200);
      expect((await call(served.app, "GET", path, { headers: ANN })).status).toBe(404);
    });

    it("50 concurrent updates holding one version over real sockets: exactly one 200, 49 × 412", async () => {
      const created = await call(served.app, "POST", "/api/ledger", { body: { balance: 0 } });
      const etag = created.headers.get("etag")!;
      const answers = await Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          fetch(`${served.server.url}/api/ledger/${created.body.id}`, {
            method: "PATCH",
            headers: { "content-type": "application/json", "if-match": etag },
            body: JSON.stringify({ balance: i + 1 }),
          }).then(async (r) => ({ status: r.status, body: (await r.json()) as any })),
        ),
      );
      const won = answers.filter((a) => a.status === 200);
      expect(won).toHaveLength(1);
      expect(answers.filter((a) => a.status === 412)).toHaveLength(49);
      const final = await call(served.app, "GET", `/api/ledger/${created.body.id}`);
      expect(final.body.balance).toBe(won[0]!.body.balance);
    });

    it("50 concurrent deletes holding one version: exactly one 200, the rest 412 or 404", async () => {
      const created = await call(served.app, "POST", "/api/ledger", { body: { balance: 0 } });
      const etag = created.headers.get("etag")!;
      const answers = await Promise.all(
        Array.from({ length: 50 }, () =>
          fetch(`${served.server.url}/api/ledger/${created.body.id}`, {
            method: "DELETE",
            headers: { "if-match": etag },
          }).then((r) => r.status),
        ),
      );
      expect(answers.filter((s) => s === 200)).toHaveLength(1);
      expect(answers.every((s) => s === 200 || s === 404 || s === 412)).toBe(true);
    });

    it("a caller outside the row rule gets the 404 of a missing id, whatever If-Match says", async () => {
      const { body, headers } = await createNote({ title: "Ann's", owner: "ann" });
      for (const ifMatch of [headers.get("etag")!, '"stale"', "*"]) {
        for (const method of ["PATCH", "DELETE"]) {
          const res = await call(served.app, method, `/api/note/${body.id}`, {
            ...(method === "PATCH" ? { body: { title: "mine" } } : {}),
            headers: { ...BOB, "if-match": ifMatch },
          });
          expect(res.status).toBe(404);
          expect(res.body.code).toBe("NOT_FOUND");
        }
      }
    });

    it("hostile If-Match headers are a 400, never a 500 or a match", async () => {
      const { body } = await createNote({ title: "Hostile", owner: "ann" });
      const path = `/api/note/${body.id}`;
      const cases = [
        "abc",
        '"a" OR 1=1',
        "'x'",
        '"unterminated',
        Array.from({ length: 65 }, (_, i) => `"t${i}"`).join(", "),
        '"a\tb"',
        `W/"x", *`,
      ];
      for (const ifMatch of cases) {
        const res = await call(served.app, "PATCH", path, {
          body: { title: "x" },
          headers: { ...ANN, "if-match": ifMatch },
        });
        expect(res.status, ifMatch).toBe(400);
        expect(res.body.code).toBe("BAD_REQUEST");
      }
      // Empty list elements are ignored (RFC 9110 §5.6.1): two tags that are not this version.
      const spaced = await call(served.app, "PATCH", path, {
        body: { title: "x" },
        headers: { ...ANN, "if-match": `"${"x".repeat(20)}" , , "y"` },
      });
      expect(spaced.status).toBe(412);
      const huge = await call(served.app, "PATCH", path, {
        body: { title: "x" },
        headers: { ...ANN, "if-match": `"${"x".repeat(8000)}"` },
      });
      expect(huge.status).toBe(412);
      expect((await call(served.app, "GET", path, { headers: ANN })).body.title).toBe("Hostile");
    });
  });

  describe("requireIfMatch", () => {
    it("updates and deletes without If-Match answer 428 and change nothing; server code overriding access is exempt", async () => {
      const created = await call(served.app, "POST", "/api/ledger", { body: { balance: 5 } });
      const path = `/api/ledger/${created.body.id}`;
      const update = await call(served.app, "PATCH", path, { body: { balance: 6 } });
      expect(update.status).toBe(428);
      expect(update.body.code).toBe("PRECONDITION_REQUIRED");
      const remove = await call(served.app, "DELETE", path);
      expect(remove.status).toBe(428);
      expect((await call(served.app, "GET", path)).body.balance).toBe(5);
      await expect(
        api().updateLedger({ params: { id: created.body.id }, body: { balance: 6 } }),
      ).rejects.toMatchObject({ status: 428 });
      const forced = await api().updateLedger({
        params: { id: created.body.id },
        body: { balance: 7 },
        overrideAccess: true,
      });
      expect(forced.balance).toBe(7);
    });
  });

  describe("client and app.api", () => {
    it("the client returns each record's etag and sends ifMatch; stale is a 412 in error", async () => {
      const client = createClient<ReturnType<typeof makeApp>>({
        baseURL: `${served.server.url}/api`,
        headers: ANN,
      });
      const created = await client.note.create({ title: "Client", owner: "ann" });
      expect(created.error).toBeNull();
      expect(created.etag).toBe(etagOf(created.data!));
      const read = await client.note.read(created.data!.id);
      expect(read.etag).toBe(created.etag);
      expectTypeOf(read.etag).toEqualTypeOf<string | undefined>();
      const updated = await client.note.update(
        created.data!.id,
        { title: "Client 2" },
        { ifMatch: read.etag! },
      );
      expect(updated.error).toBeNull();
      const stale = await client.note.update(created.data!.id, { title: "lost" }, { ifMatch: read.etag! });
      expect(stale.error).toMatchObject({ status: 412, code: "PRECONDITION_FAILED" });
      const staleDelete = await client.note.delete(created.data!.id, { ifMatch: read.etag! });
      expect(staleDelete.error?.status).toBe(412);
      const deleted = await client.note.delete(created.data!.id, { ifMatch: updated.etag! });
      expect(deleted.data).toEqual({ success: true, id: created.data!.id });
    });

    it("app.api: etagOf(record) names the version; ifMatch on update and delete; stale throws 412", async () => {
      const hat = await api().createLedger({ body: { balance: 1 } });
      const read = await api().readLedger({ params: { id: hat.id } });
      expect(etagOf(read)).toBe(etagOf(hat));
      const next = await api().updateLedger({
        params: { id: hat.id },
        body: { balance: 2 },
        ifMatch: etagOf(read),
      });
      expect(next.balance).toBe(2);
      const stale = api().updateLedger({
        params: { id: hat.id },
        body: { balance: 3 },
        ifMatch: etagOf(read),
      });
      await expect(stale).rejects.toBeInstanceOf(APIError);
      await expect(stale).rejects.toMatchObject({ status: 412, code: "PRECONDITION_FAILED" });
      const response = await api().readLedger({ params: { id: hat.id }, asResponse: true });
      expect(response.headers.get("etag")).toBe(etagOf(next));
      await expect(
        api().deleteLedger({ params: { id: hat.id }, ifMatch: 'bad"\nvalue' }),
      ).rejects.toMatchObject({ status: 400 });
      expect(await api().deleteLedger({ params: { id: hat.id }, ifMatch: etagOf(next) })).toEqual({
        success: true,
        id: hat.id,
      });
      // @ts-expect-error ifMatch is a string
      void (() => api().updateLedger({ params: { id: "x" }, body: {}, ifMatch: 1 }));
    });
  });
});
