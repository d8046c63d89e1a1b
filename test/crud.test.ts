import type { DatabaseOptions } from "crudkit-api";
import { crudkit } from "crudkit-api";
import { describe, expect, it } from "vitest";
import { appPerDialect, forEachDialect } from "./dialects.ts";
import { gadget, loose, openProduct } from "./fixtures.ts";
import { call } from "./helpers.ts";

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

const makeApp = (database: DatabaseOptions) =>
  crudkit({
    database,
    autoMigrate: true,
    resources: [openProduct, gadget, loose],
  });

forEachDialect((dialect) => {
  const app = appPerDialect(dialect, makeApp);

  describe("create", () => {
    it("answers 201 with the record: generated UUIDv7 id, defaults and timestamps", async () => {
      const res = await call(app, "POST", "/api/product", { body: { name: "Hat", price: 5 } });
      expect(res.status).toBe(201);
      expect(res.headers.get("content-type")).toBe("application/json");
      expect(res.body).toEqual({
        id: expect.stringMatching(UUID_V7),
        name: "Hat",
        price: 5,
        status: "draft",
        createdAt: expect.stringMatching(ISO),
        updatedAt: expect.stringMatching(ISO),
      });
      expect(res.body.createdAt).toBe(res.body.updatedAt);
    });

    it("accepts a client-supplied id and refuses a duplicate with 409", async () => {
      const first = await call(app, "POST", "/api/product", { body: { id: "my-id", name: "Hat", price: 1 } });
      expect(first.status).toBe(201);
      expect(first.body.id).toBe("my-id");
      const second = await call(app, "POST", "/api/product", {
        body: { id: "my-id", name: "Other", price: 2 },
      });
      expect(second.status).toBe(409);
      expect(second.body.code).toBe("CONFLICT");
      const read = await call(app, "GET", "/api/product/my-id");
      expect(read.body.name).toBe("Hat");
    });

    it("ids are time-ordered", async () => {
      const a = await call(app, "POST", "/api/product", { body: { name: "A", price: 1 } });
      await new Promise((r) => setTimeout(r, 2));
      const b = await call(app, "POST", "/api/product", { body: { name: "B", price: 1 } });
      expect(a.body.id < b.body.id).toBe(true);
    });

    it("refuses server-managed timestamps in the body", async () => {
      const res = await call(app, "POST", "/api/product", {
        body: { name: "Hat", price: 1, createdAt: "2020-01-01T00:00:00.000Z" },
      });
      expect(res.status).toBe(400);
      expect(res.body.details).toEqual([
        { path: "createdAt", message: expect.stringContaining("read-only") },
      ]);
    });
  });

  describe("read", () => {
    it("answers 200 with the record as created", async () => {
      const created = await call(app, "POST", "/api/product", {
        body: { name: "Scarf", price: 12.5, status: "active" },
      });
      const res = await call(app, "GET", `/api/product/${created.body.id}`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual(created.body);
    });

    it("answers 404 NOT_FOUND for a missing id", async () => {
      const res = await call(app, "GET", "/api/product/nope");
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ code: "NOT_FOUND", message: 'No product with id "nope" exists.' });
    });

    it("decodes ids with /, ? and spaces", async () => {
      const id = "a/b?c d%";
      const created = await call(app, "POST", "/api/product", { body: { id, name: "Odd", price: 1 } });
      expect(created.status).toBe(201);
      const res = await call(app, "GET", `/api/product/${encodeURIComponent(id)}`);
      expect(res.status).toBe(200);
      expect(res.body.id).toBe(id);
    });
  });

  describe("update", () => {
    it("changes only the fields sent, keeps createdAt, moves updatedAt", async () => {
      const created = await call(app, "POST", "/api/product", {
        body: { name: "Boot", price: 30, status: "active" },
      });
      await new Promise((r) => setTimeout(r, 5));
      const res = await call(app, "PATCH", `/api/product/${created.body.id}`, { body: { price: 25 } });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ ...created.body, price: 25, updatedAt: expect.stringMatching(ISO) });
      expect(res.body.updatedAt > created.body.updatedAt).toBe(true);
      // A default must not fill a field the update left out.
      expect(res.body.status).toBe("active");
      const read = await call(app, "GET", `/api/product/${created.body.id}`);
      expect(read.body).toEqual(res.body);
    });

    it("refuses id and timestamps as read-only, naming each", async () => {
      const created = await call(app, "POST", "/api/product", { body: { name: "Boot", price: 30 } });
      const res = await call(app, "PATCH", `/api/product/${created.body.id}`, {
        body: { id: "other", createdAt: "2020-01-01T00:00:00Z", updatedAt: "2020-01-01T00:00:00Z" },
      });
      expect(res.status).toBe(400);
      expect(res.body.code).toBe("VALIDATION_ERROR");
      expect(res.body.details.map((d: { path: string }) => d.path).sort()).toEqual([
        "createdAt",
        "id",
        "updatedAt",
      ]);
      const read = await call(app, "GET", `/api/product/${created.body.id}`);
      expect(read.body).toEqual(created.body);
    });

    it("validates the fields sent", async () => {
      const created = await call(app, "POST", "/api/product", { body: { name: "Boot", price: 30 } });
      const res = await call(app, "PATCH", `/api/product/${created.body.id}`, {
        body: { price: -1, status: "gone" },
      });
      expect(res.status).toBe(400);
      expect(res.body.details.map((d: { path: string }) => d.path)).toEqual(["price", "status"]);
    });

    it("answers 404 for a missing id", async () => {
      const res = await call(app, "PATCH", "/api/product/missing", { body: { price: 1 } });
      expect(res.status).toBe(404);
      expect(res.body.code).toBe("NOT_FOUND");
    });
  });

  describe("delete", () => {
    it("answers { success: true, id }, then the record is gone", async () => {
      const created = await call(app, "POST", "/api/product", { body: { name: "Sock", price: 2 } });
      const res = await call(app, "DELETE", `/api/product/${created.body.id}`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ success: true, id: created.body.id });
      expect((await call(app, "GET", `/api/product/${created.body.id}`)).status).toBe(404);
      expect((await call(app, "DELETE", `/api/product/${created.body.id}`)).status).toBe(404);
    });
  });

  describe("field kinds", () => {
    const body = {
      label: "Lamp",
      note: null,
      count: 3,
      weight: 1.25,
      inStock: true,
      kind: "small",
      releasedAt: "2024-05-06T07:08:09.010Z",
      tags: ["a", "b"],
      dimensions: { width: 2, height: 3.5 },
    };

    it("reads back booleans, integers, floats, enums, dates, arrays and objects as sent", async () => {
      const created = await call(app, "POST", "/api/gadget", { body });
      expect(created.status).toBe(201);
      const read = await call(app, "GET", `/api/gadget/${created.body.id}`);
      expect(read.body).toEqual({
        ...body,
        id: created.body.id,
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      });
      expect(read.body).not.toHaveProperty("description");
      expect(read.body).toEqual(created.body);
    });

    it("accepts a date given without milliseconds and answers it in ISO 8601", async () => {
      const created = await call(app, "POST", "/api/gadget", {
        body: { ...body, releasedAt: "2024-05-06T07:08:09Z" },
      });
      expect(created.body.releasedAt).toBe("2024-05-06T07:08:09.000Z");
    });

    it("refuses wrong types field by field", async () => {
      const res = await call(app, "POST", "/api/gadget", {
        body: {
          ...body,
          count: 1.5,
          inStock: "yes",
          releasedAt: "yesterday",
          tags: "a",
          dimensions: { width: "2" },
        },
      });
      expect(res.status).toBe(400);
      expect(res.body.details.map((d: { path: string }) => d.path)).toEqual([
        "count",
        "inStock",
        "releasedAt",
        "tags",
        "dimensions.width",
        "dimensions.height",
      ]);
    });

    it("reads back a JSON field holding a bare string or number (regression: MariaDB parsed JSON twice)", async () => {
      for (const tags of [["x"], []]) {
        const created = await call(app, "POST", "/api/gadget", {
          body: { ...body, tags, dimensions: { width: 0, height: -1 } },
        });
        expect((await call(app, "GET", `/api/gadget/${created.body.id}`)).body.tags).toEqual(tags);
      }
      const created = await call(app, "POST", "/api/loose", { body: { payload: "just text" } });
      expect((await call(app, "GET", `/api/loose/${created.body.id}`)).body.payload).toBe("just text");
      const number = await call(app, "POST", "/api/loose", { body: { payload: 42 } });
      expect((await call(app, "GET", `/api/loose/${number.body.id}`)).body.payload).toBe(42);
    });

    it("updates a boolean to false and a JSON field", async () => {
      const created = await call(app, "POST", "/api/gadget", { body });
      const res = await call(app, "PATCH", `/api/gadget/${created.body.id}`, {
        body: { inStock: false, tags: [] },
      });
      expect(res.body.inStock).toBe(false);
      expect(res.body.tags).toEqual([]);
      expect(res.body.dimensions).toEqual(body.dimensions);
    });
  });
});
