import type { DatabaseOptions } from "crudkit-api";
import { createResource, crudkit, withId } from "crudkit-api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { forEachDialect } from "./dialects.ts";
import { openProduct } from "./fixtures.ts";
import { call, expectNoLeak } from "./helpers.ts";

const article = createResource({
  name: "article",
  schema: withId({ title: z.string(), body: z.string(), rank: z.number().int() }),
  searchable: ["title", "body"],
  access: { create: true, list: true },
});
const category = createResource({
  name: "category",
  schema: withId({ name: z.string() }),
  access: { list: true, create: true },
});
const sheep = createResource({
  name: "sheep",
  schema: withId({ name: z.string() }),
  access: { list: true, create: true },
});

const makeApp = (database: DatabaseOptions) =>
  crudkit({ database, autoMigrate: true, resources: [openProduct, article, category, sheep] });

forEachDialect((dialect) => {
  let app: ReturnType<typeof makeApp>;
  const names: string[] = [];
  beforeAll(async () => {
    app = makeApp(await dialect.fresh());
    await app.ready;
    for (let i = 0; i < 25; i++) {
      const name = `Item ${String(i).padStart(2, "0")}`;
      names.push(name);
      await call(app, "POST", "/api/product", { body: { name, price: (i * 7) % 25 } });
    }
    const articles = [
      { title: "Hats in winter", body: "warm", rank: 1 },
      { title: "Scarves", body: "About HATS and more", rank: 2 },
      { title: "100% wool", body: "pure", rank: 3 },
      { title: "snake_case", body: "naming", rank: 4 },
      { title: "back\\slash", body: "escape", rank: 5 },
      { title: "O'Brien's cap", body: 'say "hi"', rank: 6 },
      { title: "Nothing", body: "else", rank: 7 },
    ];
    for (const a of articles) await call(app, "POST", "/api/article", { body: a });
  });
  afterAll(() => app?.close());

  describe("pagination", () => {
    it("defaults to page 1, limit 10, newest first", async () => {
      const res = await call(app, "GET", "/api/products");
      expect(res.status).toBe(200);
      expect(res.body.pagination).toEqual({
        page: 1,
        limit: 10,
        total: 25,
        totalPages: 3,
        hasNext: true,
        hasPrev: false,
        // Keyset paging: the next page after the last row shown; none before the first page.
        nextCursor: expect.stringMatching(/^c1\./),
        prevCursor: null,
      });
      expect(res.body.items.map((p: { name: string }) => p.name)).toEqual(names.slice(15).reverse());
    });

    it("pages through every record exactly once", async () => {
      const seen: string[] = [];
      for (let page = 1; page <= 3; page++) {
        const res = await call(app, "GET", `/api/products?page=${page}&limit=10`);
        seen.push(...res.body.items.map((p: { name: string }) => p.name));
        expect(res.body.pagination.hasPrev).toBe(page > 1);
        expect(res.body.pagination.hasNext).toBe(page < 3);
      }
      expect(seen.sort()).toEqual([...names].sort());
    });

    it("answers an empty page past the end", async () => {
      const res = await call(app, "GET", "/api/products?page=9");
      expect(res.body.items).toEqual([]);
      expect(res.body.pagination).toMatchObject({ page: 9, total: 25, hasNext: false, hasPrev: true });
    });

    it("clamps limit to 100", async () => {
      const res = await call(app, "GET", "/api/products?limit=5000");
      expect(res.body.pagination.limit).toBe(100);
      expect(res.body.items).toHaveLength(25);
    });
  });

  describe("sorting", () => {
    it("sorts by a schema field, ascending or descending, ties by id", async () => {
      const asc = await call(app, "GET", "/api/products?sortBy=price&sortOrder=asc&limit=100");
      const prices = asc.body.items.map((p: { price: number }) => p.price);
      expect(prices).toEqual([...prices].sort((a, b) => a - b));
      const desc = await call(app, "GET", "/api/products?sortBy=price&sortOrder=DESC&limit=100");
      expect(desc.body.items.map((p: { price: number }) => p.price)).toEqual([...prices].reverse());
    });

    it("refuses a field outside the schema, naming the ones allowed", async () => {
      const res = await call(app, "GET", "/api/products?sortBy=secret");
      expect(res.status).toBe(400);
      expect(res.body.message).toBe(
        'Cannot sort by "secret": sortBy must be one of id, name, price, status, createdAt, updatedAt.',
      );
    });

    it("treats injection in sortBy and sortOrder as a bad parameter", async () => {
      for (const query of [
        "sortBy=name;DROP TABLE product",
        "sortBy=name%20desc,(select%201)",
        'sortBy="name"',
        "sortBy=name--",
        "sortOrder=asc;DROP TABLE product",
        "sortOrder=asc,%20id",
      ]) {
        const res = await call(app, "GET", `/api/products?${query}`);
        expect(res.status).toBe(400);
        expect(res.body.code).toBe("BAD_REQUEST");
        expectNoLeak(res.text);
      }
      expect((await call(app, "GET", "/api/products")).body.pagination.total).toBe(25);
    });
  });

  describe("search", () => {
    const titles = async (term: string) => {
      const res = await call(
        app,
        "GET",
        `/api/articles?search=${encodeURIComponent(term)}&sortBy=rank&sortOrder=asc`,
      );
      expect(res.status).toBe(200);
      return res.body.items.map((a: { title: string }) => a.title);
    };

    it("matches case-insensitively across every searchable field", async () => {
      expect(await titles("hats")).toEqual(["Hats in winter", "Scarves"]);
      expect(await titles("HAT")).toEqual(["Hats in winter", "Scarves"]);
    });

    it("counts only matches in pagination", async () => {
      const res = await call(app, "GET", "/api/articles?search=hat");
      expect(res.body.pagination.total).toBe(2);
    });

    it("treats LIKE wildcards and the escape character literally", async () => {
      expect(await titles("%")).toEqual(["100% wool"]);
      expect(await titles("_")).toEqual(["snake_case"]);
      expect(await titles("\\")).toEqual(["back\\slash"]);
      expect(await titles("%_\\")).toEqual([]);
    });

    it("treats quotes and SQL as text", async () => {
      expect(await titles("O'Brien")).toEqual(["O'Brien's cap"]);
      expect(await titles('"hi"')).toEqual(["O'Brien's cap"]);
      expect(await titles("' OR 1=1 --")).toEqual([]);
      expect(await titles("'); DROP TABLE article; --")).toEqual([]);
      expect((await call(app, "GET", "/api/articles")).body.pagination.total).toBe(7);
    });

    it("refuses search on a resource without searchable fields, and an overlong term", async () => {
      expect((await call(app, "GET", "/api/categories?search=x")).status).toBe(400);
      expect((await call(app, "GET", `/api/articles?search=${"x".repeat(201)}`)).status).toBe(400);
    });
  });

  describe("plural list paths", () => {
    it("uses a real pluralizer", async () => {
      expect((await call(app, "GET", "/api/categories")).status).toBe(200);
      expect((await call(app, "GET", "/api/sheep")).status).toBe(200);
      expect((await call(app, "POST", "/api/sheep", { body: { name: "Dolly" } })).status).toBe(201);
      expect((await call(app, "GET", "/api/sheep")).body.items).toHaveLength(1);
    });
  });
});
