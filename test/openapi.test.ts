// The OpenAPI 3.1 document: a third-party validator accepts it, it lists every operation with its
// parameters, errors and security schemes, and a contract test checks every answer a run of real
// requests gets (success and error, resources and plugins) against the document's schema for that
// operation and status, on SQLite, PostgreSQL and MariaDB, so the document cannot drift from the wire.

import { Validator } from "@seriousme/openapi-schema-validator";
import { Ajv2020 } from "ajv/dist/2020.js";
import formats from "ajv-formats";
import {
  apiKey,
  createResource,
  crudkit,
  type DatabaseOptions,
  fileRef,
  MemoryStorage,
  ownedBy,
  references,
  withId,
} from "crudkit-api";
import { audit, cache, idempotency, jwt, rateLimit, upload } from "crudkit-api/plugins";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { forEachDialect } from "./dialects.ts";
import { call, type TestResponse } from "./helpers.ts";

const signedIn = ({ user }: { user: unknown }) => user !== null;
const isAdmin = ({ user }: { user: { roles?: readonly string[] } | null }) =>
  user?.roles?.includes("admin") === true;
const ADMIN = { "x-api-key": "admin-key" };
const USER = { "x-api-key": "user-key" };

const product = createResource({
  name: "product",
  schema: withId({
    name: z.string().min(1).max(100),
    price: z.number().min(0),
    status: z.enum(["active", "draft"]).default("draft"),
    note: z.string().max(100).nullable().optional(),
    cost: z.number().optional(),
    tags: z.array(z.string()).optional(),
    image: fileRef({ mimeTypes: ["text/*"] }).optional(),
  }),
  searchable: ["name"],
  access: {
    create: signedIn,
    read: signedIn,
    list: signedIn,
    update: signedIn,
    delete: signedIn,
    fields: { cost: { read: isAdmin, write: isAdmin } },
  },
});
const review = createResource({
  name: "review",
  schema: withId({
    productId: references(product, { onDelete: "cascade" }),
    ownerId: z.string().max(255).optional(),
    rating: z.number().int().min(1).max(5),
  }),
  access: { ...ownedBy("ownerId", { bypass: (u) => u.roles?.includes("admin") ?? false }), read: signedIn },
});

const makeApp = (database: DatabaseOptions) =>
  crudkit({
    database,
    autoMigrate: true,
    resources: [product, review],
    realtime: true,
    plugins: [
      apiKey({ keys: { "admin-key": { id: "admin", roles: ["admin"] }, "user-key": { id: "user" } } }),
      jwt({ secret: "an openapi test secret that is long enough" }),
      upload({
        storage: new MemoryStorage(),
        access: { upload: signedIn, read: signedIn, download: signedIn, delete: signedIn, list: signedIn },
      }),
      audit({ access: { read: isAdmin } }),
      cache({ access: { stats: isAdmin } }),
      idempotency(),
      rateLimit({ window: 60, max: 10_000 }),
    ],
  });

