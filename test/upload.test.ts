// The upload plugin end to end: over HTTP and through the client, on every database, with local
// and S3 storage; each check with its status and code, and nothing left behind when one fails.

import { createHash } from "node:crypto";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ListObjectsV2Command } from "@aws-sdk/client-s3";
import {
  apiKey,
  type CrudkitPlugin,
  crudkit,
  type DatabaseOptions,
  LocalStorage,
  type StorageAdapter,
} from "crudkit-api";
import { createClient } from "crudkit-api/client";
import { type RunningServer, serve } from "crudkit-api/node";
import { type UploadedFileRecord, upload } from "crudkit-api/plugins";
import { S3Storage } from "crudkit-api/storage/s3";
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from "vitest";
import { forEachDialect } from "./dialects.ts";
import { call } from "./helpers.ts";
import { startS3 } from "./s3-server.ts";

const PNG = Buffer.concat([
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
  Buffer.from(Array.from({ length: 3000 }, (_, i) => (i * 7) % 256)),
]);
const sha = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");
const ALL = { upload: true, read: true, download: true, delete: true, list: true } as const;
const dirs: string[] = [];
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), "crudkit-upload-"));
  dirs.push(dir);
  return dir;
};
/** This file's spool directory: every test checks it is left empty. */
const SPOOL_DIR = tempDir();

