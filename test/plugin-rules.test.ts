// Plugins scope their records with the same rules as resources: upload rules and the audit log's
// rule may return a `Where`, plugin lists page with the app's limits, and an audit entry never
// shows a reader a field the resource's field rules hide from her. SQLite, PostgreSQL, MariaDB.

import {
  apiKey,
  createResource,
  crudkit,
  type DatabaseOptions,
  MemoryStorage,
  ownedBy,
  withId,
} from "crudkit-api";
import { createClient } from "crudkit-api/client";
import { audit, upload } from "crudkit-api/plugins";
import { beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { appPerDialect, forEachDialect } from "./dialects.ts";
import { call, type TestResponse } from "./helpers.ts";

const SECRET = "741852963";
const isAdmin = ({ user }: { user: { roles?: readonly string[] } | null }) =>
  user?.roles?.includes("admin") === true;

const order = createResource({
  name: "order",
  schema: withId({ ownerId: z.string().optional(), item: z.string(), cost: z.number().optional() }),
  // The admin reads every order (and so every order's audit content); the others their own.
  access: {
    ...ownedBy("ownerId", { bypass: (user) => user.roles?.includes("admin") === true }),
    fields: { cost: { read: isAdmin, write: true } },
  },
});

const own = ({ user }: { user: { id: string } | null }) => (user ? { uploadedBy: user.id } : false);

const makeApp = (database: DatabaseOptions) =>
  crudkit({
    database,
    autoMigrate: true,
    defaultLimit: 2,
    maxLimit: 3,
    resources: [order],
    plugins: [
      apiKey({
        keys: {
          "alice-key": { id: "alice" },
          "bob-key": { id: "bob" },
          "admin-key": { id: "admin", roles: ["admin"] },
        },
      }),
      upload({
        storage: new MemoryStorage(),
        access: { upload: true, read: own, download: own, delete: own, list: own },
      }),
      // Admins read every entry; anyone else only the entries of her own changes.
      audit({
        access: { read: ({ user }) => (!user ? false : isAdmin({ user }) ? true : { userId: user.id }) },
      }),
    ],
  });

const alice = { "x-api-key": "alice-key" };
const bob = { "x-api-key": "bob-key" };
const admin = { "x-api-key": "admin-key" };
const file = (name: string) => ({ file: "aGVsbG8=", filename: name, mimeType: "text/plain" });

forEachDialect((dialect) => {
  const app = appPerDialect(dialect, makeApp);
  const files: Record<"alice" | "bob", string[]> = { alice: [], bob: [] };
  const seen: TestResponse[] = [];

  beforeAll(async () => {
    await app.ready;
    for (const [who, headers, names] of [
      ["alice", alice, ["a1.txt", "a2.txt", "a3.txt", "a4.txt"]],
      ["bob", bob, ["b1.txt"]],
    ] as const) {
      for (const name of names) {
        const res = await call(app, "POST", "/api/upload/file", { headers, body: file(name) });
        expect(res.status, res.text).toBe(201);
        files[who].push(res.body.id);
      }
    }
  });

  describe("upload rules", () => {
    it("list only the caller's files, paged with the app's limits", async () => {
      const first = await call(app, "GET", "/api/upload/files", { headers: alice });
      expect(first.body.pagination).toMatchObject({ total: 4, limit: 2, totalPages: 2 });
      expect(first.body.items.every((f: { uploadedBy: string }) => f.uploadedBy === "alice")).toBe(true);
      const clamped = await call(app, "GET", "/api/upload/files?limit=50", { headers: alice });
      expect(clamped.body.pagination.limit).toBe(3);
      const bobs = await call(app, "GET", "/api/upload/files", { headers: bob });
      expect(bobs.body.items.map((f: { originalName: string }) => f.originalName)).toEqual(["b1.txt"]);
      const filtered = await call(app, "GET", "/api/upload/files?filter[originalName][startsWith]=a3", {
        headers: alice,
      });
      expect(filtered.body.items.map((f: { originalName: string }) => f.originalName)).toEqual(["a3.txt"]);
      expect((await call(app, "GET", "/api/upload/files?colour=red", { headers: alice })).status).toBe(400);
      for (const hostile of [
        "filter[path]=x",
        "filter[original_name]=a1.txt",
        "filter[size][gt]=1;drop%20table%20uploaded_files",
        "filter[__proto__][x]=1",
        `filter${"[a]".repeat(1000)}=1`,
        "sortBy=size",
      ]) {
        const res = await call(app, "GET", `/api/upload/files?${hostile}`, { headers: alice });
        expect(res.status, hostile).toBe(400);
        expect(res.text).not.toMatch(/sqlite|syntax|uploaded_files|at /i);
      }
      // Asking for someone else's files finds none: the rule is ANDed, never widened.
      const asked = await call(app, "GET", "/api/upload/files?filter[uploadedBy]=bob", { headers: alice });
      expect(asked.body.pagination.total).toBe(0);
      const typed = createClient<typeof app>({
        baseURL: "http://localhost/api",
        fetch: (input, init) => app.handler(new Request(input, init)),
        headers: alice,
      });
      const { data } = await typed.listFiles({ where: { originalName: { endsWith: "2.txt" } } });
      expect(data?.items.map((f) => f.originalName)).toEqual(["a2.txt"]);
    });

    it("answer another user's file as a missing one, for read, download and delete", async () => {
      const bobs = files.bob[0]!;
      const missing = `${bobs.slice(0, -4)}ffff`;
      for (const [method, path] of [
        ["GET", "/api/upload/file/"],
        ["GET", "/api/upload/download/"],
        ["DELETE", "/api/upload/file/"],
      ] as const) {
        const other = await call(app, method, `${path}${bobs}`, { headers: alice });
        const absent = await call(app, method, `${path}${missing}`, { headers: alice });
        expect(other.status).toBe(404);
        expect(other.text.replace(bobs, "ID")).toBe(absent.text.replace(missing, "ID"));
      }
      expect((await call(app, "GET", `/api/upload/download/${bobs}`, { headers: bob })).text).toBe("hello");
      const gone = files.alice.pop()!;
      expect((await call(app, "DELETE", `/api/upload/file/${gone}`, { headers: alice })).status).toBe(200);
    });
  });

  describe("audit rule", () => {
    it("shows each reader only the entries her rule allows, without fields hidden from her", async () => {
      const created = await call(app, "POST", "/api/order", {
        headers: alice,
        body: { item: "tea", cost: Number(SECRET) },
      });
      expect(created.status, created.text).toBe(201);
      expect(created.body).not.toHaveProperty("cost");
      seen.push(created);
      await call(app, "POST", "/api/order", { headers: bob, body: { item: "milk" } });
      const mine = await call(app, "GET", "/api/audit/logs?limit=3", { headers: alice });
      seen.push(mine);
      expect(mine.status).toBe(200);
      expect(mine.body.items.length).toBeGreaterThan(0);
      expect(mine.body.items.every((e: { userId: string }) => e.userId === "alice")).toBe(true);
      const orderEntry = mine.body.items.find((e: { resource: string }) => e.resource === "order");
      expect(orderEntry.after).toMatchObject({ item: "tea" });
      expect(orderEntry.after).not.toHaveProperty("cost");
      const all = await call(app, "GET", "/api/audit/logs?resource=order", { headers: admin });
      expect(all.body.items.map((e: { userId: string }) => e.userId).sort()).toEqual(["alice", "bob"]);
      expect(all.text).toContain(SECRET);
      expect((await call(app, "GET", "/api/audit/logs")).status).toBe(403);
      for (const res of seen) expect(res.text).not.toContain(SECRET);
    });
  });
});
