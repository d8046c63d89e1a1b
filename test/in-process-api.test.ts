import type { DatabaseOptions } from "crudkit-api";
import { APIError, apiKey, createResource, crudkit, type ListResult, withId } from "crudkit-api";
import { describe, expect, expectTypeOf, it } from "vitest";
import { z } from "zod";
import { appPerDialect, forEachDialect } from "./dialects.ts";
import { productSchema } from "./fixtures.ts";
import { call } from "./helpers.ts";

const product = createResource({
  name: "product",
  schema: productSchema,
  searchable: ["name"],
  access: {
    create: ({ user }) => user !== null,
    read: true,
    update: ({ user }) => user?.roles?.includes("admin") ?? false,
    delete: false,
    list: true,
  },
});
const category = createResource({
  name: "category",
  schema: withId({ title: z.string() }),
  access: { list: true },
});
const sheep = createResource({ name: "sheep", schema: withId({ name: z.string() }), access: { list: true } });
const person = createResource({
  name: "person",
  schema: withId({ name: z.string() }),
  plural: "people",
  access: { list: true },
});

const makeApp = (database: DatabaseOptions) =>
  crudkit({
    database,
    autoMigrate: true,
    resources: [product, category, sheep, person],
    plugins: [apiKey({ keys: { admin: { id: "admin", roles: ["admin"] }, user: { id: "user" } } })],
  });