let s3server: Awaited<ReturnType<typeof startS3>>;
let s3: Awaited<ReturnType<typeof startS3>>["client"];
let prefixes = 0;
beforeAll(async () => {
  s3server = await startS3();
  s3 = s3server.client;
});
afterAll(async () => {
  await s3server?.close();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

interface Store {
  name: string;
  make(): { storage: StorageAdapter; contents(): Promise<string[]> };
}

const STORES: Store[] = [
  {
    name: "local",
    make() {
      const dir = tempDir();
      return { storage: new LocalStorage(dir, "/uploads"), contents: async () => readdirSync(dir).sort() };
    },
  },
  {
    name: "s3",
    make() {
      const prefix = `t${prefixes++}/`;
      return {
        storage: new S3Storage({ client: s3, bucket: "uploads", prefix }),
        contents: async () =>
          ((await s3.send(new ListObjectsV2Command({ Bucket: "uploads", Prefix: prefix }))).Contents ?? [])
            .map((o) => o.Key!)
            .sort(),
      };
    },
  },
];

const makeApp = (
  database: DatabaseOptions,
  storage: StorageAdapter,
  extra: Parameters<typeof upload>[0] = {},
  plugins: CrudkitPlugin[] = [],
) =>
  crudkit({
    database,
    autoMigrate: true,
    resources: [],
    plugins: [
      upload({ storage, access: ALL, maxFileSize: 64 * 1024, spoolDir: SPOOL_DIR, ...extra }),
      apiKey({ keys: { k: { id: "uploader" } } }),
      ...plugins,
    ],
  });

const post = (
  app: { handler: (r: Request) => Promise<Response> },
  body: unknown,
  headers: Record<string, string> = {},
) => call(app, "POST", "/api/upload/file", { body, headers });

forEachDialect((dialect) => {
  for (const store of STORES) {
    describe(`with ${store.name} storage`, () => {
      let app: ReturnType<typeof makeApp>;
      let server: RunningServer;
      let contents: () => Promise<string[]>;
      beforeAll(async () => {
        const made = store.make();
        contents = made.contents;
        app = makeApp(await dialect.fresh(), made.storage, {
          allowedMimeTypes: ["image/*", "text/plain", "application/pdf"],
        });
        server = await serve(app, { port: 0 });
      });
      afterAll(async () => {
        await server?.close();
        await app?.close();
      });

      it("upload → get → download → list → delete → 404, over HTTP", async () => {
        const created = await post(
          app,
          {
            file: PNG.toString("base64"),
            filename: "cat.png",
            mimeType: "image/png",
            metadata: { album: "pets" },
          },
          { "x-api-key": "k" },
        );
        expect(created.status).toBe(201);
        expect(created.body).toEqual({
          id: expect.any(String),
          filename: expect.stringMatching(/^[0-9a-f-]{36}\.png$/),
          originalName: "cat.png",
          mimeType: "image/png",
          size: PNG.byteLength,
          url: store.name === "local" ? `/uploads/${created.body.filename}` : null,
          uploadedBy: "uploader",
          uploadedAt: expect.stringMatching(/Z$/),
          metadata: { album: "pets" },
        });
        expect(created.text).not.toMatch(/path|\/tmp\//);
        const id = created.body.id;
        expect((await call(app, "GET", `/api/upload/file/${id}`)).body).toEqual(created.body);
        const download = await app.handler(new Request(`http://x/api/upload/download/${id}`));
        expect(download.status).toBe(200);
        expect(download.headers.get("content-type")).toBe("image/png");
        expect(download.headers.get("content-length")).toBe(String(PNG.byteLength));
        expect(download.headers.get("x-content-type-options")).toBe("nosniff");
        expect(download.headers.get("content-disposition")).toBe(
          `attachment; filename="cat.png"; filename*=UTF-8''cat.png`,
        );
        expect(sha(new Uint8Array(await download.arrayBuffer()))).toBe(sha(PNG));
        const listed = await call(app, "GET", "/api/upload/files?mimeType=image/*");
        expect(listed.body.items.map((f: { id: string }) => f.id)).toContain(id);
        expect(
          (await call(app, "GET", "/api/upload/files?mimeType=text/plain")).body.items.map(
            (f: { id: string }) => f.id,
          ),
        ).not.toContain(id);
        expect(await contents()).toHaveLength(1);
        expect((await call(app, "DELETE", `/api/upload/file/${id}`)).body).toEqual({ success: true, id });
        expect((await call(app, "GET", `/api/upload/file/${id}`)).status).toBe(404);
        expect((await call(app, "GET", `/api/upload/download/${id}`)).status).toBe(404);
        expect(await contents()).toEqual([]);
      });

      it("the same through the client, with list pagination", async () => {
        const client = createClient<typeof app>({
          baseURL: `${server.url}/api`,
          headers: { "x-api-key": "k" },
        });
        const ids: string[] = [];
        for (let i = 0; i < 3; i++) {
          const { data, error } = await client.uploadFile({
            file: Buffer.from(`note ${i}`).toString("base64"),
            filename: `n${i}.txt`,
            mimeType: "text/plain",
          });
          expect(error).toBeNull();
          ids.push(data!.id);
        }
        const page = await client.listFiles({ page: 2, limit: 2, mimeType: "text/plain" });
        expect(page.data?.pagination).toEqual({
          page: 2,
          limit: 2,
          total: 3,
          totalPages: 2,
          hasNext: false,
          hasPrev: true,
        });
        expect(page.data?.items.map((f) => f.id)).toEqual([ids[0]]);
        expect((await client.getFile({ id: ids[1]! })).data?.originalName).toBe("n1.txt");
        const downloaded = await fetch(`${server.url}/api/upload/download/${ids[2]}`);
        expect(await downloaded.text()).toBe("note 2");
        for (const id of ids) expect((await client.deleteFile({ id })).data).toEqual({ success: true, id });
        expect((await client.getFile({ id: ids[0]! })).error?.status).toBe(404);
      });

      it("each check answers its status and code, in order, and leaves nothing behind", async () => {
        const before = await contents();
        const cases: [unknown, number, string, RegExp][] = [
          [
            { file: "x".repeat(100_000), filename: "a.png", mimeType: "image/png" },
            413,
            "PAYLOAD_TOO_LARGE",
            /limit of 65536 bytes/,
          ],
          [
            { file: "data:image/png;base64,aGk=", filename: "a.png", mimeType: "image/png" },
            400,
            "BAD_REQUEST",
            /strip "data:/,
          ],
          [
            { file: "not base64!", filename: "a.png", mimeType: "image/png" },
            400,
            "BAD_REQUEST",
            /not valid base64/,
          ],
          [
            { file: PNG.toString("base64"), filename: "a.zip", mimeType: "application/zip" },
            415,
            "UNSUPPORTED_MEDIA_TYPE",
            /not allowed/,
          ],
          [
            { file: Buffer.from("MZ binary").toString("base64"), filename: "a.png", mimeType: "image/png" },
            415,
            "UNSUPPORTED_MEDIA_TYPE",
            /does not match/,
          ],
          [
            { filename: "a.png", mimeType: "image/png", file: Buffer.from("%PDF-1.4 no").toString("base64") },
            415,
            "UNSUPPORTED_MEDIA_TYPE",
            /does not match/,
          ],
          [
            { file: PNG.toString("base64"), mimeType: "image/png" },
            400,
            "VALIDATION_ERROR",
            /filename is required/,
          ],
          [
            { file: PNG.toString("base64"), filename: "a.png", mimeType: "nonsense" },
            400,
            "VALIDATION_ERROR",
            /mimeType/,
          ],
          [{ filename: "a.png", mimeType: "image/png" }, 400, "VALIDATION_ERROR", /file is required/],
          [
            { file: PNG.toString("base64"), filename: "a.png", mimeType: "image/png", owner: "me" },
            400,
            "VALIDATION_ERROR",
            /Unknown field/,
          ],
        ];
        for (const [body, status, code, message] of cases) {
          const res = await post(app, body);
          expect(res.status, JSON.stringify(body).slice(0, 60)).toBe(status);
          expect(res.body.code).toBe(code);
          expect(res.body.message).toMatch(message);
        }
        expect(await contents()).toEqual(before);
        expect((await call(app, "GET", "/api/upload/files")).body.pagination.total).toBe(0);
      });

      it("a client that disconnects halfway leaves no object, no row, no temporary file", async () => {
        const before = await contents();
        const url = new URL(`${server.url}/api/upload/file`);
        await new Promise<void>((resolve) => {
          const req = httpRequest({
            host: url.hostname,
            port: url.port,
            path: url.pathname,
            method: "POST",
            headers: { "content-type": "application/json" },
          });
          req.on("error", () => resolve());
          req.write('{"filename":"half.png","mimeType":"image/png","file":"');
          req.write(PNG.toString("base64").slice(0, 1000));
          setTimeout(() => {
            req.destroy();
            resolve();
          }, 200);
        });
        await new Promise((r) => setTimeout(r, 300));
        expect(await contents()).toEqual(before);
        expect((await call(app, "GET", "/api/upload/files")).body.pagination.total).toBe(0);
        expect(readdirSync(SPOOL_DIR)).toEqual([]);
      });
    });
  }
});

describe("upload plugin (SQLite, local storage)", () => {
  const fresh = (extra: Parameters<typeof upload>[0] = {}, plugins: CrudkitPlugin[] = []) => {
    const dir = tempDir();
    const app = makeApp({ provider: "sqlite", url: ":memory:" }, new LocalStorage(dir), extra, plugins);
    return { app, files: () => readdirSync(dir) };
  };

  it("denies every operation without a rule, before reading anything", async () => {
    const dir = tempDir();
    const app = crudkit({
      database: { provider: "sqlite", url: ":memory:" },
      autoMigrate: true,
      resources: [],
      plugins: [upload({ uploadDir: dir })],
    });
    const res = await call(app, "POST", "/api/upload/file", {
      rawBody: "{broken",
      headers: { "content-type": "application/json" },
    });
    expect(res.status).toBe(403);
    expect(res.body.code).toBe("FORBIDDEN");
    expect(res.body.message).toContain("Set access.upload in upload()");
    for (const [method, path] of [
      ["GET", "/api/upload/file/x"],
      ["GET", "/api/upload/download/x"],
      ["DELETE", "/api/upload/file/x"],
      ["GET", "/api/upload/files"],
    ]) {
      const denied = await call(app, method!, path!);
      expect([denied.status, denied.body.code]).toEqual([403, "FORBIDDEN"]);
    }
  });

  it("names: original keeps a sanitized name and never overwrites; hostile names stay inside", async () => {
    const { app, files } = fresh({ fileNaming: "original" });
    const names = [
      "../x.txt",
      "..\\x.txt",
      "/etc/passwd",
      "%2e%2e%2fx.txt",
      "a\u0000b.txt",
      "c\u0007d.txt",
      "y".repeat(1000),
      "",
      "x.txt",
    ];
    for (const filename of names) {
      const res = await post(app, {
        file: Buffer.from("t").toString("base64"),
        filename,
        mimeType: "text/plain",
      });
      if (filename === "") {
        expect(res.status).toBe(400);
        expect(res.body).toMatchObject({ code: "VALIDATION_ERROR", details: [{ path: "filename" }] });
        continue;
      }
      if (filename.includes("\0")) {
        // No database stores NUL as sent (PostgreSQL refuses it, SQLite cuts at it): refused everywhere.
        expect(res.status).toBe(400);
        expect(res.body).toMatchObject({ code: "VALIDATION_ERROR", details: [{ path: "filename" }] });
        continue;
      }
      expect(res.status, JSON.stringify(filename)).toBe(201);
      expect(res.body.originalName).toBe(filename);
      expect(res.body.filename).toMatch(/^[A-Za-z0-9][A-Za-z0-9._-]*$/);
    }
    // In the uploader's namespace (anonymous here), with the type's extension.
    expect(files()).toContain("anonymous_x.txt");
    expect(files()).toContain("anonymous_x-1.txt");
    expect(files()).toContain("anonymous_x-2.txt");
    expect(files().every((f) => !f.includes("/"))).toBe(true);
  });

  it("validate: false rejects with 400; a throw shows its message, never its stack", async () => {
    const rejecting = fresh({ validate: (file) => file.size < 5 });
    const big = await post(rejecting.app, {
      file: PNG.toString("base64"),
      filename: "a.png",
      mimeType: "image/png",
    });
    expect(big.status).toBe(400);
    expect(big.body.code).toBe("VALIDATION_ERROR");
    expect(rejecting.files()).toEqual([]);
    const throwing = fresh({
      validate: (file) => {
        throw new Error(`no ${file.mimeType} on Sundays`);
      },
    });
    const res = await post(throwing.app, {
      file: PNG.toString("base64"),
      filename: "a.png",
      mimeType: "image/png",
    });
    expect(res.body).toEqual({
      code: "VALIDATION_ERROR",
      message: "no image/png on Sundays",
      details: [{ path: "file", message: "no image/png on Sundays" }],
    });
    expect(res.text).not.toContain("    at ");
    expect(throwing.files()).toEqual([]);
  });

  it("download: Range 206, suffix range, 416, If-None-Match 304, non-ASCII names", async () => {
    const { app } = fresh();
    const created = await post(app, {
      file: PNG.toString("base64"),
      filename: "café «1».png",
      mimeType: "image/png",
    });
    const id = created.body.id;
    const get = (headers: Record<string, string>) =>
      app.handler(new Request(`http://x/api/upload/download/${id}`, { headers }));
    const ranged = await get({ range: "bytes=10-19" });
    expect(ranged.status).toBe(206);
    expect(ranged.headers.get("content-range")).toBe(`bytes 10-19/${PNG.byteLength}`);
    expect(Buffer.from(await ranged.arrayBuffer())).toEqual(PNG.subarray(10, 20));
    const suffix = await get({ range: "bytes=-5" });
    expect(Buffer.from(await suffix.arrayBuffer())).toEqual(PNG.subarray(-5));
    const outside = await get({ range: `bytes=${PNG.byteLength}-` });
    expect(outside.status).toBe(416);
    expect(outside.headers.get("content-range")).toBe(`bytes */${PNG.byteLength}`);
    const full = await get({});
    const etag = full.headers.get("etag")!;
    expect(full.headers.get("content-disposition")).toBe(
      `attachment; filename="caf_ _1_.png"; filename*=UTF-8''caf%C3%A9%20%C2%AB1%C2%BB.png`,
    );
    const cached = await get({ "if-none-match": etag });
    expect(cached.status).toBe(304);
    expect(await cached.text()).toBe("");
  });

  it("trackInDatabase: false stores files and answers the record routes with a clear 404", async () => {
    const { app, files } = fresh({ trackInDatabase: false });
    const created = await post(app, {
      file: PNG.toString("base64"),
      filename: "a.png",
      mimeType: "image/png",
    });
    expect(created.status).toBe(201);
    expect(files()).toHaveLength(1);
    for (const path of [
      `/api/upload/file/${created.body.id}`,
      `/api/upload/download/${created.body.id}`,
      "/api/upload/files",
    ]) {
      const res = await call(app, "GET", path);
      expect(res.status).toBe(404);
      expect(res.body.message).toContain("trackInDatabase: false");
    }
  });

  it("faults: storage failing on store, and a failing insert, leave neither object nor row", async () => {
    const failing: StorageAdapter = {
      ...new LocalStorage(tempDir()),
      store: async () => {
        throw new Error("disk full");
      },
      delete: async () => {},
      retrieve: async () => new Uint8Array(),
      exists: async () => false,
      getUrl: () => undefined,
    };
    const storeFails = makeApp({ provider: "sqlite", url: ":memory:" }, failing);
    const res = await post(storeFails, {
      file: PNG.toString("base64"),
      filename: "a.png",
      mimeType: "image/png",
    });
    expect(res.status).toBe(500);
    expect(res.text).not.toContain("disk full");
    expect((await call(storeFails, "GET", "/api/upload/files")).body.pagination.total).toBe(0);

    // A hook that must commit with the insert fails: the row rolls back and the stored object is removed.
    const refusing: CrudkitPlugin = {
      id: "refusing",
      hooks: {
        afterCreate: ({ resource }) => {
          if (resource === "uploaded_file") throw new Error("audit table unavailable");
        },
      },
    };
    const { app, files } = fresh({}, [refusing]);
    const refused = await post(app, {
      file: PNG.toString("base64"),
      filename: "a.png",
      mimeType: "image/png",
    });
    expect(refused.status).toBe(500);
    expect(files()).toEqual([]);
    expect((await call(app, "GET", "/api/upload/files")).body.pagination.total).toBe(0);
  });

  it("faults: a database that fails on insert leaves no stored object behind", async () => {
    const { app, files } = fresh();
    await app.ready;
    // The table disappears under the running app: the insert fails after the bytes were stored.
    await app.db.schema.dropTable("uploaded_files").execute();
    const res = await post(app, { filename: "a.png", mimeType: "image/png", file: PNG.toString("base64") });
    expect(res.status).toBe(500);
    expect(res.body).toEqual({
      code: "INTERNAL_ERROR",
      message: "The server could not complete the request.",
      requestId: expect.any(String),
    });
    expect(files()).toEqual([]);
  });

  it("types the client's upload methods from the plugin", () => {
    const { app } = fresh();
    const client = createClient<typeof app>({ baseURL: "http://127.0.0.1:1/api" });
    const calls = {
      upload: () =>
        client.uploadFile({ file: "aGk=", filename: "a.txt", mimeType: "text/plain", metadata: { a: 1 } }),
      get: () => client.getFile({ id: "x" }),
      list: () => client.listFiles({ page: 1, limit: 10, mimeType: "image/*" }),
      remove: () => client.deleteFile({ id: "x" }),
    };
    expectTypeOf<
      NonNullable<Awaited<ReturnType<typeof calls.upload>>["data"]>
    >().toEqualTypeOf<UploadedFileRecord>();
    expectTypeOf<
      NonNullable<Awaited<ReturnType<typeof calls.get>>["data"]>["size"]
    >().toEqualTypeOf<number>();
    expectTypeOf<NonNullable<Awaited<ReturnType<typeof calls.list>>["data"]>["items"]>().toEqualTypeOf<
      UploadedFileRecord[]
    >();
    expectTypeOf<NonNullable<Awaited<ReturnType<typeof calls.remove>>["data"]>>().toEqualTypeOf<{
      success: true;
      id: string;
    }>();
    const never = () => {
      // @ts-expect-error file is required
      void client.uploadFile({ filename: "a.txt", mimeType: "text/plain" });
      // @ts-expect-error id is a string
      void client.getFile({ id: 1 });
    };
    expect(typeof never).toBe("function");
  });

  it("runs plugin hooks for upload and delete", async () => {
    const seen: string[] = [];
    const recorder: CrudkitPlugin = {
      id: "recorder",
      hooks: {
        afterCreate: ({ resource, operation, user }) =>
          void seen.push(`${resource} ${operation} ${user?.id}`),
        afterDelete: ({ resource, operation, id }) => void seen.push(`${resource} ${operation} ${id}`),
      },
    };
    const { app } = fresh({}, [recorder]);
    const created = await post(
      app,
      { file: PNG.toString("base64"), filename: "a.png", mimeType: "image/png" },
      { "x-api-key": "k" },
    );
    await call(app, "DELETE", `/api/upload/file/${created.body.id}`);
    expect(seen).toEqual(["uploaded_file create uploader", `uploaded_file delete ${created.body.id}`]);
  });
});
