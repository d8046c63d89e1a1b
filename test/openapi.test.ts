// The OpenAPI 3.1 document: a third-party validator accepts it, it lists every operation with its
// parameters, errors and security schemes, and a contract test checks every answer a run of real
// requests gets (success and error, resources and plugins) against the document's schema for that
// operation and status, on SQLite, PostgreSQL and MariaDB, so the document cannot drift from the wire.

import { connect } from "node:net";
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
import { createClient } from "crudkit-api/client";
import { serve } from "crudkit-api/node";
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
    // The same document, with the request's origin in `servers`.
    expect(served.body).toEqual({
      ...JSON.parse(JSON.stringify(document)),
      servers: [{ url: "http://localhost/api" }],
    });
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
        "/product",
        "/product/{id}",
        "/products",
        "/reviews",
        "/upload/file",
        "/upload/download/{id}",
        "/upload/files",
        "/audit/logs",
        "/cache/stats",
        "/health",
      ]),
    );
    const list = document.paths["/products"].get;
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
      document.paths["/product/{id}"].delete.responses["409"].content["application/json"].schema,
    ).toEqual({
      $ref: "#/components/schemas/Error",
    });
    expect(document.components.securitySchemes).toEqual({
      ApiKey: { type: "apiKey", in: "header", name: "x-api-key" },
      BearerJWT: { type: "http", scheme: "bearer", bearerFormat: "JWT" },
    });
    expect(document.components.schemas.ProductCreate.required).toEqual(["name", "price"]);
    expect(document.paths["/health"].get.security).toEqual([]);
    // Versions, idempotency keys and rate limits.
    const item = document.paths["/product/{id}"];
    expect(item.get.responses["200"].headers.ETag).toBeDefined();
    expect(item.get.responses["304"]).toBeDefined();
    expect(item.get.parameters.map((p: { name: string }) => p.name)).toContain("If-None-Match");
    for (const method of ["patch", "delete"]) {
      expect(item[method].parameters.map((p: { name: string }) => p.name)).toContain("If-Match");
      expect(Object.keys(item[method].responses)).toEqual(expect.arrayContaining(["412", "428", "429"]));
    }
    for (const create of [document.paths["/product"].post, document.paths["/upload/file"].post]) {
      expect(create.parameters.map((p: { name: string }) => p.name)).toContain("Idempotency-Key");
      expect(Object.keys(create.responses)).toEqual(expect.arrayContaining(["409", "422", "429"]));
      expect(create.responses["429"].headers["Retry-After"]).toBeDefined();
    }
    expect(document.paths["/health"].get.responses["429"]).toBeUndefined();
    const events = document.paths["/products/events"].get;
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
      const bare = path.split("?")[0]!.slice("/api".length);
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
      expect.arrayContaining(["POST /review 400", "GET /products 401", "DELETE /upload/file/{id} 409"]),
    );
  });
});

// Issue 36 §3: the document says what the API enforces, and only API operations.
const org = createResource({
  name: "org",
  schema: withId({ name: z.string().min(1).max(80) }),
  access: { create: true, read: true, update: true, delete: true, list: true },
});
const project = createResource({
  name: "project",
  schema: withId({
    orgId: references(org),
    title: z.string().max(120),
    budget: z.number().min(0).optional(),
    active: z.boolean().default(true),
    stage: z.enum(["idea", "build", "done"]).default("idea").describe("Where the project stands"),
    due: z.date().optional(),
    labels: z.array(z.string().max(20)).max(10).optional(),
  }),
  searchable: ["title"],
  access: { create: true, read: true, update: true, delete: true, list: true },
});
const item = createResource({
  name: "item",
  schema: withId({ projectId: references(project), name: z.string() }),
  access: { create: true, read: true, update: true, delete: true, list: true },
});
const user = createResource({
  name: "user",
  schema: withId({ email: z.email() }),
  access: { create: true, read: true, update: true, delete: true, list: true },
});

const enforcedApp = (extra: { trustProxy?: readonly string[] } = {}) =>
  crudkit({
    database: { provider: "sqlite", url: ":memory:" },
    autoMigrate: true,
    resources: [org, project, item, user],
    defaultLimit: 5,
    maxLimit: 50,
    docs: true,
    admin: true,
    ...extra,
  });

