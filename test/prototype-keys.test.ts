// Issue 42 §1, written as the attack: a field's write rule bypassed by nesting the field under
// `__proto__` (or `constructor.prototype`). No object built from a request may take a prototype
// from it: those keys are a 400 naming the key at every input (bodies at any depth, app.api bodies,
// upload metadata, filters), on SQLite, PostgreSQL and MariaDB, and nothing is stored.

import {
  apiKey,
  createResource,
  crudkit,
  type DatabaseOptions,
  MemoryStorage,
  ownedBy,
  withId,
} from "crudkit-api";
import { upload } from "crudkit-api/plugins";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { appPerDialect, forEachDialect } from "./dialects.ts";
import { call } from "./helpers.ts";

const isAdmin = ({ user }: { user: { roles?: readonly string[] } | null }) =>
  user?.roles?.includes("admin") === true;

/** An owned resource whose `discount` only an admin may write. */
const coupon = createResource({
  name: "coupon",
  schema: withId({
    ownerId: z.string().max(255).optional(),
    item: z.string().max(100),
    discount: z.number().optional(),
    extra: z.record(z.string(), z.unknown()).optional(),
  }),
  access: { ...ownedBy("ownerId"), fields: { discount: { write: isAdmin } } },
  // A hook that spreads the body, as hooks often do.
  hooks: { beforeCreate: ({ data }) => ({ ...data }) },
});

/** Not owned: anyone signed in creates, only an admin may set `verified`. */
const member = createResource({
  name: "member",
  schema: withId({ name: z.string().max(100), verified: z.boolean().default(false) }),
  access: {
    create: ({ user }) => user !== null,
    read: true,
    list: true,
    update: ({ user }) => user !== null,
    fields: { verified: { write: isAdmin } },
  },
});

const makeApp = (database: DatabaseOptions) =>
  crudkit({
    database,
    autoMigrate: true,
    resources: [coupon, member],
    plugins: [
      apiKey({ keys: { "alice-key": { id: "alice" }, "admin-key": { id: "admin", roles: ["admin"] } } }),
      upload({ storage: new MemoryStorage(), access: { upload: true, read: true, list: true } }),
    ],
  });

const alice = { "x-api-key": "alice-key" };
const json = { ...alice, "content-type": "application/json" };

const SMUGGLED = [
  ['{"item":"hat","__proto__":{"discount":90}}', "__proto__"],
  ['{"item":"hat","constructor":{"prototype":{"discount":90}}}', "constructor"],
  ['{"item":"hat","extra":{"a":{"__proto__":{"discount":90}}}}', "__proto__"],
  ['{"item":"hat","prototype":{"discount":90}}', "prototype"],
] as const;

forEachDialect((dialect) => {
  const app = appPerDialect(dialect, makeApp);

  const expectRefused = (res: { status: number; body: any; text: string }, key: string) => {
    expect(res.status, res.text).toBe(400);
    expect(res.body.code).toBe("VALIDATION_ERROR");
    expect(res.body.message).toContain(key);
  };

  describe("over HTTP", () => {
    it.each(SMUGGLED)("create %s is a 400 naming the key, and stores nothing", async (raw, key) => {
      const res = await call(app, "POST", "/api/coupon", { headers: json, rawBody: raw });
      expectRefused(res, key);
      expect((await call(app, "GET", "/api/coupons", { headers: alice })).body.items).toEqual([]);
    });

    it("the plain field is still a 403, and an update smuggling it is a 400 that changes nothing", async () => {
      const plain = await call(app, "POST", "/api/coupon", {
        headers: json,
        rawBody: '{"item":"hat","discount":90}',
      });
      expect(plain.status).toBe(403);
      const made = await call(app, "POST", "/api/coupon", { headers: alice, body: { item: "hat" } });
      expect(made.status).toBe(201);
      const res = await call(app, "PATCH", `/api/coupon/${made.body.id}`, {
        headers: json,
        rawBody: '{"__proto__":{"discount":90,"ownerId":"bob"}}',
      });
      expectRefused(res, "__proto__");
      const read = await call(app, "GET", `/api/coupon/${made.body.id}`, { headers: alice });
      expect(read.body.discount).toBeUndefined();
      expect(read.body.ownerId).toBe("alice");
    });

    it("a resource without ownedBy refuses the smuggled admin-only flag too", async () => {
      const res = await call(app, "POST", "/api/member", {
        headers: json,
        rawBody: '{"name":"m","__proto__":{"verified":true}}',
      });
      expectRefused(res, "__proto__");
      expect((await call(app, "GET", "/api/members")).body.items).toEqual([]);
    });

    it("upload metadata and filters refuse the keys as well", async () => {
      const uploaded = await call(app, "POST", "/api/upload/file", {
        headers: json,
        rawBody: `{"file":"${Buffer.from("hi").toString("base64")}","filename":"a.txt","mimeType":"text/plain","metadata":{"__proto__":{"isAdmin":true}}}`,
      });
      expect(uploaded.status, uploaded.text).toBe(400);
      expect(uploaded.text).toContain("__proto__");
      expect((await call(app, "GET", "/api/upload/files", { headers: alice })).body.items).toEqual([]);
      for (const key of ["__proto__", "constructor", "prototype"]) {
        const res = await call(app, "GET", `/api/coupons?filter[${key}][discount]=90`, { headers: alice });
        expect(res.status, key).toBe(400);
      }
    });
  });

  describe("through app.api", () => {
    it("a parsed body with an own __proto__ key, or an object with a prototype, is refused", async () => {
      for (const body of [
        JSON.parse('{"item":"hat","__proto__":{"discount":90}}'),
        Object.assign(Object.create({ discount: 90 }), { item: "hat" }),
      ]) {
        const res = await app.api.createCoupon({ body, headers: alice, asResponse: true });
        expect(res.status).toBe(400);
        expect(((await res.json()) as { code: string }).code).toBe("VALIDATION_ERROR");
      }
      const updated = await app.api
        .createMember({
          body: JSON.parse('{"name":"x","constructor":{"prototype":{"verified":true}}}'),
          headers: alice,
        })
        .catch((e: unknown) => e);
      expect(updated).toMatchObject({ status: 400 });
      expect((await call(app, "GET", "/api/members")).body.items).toEqual([]);
    });
  });
});
