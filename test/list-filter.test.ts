// List filters over HTTP (the bracket syntax), through app.api and through the client, on SQLite,
// PostgreSQL and MariaDB: results and totals, the allow-list, unknown parameters and hostile filters.

import { createResource, crudkit, type DatabaseOptions } from "crudkit-api";
import { createClient } from "crudkit-api/client";
import { type RunningServer, serve } from "crudkit-api/node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { forEachDialect } from "./dialects.ts";
import { productSchema } from "./fixtures.ts";
import { call, expectNoLeak } from "./helpers.ts";

const product = createResource({
  name: "product",
  schema: productSchema,
  searchable: ["name"],
  access: { create: true, read: true, list: true },
});

/** Only `status` may be filtered on. */
const ticket = createResource({
  name: "ticket",
  schema: productSchema,
  filterable: ["status"],
  access: { create: true, list: true },
});

const makeApp = (database: DatabaseOptions) =>
  crudkit({ database, autoMigrate: true, resources: [product, ticket] });

const PRODUCTS = [
  { name: "Red hat", price: 5, status: "active" },
  { name: "Blue hat", price: 15, status: "draft" },
  { name: "Green scarf", price: 12, status: "active" },
  { name: "Gloves", price: 60, status: "inactive" },
  { name: "HAT stand", price: 19.5, status: "active" },
] as const;

forEachDialect((dialect) => {
  let app: ReturnType<typeof makeApp>;
  let server: RunningServer;
  beforeAll(async () => {
    app = makeApp(await dialect.fresh());
    for (const body of PRODUCTS) {
      await app.api.createProduct({ body });
      await app.api.createTicket({ body });
    }
    server = await serve(app, { port: 0 });
  });
  afterAll(() => server?.close());

  const names = async (query: string) => {
    const res = await call(app, "GET", `/api/products?limit=100&sortBy=name&sortOrder=asc&${query}`);
    expect(res.status, `${query}: ${res.text.slice(0, 200)}`).toBe(200);
    expect(res.body.pagination.total).toBe(res.body.items.length);
    return res.body.items.map((p: { name: string }) => p.name);
  };

  describe("list filters", () => {
    it("over HTTP: equality, ranges, lists, text matching, or and not, with search and totals", async () => {
      expect(await names("filter[status]=active")).toEqual(["Green scarf", "HAT stand", "Red hat"]);
      expect(await names("filter[price][gte]=10&filter[price][lt]=20")).toEqual([
        "Blue hat",
        "Green scarf",
        "HAT stand",
      ]);
      expect(await names("filter[status][in]=inactive,draft")).toEqual(["Blue hat", "Gloves"]);
      expect(await names("filter[status][nin]=inactive,draft")).toHaveLength(3);
      expect(await names("filter[name][contains]=HAT")).toEqual(["Blue hat", "HAT stand", "Red hat"]);
      expect(await names("filter[name][startsWith]=g")).toEqual(["Gloves", "Green scarf"]);
      expect(await names("filter[or][0][status]=draft&filter[or][1][price][gt]=50")).toEqual([
        "Blue hat",
        "Gloves",
      ]);
      expect(await names("filter[not][status]=active")).toEqual(["Blue hat", "Gloves"]);
      expect(await names("search=hat&filter[status]=active")).toEqual(["HAT stand", "Red hat"]);
      expect(await names("filter[createdAt][lt]=2000-01-01")).toEqual([]);
      const paged = await call(app, "GET", "/api/products?limit=1&page=2&filter[status]=active");
      expect(paged.body.pagination).toMatchObject({ total: 3, totalPages: 3, hasNext: true, hasPrev: true });
    });

    it("through app.api and the client, typed", async () => {
      const listed = await app.api.listProducts({
        query: {
          where: { price: { gte: 10 }, status: { in: ["active"] } },
          sortBy: "price",
          sortOrder: "asc",
        },
      });
      expect(listed.items.map((p) => p.name)).toEqual(["Green scarf", "HAT stand"]);
      const client = createClient<typeof app>({ baseURL: `${server.url}/api` });
      const { data, error } = await client.product.list({
        where: { or: [{ name: { endsWith: "scarf" } }, { price: { lte: 5 } }] },
        sortBy: "price",
        sortOrder: "asc",
      });
      expect(error).toBeNull();
      expect(data?.items.map((p) => p.name)).toEqual(["Red hat", "Green scarf"]);
      const refused = await client.product.list({ where: { status: { in: ["huge" as "active"] } } });
      expect(refused.error).toMatchObject({ status: 400, code: "BAD_REQUEST" });
      const types = () => [
        // @ts-expect-error text matching is for strings
        app.api.listProducts({ query: { where: { price: { contains: "1" } } } }),
        // @ts-expect-error only the record's fields
        client.product.list({ where: { colour: "red" } }),
        // @ts-expect-error status is an enum
        client.product.list({ where: { status: "huge" } }),
      ];
      expect(typeof types).toBe("function");
    });

    it("answers 400 naming the problem: unknown parameters, fields and operators, bad values, hostile filters", async () => {
      const cases: [string, RegExp][] = [
        ["colour=red", /Unknown query parameter "colour"/],
        ["filter[nope]=1", /filter\.nope/],
        ["filter[price][like]=1", /filter\.price\.like is not an operator/],
        ["filter[price][contains]=1", /cannot be used on a number field/],
        ["filter[price]=abc", /filter\.price\.eq must be a number/],
        ["filter[status]=huge", /must be one of active, inactive, draft/],
        ["filter[createdAt][gt]=yesterday", /ISO 8601/],
        ["filter[createdAt][gt]=2024-02-31", /ISO 8601/],
        ["filter[price][gte]=1&filter[price][gte][x]=2", /both a value and a group/],
        ["filter[price]]=1", /not of the form/],
        ["filter[]=1", /empty bracket/],
        ["filter[__proto__][eq]=1", /filter\.__proto__/],
        ["filter[name%3B%20drop%20table%20product]=1", /filter\.\?/],
        [`filter${"[not]".repeat(1000)}[status]=active`, /nests deeper/],
        [
          `filter[status][in]=${Array.from({ length: 10_000 }, () => "active").join(",")}`,
          /at most 100 values/,
        ],
        [Array.from({ length: 201 }, (_, i) => `filter[or][${i}][price]=${i}`).join("&"), /at most 200/],
        ["filter[price][in]=", /filter\.price\.in needs at least one value/],
        ["filter[name][in]=", /filter\.name\.in needs at least one value/],
        ["filter[status][isNull]=maybe", /true or false/],
      ];
      for (const [query, message] of cases) {
        const res = await call(app, "GET", `/api/products?${query}`);
        expect(res.status, query.slice(0, 80)).toBe(400);
        expect(res.body.code).toBe("BAD_REQUEST");
        expect(res.body.message, query.slice(0, 80)).toMatch(message);
        expectNoLeak(res.text);
      }
      // SQL in a value is a value.
      expect(await names("filter[name]=x'%20OR%20'1'%3D'1")).toEqual([]);
      expect((await call(app, "GET", "/api/products")).body.pagination.total).toBe(5);
    });

    it("filters only on the resource's filterable fields", async () => {
      const ok = await call(app, "GET", "/api/tickets?filter[status]=draft");
      expect(ok.body.items).toHaveLength(1);
      const refused = await call(app, "GET", "/api/tickets?filter[price][gt]=1");
      expect(refused.status).toBe(400);
      expect(refused.body.message).toMatch(/filter\.price is not a field you can filter on/);
    });
  });
});