forEachDialect((dialect) => {
  const app = appPerDialect(dialect, makeApp);

  describe("app.api", () => {
    it("returns data, the same record HTTP answers", async () => {
      const created = await app.api.createProduct({
        body: { name: "Hat", price: 5 },
        headers: { "x-api-key": "user" },
      });
      expect(created).toMatchObject({ name: "Hat", price: 5, status: "draft" });
      const read = await app.api.readProduct({ params: { id: created.id } });
      expect(read).toEqual(created);
      expect((await call(app, "GET", `/api/product/${created.id}`)).body).toEqual(read);
      const list = await app.api.listProducts({ query: { search: "hat", limit: 5 } });
      expect(list.items.map((p) => p.id)).toContain(created.id);
      expect(list.pagination.limit).toBe(5);
    });

    it("throws APIError with status, code and message", async () => {
      const error = await app.api.readProduct({ params: { id: "missing" } }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(APIError);
      expect(error).toMatchObject({
        status: 404,
        code: "NOT_FOUND",
        message: 'No product with id "missing" exists.',
      });
      const invalid = await app.api
        .createProduct({ body: { name: "", price: 1 }, headers: { "x-api-key": "user" } })
        .catch((e: unknown) => e);
      expect(invalid).toMatchObject({
        status: 400,
        code: "VALIDATION_ERROR",
        details: [{ path: "name", message: expect.any(String) }],
      });
    });

    it("returns the Response with asResponse: true, for success and failure", async () => {
      const ok = await app.api.createProduct({
        body: { name: "Cap", price: 2 },
        headers: { "x-api-key": "user" },
        asResponse: true,
      });
      expect(ok).toBeInstanceOf(Response);
      expect(ok.status).toBe(201);
      expect(ok.headers.get("content-type")).toBe("application/json");
      expect(((await ok.json()) as { name: string }).name).toBe("Cap");
      const denied = await app.api.createProduct({ body: { name: "Cap", price: 2 }, asResponse: true });
      expect(denied.status).toBe(403);
      expect(((await denied.json()) as { code: string }).code).toBe("FORBIDDEN");
    });

    it("applies rules with the identity from headers", async () => {
      const created = await app.api.createProduct({
        body: { name: "Glove", price: 3 },
        headers: { "x-api-key": "user" },
      });
      await expect(app.api.createProduct({ body: { name: "Glove", price: 3 } })).rejects.toMatchObject({
        status: 403,
      });
      await expect(
        app.api.updateProduct({
          params: { id: created.id },
          body: { price: 4 },
          headers: { "x-api-key": "user" },
        }),
      ).rejects.toMatchObject({
        status: 403,
      });
      const updated = await app.api.updateProduct({
        params: { id: created.id },
        body: { price: 4 },
        headers: new Headers({ "x-api-key": "admin" }),
      });
      expect(updated.price).toBe(4);
      await expect(
        app.api.readProduct({ params: { id: created.id }, headers: { "x-api-key": "forged" } }),
      ).rejects.toMatchObject({ status: 401 });
    });

    it("skips rules with overrideAccess, but still validates", async () => {
      const created = await app.api.createProduct({ body: { name: "Boot", price: 9 }, overrideAccess: true });
      await expect(app.api.deleteProduct({ params: { id: created.id } })).rejects.toMatchObject({
        status: 403,
      });
      expect(await app.api.deleteProduct({ params: { id: created.id }, overrideAccess: true })).toEqual({
        success: true,
        id: created.id,
      });
      await expect(
        app.api.createProduct({ body: { name: "Boot", price: -1 }, overrideAccess: true }),
      ).rejects.toMatchObject({ status: 400 });
    });

    it("accepts Date objects as well as ISO strings for dates... and keeps timestamps server-managed", async () => {
      await expect(
        app.api.createProduct({
          body: { name: "Old", price: 1, createdAt: new Date(0) } as never,
          overrideAccess: true,
        }),
      ).rejects.toMatchObject({ status: 400 });
    });

    it("names list methods by the plural, with the typed name when the pluralizer disagrees", async () => {
      expect((await app.api.listCategories()).items).toEqual([]);
      expect((await app.api.listPeople()).items).toEqual([]);
      // The real pluralizer says "sheep" (the list path); the types say "sheeps": both names answer.
      expect((await app.api.listSheeps()).items).toEqual([]);
      expect(
        (await (app.api as unknown as Record<string, () => Promise<ListResult<unknown>>>).listSheep!()).items,
      ).toEqual([]);
    });
  });

  describe("app.api types", () => {
    it("are inferred from the resource definitions", () => {
      type Product = Awaited<ReturnType<typeof app.api.readProduct>>;
      expectTypeOf<Product>().toEqualTypeOf<{
        id: string;
        name: string;
        price: number;
        status: "active" | "inactive" | "draft";
        createdAt: string;
        updatedAt: string;
      }>();
      // Calls are only typed here, never run.
      const calls = {
        list: () => app.api.listProducts({ query: { page: 1, sortBy: "price", sortOrder: "asc" } }),
        remove: () => app.api.deleteProduct({ params: { id: "x" } }),
        response: () => app.api.createProduct({ body: { name: "x", price: 1 }, asResponse: true }),
        dated: () => app.api.createProduct({ body: { name: "x", price: 1, status: "active" } }),
      };
      expectTypeOf<Awaited<ReturnType<typeof calls.list>>>().toEqualTypeOf<ListResult<Product>>();
      expectTypeOf<Awaited<ReturnType<typeof calls.remove>>>().toEqualTypeOf<{ success: true; id: string }>();
      expectTypeOf<Awaited<ReturnType<typeof calls.response>>>().toEqualTypeOf<Response>();
      expectTypeOf<Awaited<ReturnType<typeof calls.dated>>>().toEqualTypeOf<Product>();
    });

    it("reject what does not fit", () => {
      const never = () => {
        // @ts-expect-error name is required
        void app.api.createProduct({ body: { price: 1 } });
        // @ts-expect-error price must be a number
        void app.api.createProduct({ body: { name: "x", price: "1" } });
        // @ts-expect-error unknown field
        void app.api.createProduct({ body: { name: "x", price: 1, colour: "red" } });
        // @ts-expect-error status must be one of the enum
        void app.api.updateProduct({ params: { id: "x" }, body: { status: "gone" } });
        // @ts-expect-error read needs params.id
        void app.api.readProduct({});
        // @ts-expect-error sortBy must name a field
        void app.api.listProducts({ query: { sortBy: "secret" } });
        // @ts-expect-error no such resource
        void app.api.readWidget({ params: { id: "x" } });
        // @ts-expect-error list uses the plural
        void app.api.listProduct();
      };
      expect(typeof never).toBe("function");
    });
  });
});