describe("the OpenAPI document", () => {
  const app = makeApp({ provider: "sqlite", url: ":memory:" });
  afterAll(() => app.close());

  it("is valid OpenAPI 3.1 for a third-party validator, and served at /api/openapi.json", async () => {
    const document = app.openapi();
    const result = await new Validator().validate(document as never);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    const served = await call(app, "GET", "/api/openapi.json");
    expect(served.status).toBe(200);
    expect(served.body).toEqual(JSON.parse(JSON.stringify(document)));
  });

  it("tells each field's bounds and formats, as forms built from it need them", () => {
    const schemas = (app.openapi() as any).components.schemas;
    expect(schemas.ProductCreate.properties.name).toEqual({ type: "string", minLength: 1, maxLength: 100 });
    expect(schemas.ProductCreate.properties.price).toEqual({ type: "number", minimum: 0 });
    expect(schemas.Product.properties.note).toEqual({
      anyOf: [{ type: "string", maxLength: 100 }, { type: "null" }],
    });
    expect(schemas.ReviewCreate.properties.rating).toEqual({ type: "integer", minimum: 1, maximum: 5 });
    // An integer without bounds says nothing of Zod's safe-integer limits.
    expect(schemas.Product.properties.cost).toEqual({ type: "number" });
    // What a generic client links: a reference's target, a file's id, a reverse relation's source.
    expect(schemas.ReviewCreate.properties.productId).toMatchObject({
      type: "string",
      "x-crudkit-references": "product",
    });
    expect(schemas.ProductCreate.properties.image).toMatchObject({ "x-crudkit-file": true });
    expect(schemas.Product.properties.reviews["x-crudkit-reverse"]).toEqual({
      resource: "review",
      field: "productId",
    });
  });

  it("covers every operation, list parameter, error and security scheme", () => {
    const document = app.openapi() as any;
    expect(Object.keys(document.paths)).toEqual(
      expect.arrayContaining([
        "/api/product",
        "/api/product/{id}",
        "/api/products",
        "/api/reviews",
        "/api/upload/file",
        "/api/upload/download/{id}",
        "/api/upload/files",
        "/api/audit/logs",
        "/api/cache/stats",
        "/api/health",
        "/api/openapi.json",
      ]),
    );
    const list = document.paths["/api/products"].get;
    expect(list.parameters.map((p: { name: string }) => p.name)).toEqual(
      expect.arrayContaining([
        "page",
        "limit",
        "sortBy",
        "sortOrder",
        "count",
        "cursor",
        "filter",
        "search",
        "expand",
      ]),
    );
    expect(
      document.paths["/api/product/{id}"].delete.responses["409"].content["application/json"].schema,
    ).toEqual({
      $ref: "#/components/schemas/Error",
    });
    expect(document.components.securitySchemes).toEqual({
      ApiKey: { type: "apiKey", in: "header", name: "x-api-key" },
      BearerJWT: { type: "http", scheme: "bearer", bearerFormat: "JWT" },
    });
    expect(document.components.schemas.ProductCreate.required).toEqual(["name", "price"]);
    expect(document.paths["/api/health"].get.security).toEqual([]);
    // Versions, idempotency keys and rate limits.
    const item = document.paths["/api/product/{id}"];
    expect(item.get.responses["200"].headers.ETag).toBeDefined();
    expect(item.get.responses["304"]).toBeDefined();
    expect(item.get.parameters.map((p: { name: string }) => p.name)).toContain("If-None-Match");
    for (const method of ["patch", "delete"]) {
      expect(item[method].parameters.map((p: { name: string }) => p.name)).toContain("If-Match");
      expect(Object.keys(item[method].responses)).toEqual(expect.arrayContaining(["412", "428", "429"]));
    }
    for (const create of [document.paths["/api/product"].post, document.paths["/api/upload/file"].post]) {
      expect(create.parameters.map((p: { name: string }) => p.name)).toContain("Idempotency-Key");
      expect(Object.keys(create.responses)).toEqual(expect.arrayContaining(["409", "422", "429"]));
      expect(create.responses["429"].headers["Retry-After"]).toBeDefined();
    }
    expect(document.paths["/api/health"].get.responses["429"]).toBeUndefined();
    const events = document.paths["/api/products/events"].get;
    expect(Object.keys(events.responses["200"].content)).toEqual(["text/event-stream"]);
    expect(events.parameters.map((p: { name: string }) => p.name)).toEqual(
      expect.arrayContaining(["filter", "lastEventId", "Last-Event-ID"]),
    );
    expect(document.components.schemas.Error.properties.code.enum).toEqual(
      expect.arrayContaining([
        "PRECONDITION_FAILED",
        "PRECONDITION_REQUIRED",
        "IDEMPOTENCY_KEY_REUSED",
        "RATE_LIMITED",
      ]),
    );
  });
});