describe("the OpenAPI document says what the API enforces (issue 36)", () => {
  const app = enforcedApp();
  const document = app.openapi() as any;
  const listOf = (path: string) =>
    Object.fromEntries(document.paths[path].get.parameters.map((p: any) => [p.name, p]));
  afterAll(() => app.close());

  it("gives every list parameter its exact schema: limit bounds, sortBy and sortOrder enums with defaults, count, cursor", () => {
    const parameters = listOf("/projects");
    expect(parameters.limit.schema).toEqual({ type: "integer", minimum: 1, maximum: 50, default: 5 });
    expect(parameters.page.schema).toMatchObject({ type: "integer", minimum: 1, default: 1 });
    expect(parameters.sortBy.schema).toEqual({
      type: "string",
      enum: ["id", "orgId", "title", "budget", "active", "stage", "due", "createdAt", "updatedAt"],
    });
    expect(parameters.sortOrder.schema).toEqual({ type: "string", enum: ["asc", "desc"], default: "desc" });
    expect(parameters.sortOrder.description).not.toContain("@default");
    expect(parameters.count.schema).toEqual({
      type: "string",
      enum: ["exact", "estimated", "none"],
      default: "exact",
    });
    expect(parameters.count.description).toContain("estimated");
    expect(parameters.cursor.schema).toEqual({ type: "string", minLength: 1 });
    expect(parameters.cursor.description).toContain("nextCursor");
    expect(parameters.search.schema).toEqual({ type: "string", maxLength: 200 });
    // Plugin-free resources without searchable fields take no search.
    expect(listOf("/orgs").search).toBeUndefined();
  });

  it("types filter as a deepObject: per field the operators of its kind, each with its value type, relation paths included", async () => {
    const { OPERATORS_BY_KIND } = await import("../src/query/where.ts");
    const parameter = listOf("/projects").filter;
    expect(parameter).toMatchObject({ in: "query", style: "deepObject", explode: true });
    expect(parameter.schema).toEqual({ $ref: "#/components/schemas/ProjectFilter" });
    const filter = document.components.schemas.ProjectFilter;
    expect(filter.additionalProperties).toBe(false);
    expect(Object.keys(filter.properties)).toEqual(
      expect.arrayContaining([
        "title",
        "budget",
        "active",
        "stage",
        "due",
        "org.id",
        "org.name",
        "or",
        "not",
      ]),
    );
    const operators = (name: string) => filter.properties[name].anyOf[1].properties;
    const kinds = {
      title: "string",
      budget: "number",
      active: "boolean",
      stage: "enum",
      due: "date",
    } as const;
    for (const [name, kind] of Object.entries(kinds))
      expect(Object.keys(operators(name)).sort()).toEqual([...OPERATORS_BY_KIND[kind]].sort());
    expect(operators("budget").gte).toEqual({ type: "number" });
    expect(operators("budget").in).toEqual({
      type: "array",
      items: { type: "number" },
      minItems: 1,
      maxItems: 100,
    });
    expect(operators("title").contains).toEqual({ type: "string", minLength: 1, maxLength: 1000 });
    expect(operators("stage").eq).toEqual({ type: "string", enum: ["idea", "build", "done"] });
    expect(operators("active").isNull).toEqual({ type: "boolean" });
    expect(operators("budget").contains).toBeUndefined();
    expect(filter.properties.title.anyOf[0]).toEqual({ type: "string", maxLength: 1000 });
    expect(Object.keys(operators("org.name")).sort()).toEqual([...OPERATORS_BY_KIND.string].sort());
    expect(filter.properties.or).toEqual({
      type: "array",
      items: { $ref: "#/components/schemas/ProjectFilterGroup" },
      description: expect.any(String),
    });
    // One level of groups is typed; deeper ones are any object (not recursive: see filter-schema.ts).
    const group = document.components.schemas.ProjectFilterGroup;
    expect(group.properties.budget).toEqual(filter.properties.budget);
    expect(group.properties.not).toMatchObject({ type: "object" });
    // What the document offers, the server takes; what it leaves out, the server refuses.
    await app.ready;
    for (const [name, kind] of Object.entries(kinds)) {
      const sample = {
        string: "a",
        number: "1",
        boolean: "true",
        enum: "idea",
        date: "2024-01-01T00:00:00Z",
      }[kind];
      for (const op of Object.keys(operators(name))) {
        const value = op === "isNull" ? "true" : sample;
        const res = await call(
          app,
          "GET",
          `/api/projects?filter[${name}][${op}]=${encodeURIComponent(value)}`,
        );
        expect(res.status, `${name} ${op}`).toBe(200);
      }
    }
    expect((await call(app, "GET", "/api/projects?filter[org.name][startsWith]=A")).status).toBe(200);
    expect((await call(app, "GET", "/api/projects?filter[budget][contains]=1")).status).toBe(400);
  });

  it("lists expand's relation paths and types what an expand adds, as the server answers it", async () => {
    const expand = listOf("/items").expand;
    expect(expand).toMatchObject({ in: "query", style: "form", explode: false });
    expect(expand.schema.items.enum).toEqual([
      "project",
      "project.org",
      "project.org.projects",
      "project.items",
      "project.items.project",
    ]);
    const read = document.paths["/item/{id}"].get.parameters.find((p: any) => p.name === "expand");
    expect(read.schema).toEqual(expand.schema);
    expect(document.components.schemas.Item.properties.project).toEqual({
      description: "With expand=project.",
      anyOf: [{ $ref: "#/components/schemas/Project" }, { type: "null" }],
    });
    expect(document.components.schemas.Project.properties.items).toMatchObject({
      type: "array",
      items: { $ref: "#/components/schemas/Item" },
    });
    // Answered and checked against those schemas by call()'s contract check.
    const o = await call(app, "POST", "/api/org", { body: { name: "Acme" } });
    const p = await call(app, "POST", "/api/project", { body: { orgId: o.body.id, title: "Roof" } });
    const i = await call(app, "POST", "/api/item", { body: { projectId: p.body.id, name: "Nails" } });
    const page = await call(
      app,
      "GET",
      "/api/items?expand=project.org,project.items&filter[project.title]=Roof",
    );
    expect(page.status).toBe(200);
    expect(page.body.items[0].project.org).toMatchObject({ id: o.body.id, name: "Acme" });
    expect(page.body.items[0].project.items).toEqual([expect.objectContaining({ id: i.body.id })]);
    expect((await call(app, "GET", `/api/item/${i.body.id}?expand=project`)).body.project.title).toBe("Roof");
  });

  it("writes its summaries in English: an order, an item, a user", async () => {
    const { withArticle } = await import("../src/openapi/english.ts");
    expect(
      ["order", "item", "user", "product", "unicorn", "hour", "upload", "euro"].map(withArticle),
    ).toEqual(["an order", "an item", "a user", "a product", "a unicorn", "an hour", "an upload", "a euro"]);
    expect(document.paths["/org"].post.summary).toBe("Create an org");
    expect(document.paths["/item/{id}"].get.summary).toBe("Read an item");
    expect(document.paths["/user/{id}"].delete.summary).toBe("Delete a user");
    expect(document.paths["/orgs"].get.summary).toBe("List orgs");
    const summaries = Object.values(document.paths).flatMap((p: any) =>
      Object.values(p).map((o: any) => o.summary as string),
    );
    expect(summaries.filter((s) => /\ba [aio]/i.test(s))).toEqual([]);
  });

  it("lists no page or file for browsers: not the docs page, its script, this document or the admin's page and files", () => {
    const paths = Object.keys(document.paths);
    for (const path of ["/docs", "/docs/scalar.js", "/openapi.json", "/admin", "/admin/assets/{file}"])
      expect(paths).not.toContain(path);
    expect(JSON.stringify(document)).not.toContain("text/html");
    // They are still served.
    expect(app.endpoints.map((e) => e.path)).toEqual(
      expect.arrayContaining(["/docs", "/docs/scalar.js", "/openapi.json", "/admin"]),
    );
  });

  it("carries the schema's own constraints, description and default (zod's JSON Schema)", () => {
    const create = document.components.schemas.ProjectCreate;
    expect(create.properties.labels).toEqual({
      type: "array",
      maxItems: 10,
      items: { type: "string", maxLength: 20 },
    });
    expect(create.properties.stage).toEqual({
      type: "string",
      enum: ["idea", "build", "done"],
      default: "idea",
      description: "Where the project stands",
    });
    expect(create.properties.active).toEqual({ type: "boolean", default: true });
    expect(create.required).toEqual(["orgId", "title"]);
    expect(document.components.schemas.ProjectUpdate.properties.stage.default).toBeUndefined();
    expect(document.components.schemas.UserCreate.properties.email).toMatchObject({
      type: "string",
      format: "email",
    });
  });

  it("the contract check fails an answer that accepts what the document refuses", async () => {
    // A handler that says yes to everything, judged by the real app's document.
    const lenient = {
      openapi: () => app.openapi(),
      handler: async () =>
        Response.json({
          items: [],
          pagination: { page: 1, limit: 5, total: 0, totalPages: 0, hasNext: false, hasPrev: false },
        }),
    };
    for (const path of [
      "/api/projects?filter[budget][contains]=1",
      "/api/projects?filter[stage]=nope",
      "/api/projects?filter[nope]=1",
      "/api/projects?sortBy=labels",
      "/api/projects?count=all",
      "/api/projects?limit=0",
      "/api/projects?expand=org.nope",
      "/api/projects?filter[budget][in]=1,x",
    ])
      await expect(call(lenient, "GET", path), path).rejects.toThrow(/invalid by its OpenAPI document/);
    // A body the document refuses, accepted.
    const created = {
      openapi: () => app.openapi(),
      handler: async () => Response.json({ id: "x" }, { status: 201 }),
    };
    await expect(call(created, "POST", "/api/org", { body: { name: "" } })).rejects.toThrow(/invalid/);
    await expect(call(created, "POST", "/api/org", { body: { name: "A", extra: 1 } })).rejects.toThrow(
      /invalid/,
    );
    // What the server takes beyond the letter, the check takes too (limit clamped, any case).
    await call(
      lenient,
      "GET",
      "/api/projects?limit=500&sortOrder=DESC&filter[due][gte]=2024-01-01&filter[or][0][stage]=idea",
    );
  });
});

