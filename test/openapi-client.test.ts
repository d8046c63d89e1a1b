// A client generated from the document works against the example (issue 36 §3): the example app
// serves on 127.0.0.1, openapi-typescript turns its /api/openapi.json into types, a small
// openapi-fetch program using them (create, list with a filter and an expand, read) type-checks
// under strict TypeScript and runs against the live server, and misuses the document forbids (an
// operator a number does not take, a price given as text) fail the type check.

import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { serve } from "crudkit-api/node";
import openapiTS, { astToString } from "openapi-typescript";
import ts from "typescript";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createExampleApp } from "../examples/app.ts";
import { tempDatabaseUrl, tempUploadDirs } from "./helpers.ts";

const root = new URL("../", import.meta.url).pathname;
const API_KEY = "generated-client-key";

/** The program a user would write: openapi-fetch with the generated `paths`. */
const PROGRAM = `
import createClient from "openapi-fetch";
import type { paths } from "./api.ts";

// Nested deepObject (filter[price][gte]=10) and comma-separated arrays (expand=a,b), as the
// document's styles say; openapi-fetch's default writes one level of brackets only.
export function querySerializer(query: Record<string, unknown>): string {
  const parts: string[] = [];
  const add = (name: string, value: unknown): void => {
    if (value === undefined || value === null) return;
    if (Array.isArray(value)) parts.push(\`\${encodeURIComponent(name)}=\${value.map((v) => encodeURIComponent(String(v))).join(",")}\`);
    else if (typeof value === "object") for (const [key, inner] of Object.entries(value)) add(\`\${name}[\${key}]\`, inner);
    else parts.push(\`\${encodeURIComponent(name)}=\${encodeURIComponent(String(value))}\`);
  };
  for (const [name, value] of Object.entries(query)) add(name, value);
  return parts.join("&");
}

export const client = createClient<paths>({
  baseUrl: process.env.BASE_URL,
  headers: { "x-api-key": process.env.API_KEY },
  querySerializer,
});
`;

const MAIN = `
import { client } from "./client.ts";

const created = await client.POST("/product", { body: { name: "Generated hat", price: 12.5, status: "active" } });
if (!created.data) throw new Error(\`create: \${JSON.stringify(created.error)}\`);
const id: string = created.data.id;
await client.POST("/product", { body: { name: "Cheap sock", price: 2, status: "active" } });
const review = await client.POST("/review", { body: { productId: id, rating: 5 } });
if (!review.data) throw new Error(\`review: \${JSON.stringify(review.error)}\`);

const page = await client.GET("/products", {
  params: {
    query: {
      filter: { price: { gte: 10 }, status: { in: ["active", "draft"] }, name: { startsWith: "Gen" } },
      expand: ["reviews"],
      sortBy: "price",
      sortOrder: "asc",
      limit: 5,
    },
  },
});
if (!page.data) throw new Error(\`list: \${JSON.stringify(page.error)}\`);
const ratings: number[] = page.data.items.flatMap((p) => (p.reviews ?? []).map((r) => r.rating));

const read = await client.GET("/product/{id}", { params: { path: { id }, query: { expand: ["reviews"] } } });
if (!read.data) throw new Error(\`read: \${JSON.stringify(read.error)}\`);
const missing = await client.GET("/product/{id}", { params: { path: { id: "no-such-id" } } });

console.log(JSON.stringify({
  created: created.data,
  names: page.data.items.map((p) => p.name),
  total: page.data.pagination.total,
  ratings,
  read: { name: read.data.name, reviews: read.data.reviews?.map((r) => r.rating) },
  missing: { status: missing.response.status, code: missing.error?.code },
}));
`;

/** What the document forbids, one mistake a line (their line numbers are asserted). */
const MISUSE = `import { client } from "./client.ts";
await client.GET("/products", { params: { query: { filter: { price: { contains: "1" } } } } });
await client.POST("/product", { body: { name: "Hat", price: "12" } });
await client.GET("/products", { params: { query: { sortBy: "nope" } } });
await client.GET("/products", { params: { query: { expand: ["nope"] } } });
await client.POST("/product", { body: { name: "Hat", price: 1, status: "sold" } });
`;

describe("a client generated from the OpenAPI document", () => {
  let server: Awaited<ReturnType<typeof serve>> | undefined;
  let app: ReturnType<typeof createExampleApp> | undefined;
  let dir = "";
  beforeAll(async () => {
    const { uploadDir, spoolDir } = tempUploadDirs();
    app = createExampleApp({
      database: { provider: "sqlite", url: tempDatabaseUrl() },
      uploadDir,
      spoolDir,
      apiKey: API_KEY,
      realtime: false,
    });
    server = await serve(app, { port: 0 });
    // Inside the project, so the program resolves openapi-fetch and @types/node from it.
    mkdirSync(join(root, "test-artifacts"), { recursive: true });
    dir = mkdtempSync(join(root, "test-artifacts", "openapi-client-"));
  }, 60_000);
  afterAll(async () => {
    await server?.close();
    await app?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("type-checks a program against the generated types, runs it against the live example, and refuses misuse", async () => {
    const document = await (await fetch(`${server!.url}/api/openapi.json`)).json();
    expect(document.servers).toEqual([{ url: `${server!.url}/api` }]);
    writeFileSync(join(dir, "api.ts"), astToString(await openapiTS(document)));
    writeFileSync(join(dir, "client.ts"), PROGRAM);
    writeFileSync(join(dir, "main.ts"), MAIN);
    writeFileSync(join(dir, "misuse.ts"), MISUSE);

    expect(diagnostics([join(dir, "main.ts")])).toEqual([]);
    const refused = diagnostics([join(dir, "misuse.ts")]);
    // Each misuse line fails, and nothing else does.
    expect([...new Set(refused.map((d) => d.line))]).toEqual([2, 3, 4, 5, 6]);

    // Asynchronously: the server answering the program runs in this process.
    const run = await promisify(execFile)(join(root, "node_modules/.bin/tsx"), [join(dir, "main.ts")], {
      env: { ...process.env, BASE_URL: document.servers[0].url, API_KEY },
      encoding: "utf8",
      timeout: 60_000,
    });
    expect(run.stderr).toBe("");
    const result = JSON.parse(run.stdout);
    expect(result.created).toMatchObject({ name: "Generated hat", price: 12.5, status: "active" });
    expect(result.names).toEqual(["Generated hat"]);
    expect(result.total).toBe(1);
    expect(result.ratings).toEqual([5]);
    expect(result.read).toEqual({ name: "Generated hat", reviews: [5] });
    expect(result.missing).toEqual({ status: 404, code: "NOT_FOUND" });
  }, 120_000);
});

/** Strict type errors of `files`, as `{ line, message }`. */
function diagnostics(files: string[]): { file: string; line: number; message: string }[] {
  const program = ts.createProgram(files, {
    strict: true,
    noEmit: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    allowImportingTsExtensions: true,
    skipLibCheck: true,
    types: ["node"],
  });
  return ts.getPreEmitDiagnostics(program).map((d) => ({
    file: d.file?.fileName ?? "",
    line: d.file && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start).line + 1 : 0,
    message: ts.flattenDiagnosticMessageText(d.messageText, "\n"),
  }));
}