forEachDialect((dialect) => {
  let app: ReturnType<typeof makeApp>;
  const answers: { method: string; path: string; res: TestResponse }[] = [];
  const send = async (headers: Record<string, string>, method: string, path: string, body?: unknown) => {
    const res = await call(app, method, path, { headers, ...(body === undefined ? {} : { body }) });
    answers.push({ method, path, res });
    return res;
  };
  beforeAll(async () => {
    app = makeApp(await dialect.fresh());
    await app.ready;
  });
  afterAll(() => app?.close());

  it("every answer of a run matches the document's schema for its operation and status", async () => {
    const file = await send(USER, "POST", "/api/upload/file", {
      file: Buffer.from("hello").toString("base64"),
      filename: "a.txt",
      mimeType: "text/plain",
    });
    const created = await send(ADMIN, "POST", "/api/product", {
      name: "Hat",
      price: 5,
      cost: 2,
      tags: ["a"],
      note: null,
      image: file.body.id,
    });
    const id = created.body.id as string;
    await send(USER, "POST", "/api/product", { name: "Scarf", price: 7 });
    await send(USER, "POST", "/api/review", { productId: id, rating: 4 });
    await send(USER, "GET", `/api/product/${id}`);
    await send(USER, "GET", `/api/product/${id}?expand=reviews,image`);
    await send(USER, "GET", "/api/reviews?expand=product&count=none");
    await send(USER, "GET", "/api/products?filter[price][gte]=1&sortBy=price&sortOrder=asc&limit=1");
    await send(USER, "GET", "/api/products?search=ha&count=estimated");
    await send(USER, "PATCH", `/api/product/${id}`, { price: 6, note: "x" });
    await send(USER, "GET", `/api/upload/file/${file.body.id}`);
    await send(USER, "GET", "/api/upload/files");
    await send(ADMIN, "GET", "/api/audit/logs?resource=product");
    await send(ADMIN, "GET", "/api/cache/stats");
    await send({}, "GET", "/api/health");
    await send({}, "GET", "/api/health/live");
    // Errors: every one carries the error body.
    await send(USER, "POST", "/api/product", { name: 5 });
    await send(USER, "POST", "/api/review", { productId: "missing", rating: 3 });
    await send({ "x-api-key": "wrong" }, "GET", "/api/products");
    await send(USER, "GET", "/api/audit/logs");
    await send(USER, "GET", "/api/product/missing");
    await send(USER, "GET", "/api/products?bogus=1");
    await send(USER, "DELETE", `/api/upload/file/${file.body.id}`);
    await send(USER, "DELETE", `/api/product/${id}`);

    const document = app.openapi() as any;
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    // A CommonJS module: its function is `default` under NodeNext's interop.
    (formats as unknown as { default: (ajv: Ajv2020) => void }).default(ajv);
    ajv.addSchema(document, "openapi.json");
    const templates = Object.keys(document.paths).map((template) => ({
      template,
      pattern: new RegExp(`^${template.replace(/\{[^}]+\}/g, "[^/]+")}$`),
    }));
    const checked: string[] = [];
    for (const { method, path, res } of answers) {
      const bare = path.split("?")[0]!;
      // The most specific template: fewest parameters.
      const match = templates
        .filter((t) => t.pattern.test(bare) && document.paths[t.template][method.toLowerCase()])
        .sort((a, b) => (a.template.match(/\{/g)?.length ?? 0) - (b.template.match(/\{/g)?.length ?? 0))[0];
      expect(match, `${method} ${bare} is in the document`).toBeDefined();
      const responses = document.paths[match!.template][method.toLowerCase()].responses;
      expect(responses[String(res.status)], `${method} ${bare} documents ${res.status}`).toBeDefined();
      const pointer = [
        "paths",
        match!.template,
        method.toLowerCase(),
        "responses",
        String(res.status),
        "content",
        "application/json",
        "schema",
      ]
        .map((p) => p.replace(/~/g, "~0").replace(/\//g, "~1"))
        .join("/");
      const validate = ajv.compile({ $ref: `openapi.json#/${pointer}` });
      const valid = validate(res.body);
      expect(valid, `${method} ${path} ${res.status}: ${JSON.stringify(validate.errors)} ${res.text}`).toBe(
        true,
      );
      checked.push(`${method} ${match!.template} ${res.status}`);
    }
    expect(new Set(checked).size).toBeGreaterThan(18);
    expect(checked).toEqual(
      expect.arrayContaining([
        "POST /api/review 400",
        "GET /api/products 401",
        "DELETE /api/upload/file/{id} 409",
      ]),
    );
  });
});
