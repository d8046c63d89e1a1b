// Next.js App Router: a minimal real Next app whose `app/api/[...crudkit]/route.ts` exports
// toNextHandler(app), built with `next build` and started with `next start` on a free port; the
// API answers through it, uploads included. crudkit is used as a package (its built dist).

import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { streamOversizedUpload } from "./oversized-upload.ts";

const root = new URL("..", import.meta.url).pathname;
const work = join(root, "test/.next-work");
let dir = "";
let server: ChildProcess | undefined;
let base = "";
let serverLog = "";

const freePort = () =>
  new Promise<number>((resolve) => {
    const probe = createServer().listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });

function write(path: string, text: string) {
  mkdirSync(join(dir, path, ".."), { recursive: true });
  writeFileSync(join(dir, path), text);
}

beforeAll(async () => {
  mkdirSync(work, { recursive: true });
  dir = mkdtempSync(join(work, "app-"));
  // The package as installed: its package.json and a dist built for this app alone (the
  // repository's own dist, which the CLI tests may be running, is left as it is).
  const pkg = join(dir, "node_modules", "crudkit-api");
  mkdirSync(pkg, { recursive: true });
  copyFileSync(join(root, "package.json"), join(pkg, "package.json"));
  const built = spawnSync(
    process.execPath,
    [join(root, "node_modules/tsdown/dist/run.mjs"), "--out-dir", join(pkg, "dist"), "--no-clean"],
    { cwd: root, encoding: "utf8" },
  );
  if (built.status !== 0) throw new Error(`tsdown failed: ${built.stderr}`);
  write("package.json", JSON.stringify({ name: "next-consumer", private: true }));
  write(
    "next.config.mjs",
    `export default { serverExternalPackages: ["crudkit-api", "better-sqlite3"], eslint: { ignoreDuringBuilds: true } };\n`,
  );
  write(
    "tsconfig.json",
    JSON.stringify({
      compilerOptions: {
        target: "es2022",
        lib: ["dom", "es2023"],
        module: "esnext",
        moduleResolution: "bundler",
        strict: true,
        jsx: "preserve",
        noEmit: true,
        skipLibCheck: true,
        isolatedModules: true,
        esModuleInterop: true,
        incremental: false,
        plugins: [{ name: "next" }],
      },
      include: ["**/*.ts", "**/*.tsx"],
      exclude: ["node_modules"],
    }),
  );
  write(
    "app/layout.tsx",
    `export default function Layout({ children }: { children: React.ReactNode }) {\n  return <html><body>{children}</body></html>;\n}\n`,
  );
  write("app/page.tsx", `export default function Page() {\n  return <p>next page</p>;\n}\n`);
  write(
    "crudkit.config.ts",
    `import { apiKey, createResource, crudkit, withId } from "crudkit-api";
import { upload } from "crudkit-api/plugins";
import { z } from "zod";

const signedIn = ({ user }: { user: unknown }) => user !== null;
const product = createResource({
  name: "product",
  schema: withId({ name: z.string().min(1), price: z.number() }),
  access: { create: signedIn, read: signedIn, list: signedIn, update: signedIn, delete: signedIn },
});
export const app = crudkit({
  database: { provider: "sqlite", url: ${JSON.stringify(`file:${join(dir, "data/app.db")}`)} },
  autoMigrate: true,
  resources: [product],
  plugins: [
    apiKey({ keys: { "next-key": { id: "u" } } }),
    upload({
      uploadDir: ${JSON.stringify(join(dir, "uploads"))},
      maxFileSize: 1024 * 1024,
      access: { upload: signedIn, read: signedIn },
    }),
  ],
});
`,
  );
  write(
    "app/api/[...crudkit]/route.ts",
    `import { toNextHandler } from "crudkit-api/node";
import { app } from "../../../crudkit.config";

export const { GET, POST, PATCH, DELETE, OPTIONS } = toNextHandler(app);
export const dynamic = "force-dynamic";
`,
  );
  const next = join(root, "node_modules/next/dist/bin/next");
  const env = { ...process.env, NEXT_TELEMETRY_DISABLED: "1", NODE_ENV: "production" };
  const build = spawnSync(process.execPath, [next, "build"], {
    cwd: dir,
    encoding: "utf8",
    env,
    timeout: 240_000,
  });
  if (build.status !== 0) throw new Error(`next build failed:\n${build.stdout}\n${build.stderr}`);
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  server = spawn(process.execPath, [next, "start", "-p", String(port), "-H", "127.0.0.1"], {
    cwd: dir,
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  // Drained, so a full pipe never blocks the server; kept (the tail of it) for a failure's message.
  const keep = (chunk: Buffer) => {
    serverLog = (serverLog + chunk.toString()).slice(-4000);
  };
  server.stdout?.on("data", keep);
  server.stderr?.on("data", keep);
  for (let i = 0; i < 200; i++) {
    try {
      if ((await fetch(base)).ok) break;
    } catch {}
    await new Promise((r) => setTimeout(r, 100));
  }
}, 300_000);

afterAll(() => {
  server?.kill();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("Next.js App Router", () => {
  const headers = { "x-api-key": "next-key", "content-type": "application/json" };
  it("serves the API through route handlers, and Next's own page beside it", async () => {
    const created = await fetch(`${base}/api/product`, {
      method: "POST",
      headers,
      body: JSON.stringify({ name: "Hat", price: 5 }),
    });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: string };
    const read = await fetch(`${base}/api/product/${id}`, { headers });
    expect(((await read.json()) as { name: string }).name).toBe("Hat");
    const patched = await fetch(`${base}/api/product/${id}`, {
      method: "PATCH",
      headers,
      body: JSON.stringify({ price: 6 }),
    });
    expect(((await patched.json()) as { price: number }).price).toBe(6);
    const listed = (await (await fetch(`${base}/api/products?filter[price][gte]=6`, { headers })).json()) as {
      pagination: { total: number };
    };
    expect(listed.pagination.total).toBe(1);
    const invalid = await fetch(`${base}/api/product`, {
      method: "POST",
      headers,
      body: JSON.stringify({ name: 5 }),
    });
    expect(invalid.status).toBe(400);
    expect(((await invalid.json()) as { code: string }).code).toBe("VALIDATION_ERROR");
    expect((await fetch(`${base}/api/product/${id}`, { method: "DELETE", headers })).status).toBe(200);
    expect(await (await fetch(base)).text()).toContain("next page");
  });

  it("takes an upload through the route handler", async () => {
    const res = await fetch(`${base}/api/upload/file`, {
      method: "POST",
      headers,
      body: JSON.stringify({
        file: Buffer.from("hello").toString("base64"),
        filename: "a.txt",
        mimeType: "text/plain",
      }),
    });
    expect(res.status).toBe(201);
    expect(((await res.json()) as { size: number }).size).toBe(5);
  });

  it("refuses an oversized streamed upload with 413 before its body is sent", async () => {
    const { status, sent, body } = await streamOversizedUpload(base, { "x-api-key": "next-key" });
    expect(status, `next start printed: ${serverLog}`).toBe(413);
    expect(JSON.parse(body).code).toBe("PAYLOAD_TOO_LARGE");
    // The limit is 1 MiB (1.4 MB of base64): a buffering server would have read all 50 MB first.
    expect(sent).toBeLessThan(16 * 1024 * 1024);
  }, 30_000);
});