describe("servers: where the document was asked for", () => {
  it("is the basePath in code, and the request's origin and basePath over HTTP", async () => {
    const app = enforcedApp();
    expect((app.openapi() as any).servers).toEqual([{ url: "/api" }]);
    const server = await serve(app, { port: 0 });
    try {
      const answer = await fetch(`${server.url}/api/openapi.json`);
      // The document names the origin it was asked at: a shared cache keeps one per origin.
      expect(answer.headers.get("vary")).toMatch(/\bHost\b.*X-Forwarded-Host.*X-Forwarded-Proto/);
      const served = await answer.json();
      expect(served.servers).toEqual([{ url: `${server.url}/api` }]);
      // The typed client reads the same document through its $fetch.
      const client = createClient<typeof app>({ baseURL: `${server.url}/api` });
      const viaClient = await client.$fetch<{ servers: unknown; paths: Record<string, unknown> }>(
        "/openapi.json",
      );
      expect(viaClient.error).toBeNull();
      expect(viaClient.data?.servers).toEqual([{ url: `${server.url}/api` }]);
      expect(Object.keys(viaClient.data?.paths ?? {})).toContain("/org/{id}");
      expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      // Not trusted, so not read: a client's forwarded headers.
      const forged = await rawGet(server.url, "/api/openapi.json", [
        "Host: 127.0.0.1",
        "X-Forwarded-Host: evil.example",
        "X-Forwarded-Proto: https",
      ]);
      expect(forged.servers).toEqual([{ url: "http://127.0.0.1/api" }]);
    } finally {
      await server.close();
      await app.close();
    }
  });

  it("behind a trusted proxy, is the forwarded origin when it is a plain host[:port]; anything else falls back to the basePath", async () => {
    const app = enforcedApp({ trustProxy: ["loopback"] });
    const server = await serve(app, { port: 0 });
    const ask = async (headers: string[]) => (await rawGet(server.url, "/api/openapi.json", headers)).servers;
    try {
      expect(await ask(["X-Forwarded-Host: api.example.com", "X-Forwarded-Proto: https"])).toEqual([
        { url: "https://api.example.com/api" },
      ]);
      expect(await ask(["X-Forwarded-Host: [::1]:8443"])).toEqual([{ url: `http://[::1]:8443/api` }]);
      for (const hostile of [
        "evil.example/<script>",
        'a"b.example',
        "user@evil.example",
        "evil.example:99999",
        `${"a".repeat(300)}.example`,
      ])
        expect(await ask([`X-Forwarded-Host: ${hostile}`]), hostile).toEqual([{ url: "/api" }]);
      expect(await ask(["X-Forwarded-Proto: javascript"])).toEqual([{ url: "/api" }]);
    } finally {
      await server.close();
      await app.close();
    }
    // A proxy list that does not hold the socket's peer: the forwarded headers are not read.
    const elsewhere = enforcedApp({ trustProxy: ["10.0.0.1"] });
    const direct = await serve(elsewhere, { port: 0 });
    try {
      const { host } = new URL(direct.url);
      const served = await rawGet(direct.url, "/api/openapi.json", ["X-Forwarded-Host: evil.example"]);
      expect(served.servers).toEqual([{ url: `http://${host}/api` }]);
    } finally {
      await direct.close();
      await elsewhere.close();
    }
  });

  it("never takes a Host that is not host[:port], with NUL bytes, injection characters or overlong", async () => {
    const { serverUrl } = await import("../src/openapi/servers.ts");
    // Forwarded headers are read only when the app trusts the proxy that sent them.
    const direct = new Request("http://localhost/api/openapi.json", { headers: { "x-forwarded-host": "x" } });
    expect(serverUrl(direct, "/api", false)).toBe("http://localhost/api");
    // Plain objects: a Headers object would refuse these values before the code under test saw them.
    const forwarded = (host: string) =>
      ({
        url: "http://localhost/api/openapi.json",
        headers: { get: (n: string) => (n === "x-forwarded-host" ? host : null) },
      }) as unknown as Request;
    for (const hostile of [
      "a\u0000b",
      "a\r\nSet-Cookie: x=1",
      "a b",
      "a'b",
      "<x>",
      "a".repeat(400),
      "h:0x50",
      ":80",
      "",
    ])
      expect(serverUrl(forwarded(hostile), "/api", true), JSON.stringify(hostile)).toBe(
        hostile === "" ? "http://localhost/api" : "/api",
      );
    expect(serverUrl(forwarded("API.Example.COM:8080"), "", true)).toBe("http://api.example.com:8080");
    expect(serverUrl(undefined, "", false)).toBe("/");
    // Over a socket: Node's server refuses what no HTTP client may send; whatever it answers, the
    // document never carries it.
    const app = enforcedApp();
    const server = await serve(app, { port: 0 });
    try {
      for (const host of ["evil.example\u0000x", "<script>", "a".repeat(5000)]) {
        const answer = await rawText(server.url, "/api/openapi.json", [`Host: ${host}`]);
        expect(answer).not.toContain(host);
        if (answer.startsWith("HTTP/1.1 200")) expect(answer).toContain('"servers":[{"url":"/api"}]');
      }
    } finally {
      await server.close();
      await app.close();
    }
  });
});

/** A GET written by hand on a socket, so headers go as given; the text of the answer. */
function rawText(base: string, path: string, headers: string[]): Promise<string> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => {
      const host = headers.some((h) => /^host:/i.test(h)) ? [] : [`Host: ${hostname}:${port}`];
      socket.write(
        `GET ${path} HTTP/1.1\r\n${[...host, ...headers, "Connection: close"].join("\r\n")}\r\n\r\n`,
      );
    });
    let text = "";
    socket.setEncoding("latin1");
    socket.on("data", (chunk) => {
      text += chunk;
    });
    socket.on("end", () => resolve(text));
    socket.on("error", reject);
  });
}

async function rawGet(base: string, path: string, headers: string[]): Promise<any> {
  const text = await rawText(base, path, headers);
  expect(text.startsWith("HTTP/1.1 200"), text.slice(0, 200)).toBe(true);
  const body = text.slice(text.indexOf("\r\n\r\n") + 4);
  // Chunked or not: the JSON object is the text between its first and last brace.
  return JSON.parse(body.slice(body.indexOf("{"), body.lastIndexOf("}") + 1));
}
