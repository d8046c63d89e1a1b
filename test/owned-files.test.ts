// Files owned by records, on SQLite, PostgreSQL and MariaDB, with local storage and with a real
// S3-protocol server (s3rver): attaching a file (checked: exists, readable by the caller, of the
// right type and size, not someone else's), replacing it and deleting the record remove the object
// and its row; `gc` removes never-attached uploads past its threshold and nothing else; a failure
// at each step (the write's transaction, the storage delete, gc itself) leaves no orphan.

import { readdirSync } from "node:fs";
import { ListObjectsV2Command } from "@aws-sdk/client-s3";
import {
  apiKey,
  type CrudkitPlugin,
  createResource,
  crudkit,
  type DatabaseOptions,
  fileRef,
  LocalStorage,
  ownedBy,
  type StorageAdapter,
  withId,
} from "crudkit-api";
import { upload } from "crudkit-api/plugins";
import { S3Storage } from "crudkit-api/storage/s3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { internalsOf } from "../src/app/internals.ts";
import { forEachDialect } from "./dialects.ts";
import { call, randomBytesFor, tempUploadDirs } from "./helpers.ts";
import { startS3 } from "./s3-server.ts";

const PNG = Buffer.concat([
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
  Buffer.from(randomBytesFor(2000, 3)),
]);
const alice = { "x-api-key": "alice-key" };
const bob = { "x-api-key": "bob-key" };

/** Storage whose deletes can be made to fail, to inject faults between the steps. */
class FlakyStorage implements StorageAdapter {
  failDeletes = 0;
  constructor(private readonly inner: StorageAdapter) {}
  store: StorageAdapter["store"] = (...args) => this.inner.store(...args);
  retrieve: StorageAdapter["retrieve"] = (path) => this.inner.retrieve(path);
  exists: StorageAdapter["exists"] = (path) => this.inner.exists(path);
  getUrl: StorageAdapter["getUrl"] = (path) => this.inner.getUrl(path);
  read: StorageAdapter["read"] = (path, range) => this.inner.read!(path, range);
  size: StorageAdapter["size"] = (path) => this.inner.size!(path);
  async delete(path: string) {
    if (this.failDeletes > 0) {
      this.failDeletes--;
      throw new Error("injected: the storage is down");
    }
    return this.inner.delete(path);
  }
}

let failCreates = false;
const tripwire: CrudkitPlugin = {
  id: "tripwire",
  hooks: {
    afterCreate: () => {
      if (failCreates) throw new Error("injected: an atomic hook failed");
    },
  },
};

const product = createResource({
  name: "product",
  schema: withId({
    name: z.string().max(100),
    ownerId: z.string().max(255).optional(),
    image: fileRef({ mimeTypes: ["image/*"], maxSize: 100_000 })
      .nullable()
      .optional(),
  }),
  access: ownedBy("ownerId"),
});

/** What the apps logged: the injected failures, and gc's notes on them. */
const logged: string[] = [];

function makeApp(database: DatabaseOptions, storage: StorageAdapter) {
  const own = ({ user }: { user: { id: string } | null }) => (user ? { uploadedBy: user.id } : false);
  return crudkit({
    database,
    autoMigrate: true,
    log: (message) => logged.push(message),
    resources: [product],
    plugins: [
      apiKey({ keys: { "alice-key": { id: "alice" }, "bob-key": { id: "bob" } } }),
      upload({ storage, access: { upload: true, read: own, download: own, delete: own, list: own } }),
      tripwire,
    ],
  });
}

type Store = {
  name: string;
  make(): Promise<{ storage: StorageAdapter; objects(): Promise<string[]>; close(): Promise<void> }>;
};

const STORES: Store[] = [
  {
    name: "local",
    async make() {
      const { uploadDir } = tempUploadDirs();
      return {
        storage: new LocalStorage(uploadDir),
        objects: async () => readdirSync(uploadDir).filter((n) => !n.startsWith(".")),
        close: async () => {},
      };
    },
  },
  {
    name: "s3",
    async make() {
      const s3 = await startS3();
      const prefix = `owned-${Math.random().toString(36).slice(2)}/`;
      return {
        storage: new S3Storage({ client: s3.client, bucket: "uploads", prefix }),
        async objects() {
          const listed = await s3.client.send(
            new ListObjectsV2Command({ Bucket: "uploads", Prefix: prefix }),
          );
          return (listed.Contents ?? []).map((o) => o.Key!.slice(prefix.length));
        },
        close: () => s3.close(),
      };
    },
  },
];

forEachDialect((dialect) => {
  describe('ownedFileAccess: "record"', () => {
    it("an owned file is read and downloaded by whoever may read its record, and by no one else", async () => {
      const { uploadDir } = tempUploadDirs();
      const app = crudkit({
        database: await dialect.fresh(),
        autoMigrate: true,
        resources: [product],
        plugins: [
          apiKey({ keys: { "alice-key": { id: "alice" }, "bob-key": { id: "bob" } } }),
          // Downloads are closed to everyone by the rules: only the record's rule opens them.
          upload({
            uploadDir,
            ownedFileAccess: "record",
            access: {
              upload: true,
              read: ({ user }) => (user ? { uploadedBy: user.id } : false),
              download: false,
            },
          }),
        ],
      });
      await app.ready;
      try {
        const sent = await call(app, "POST", "/api/upload/file", {
          headers: alice,
          body: { file: PNG.toString("base64"), filename: "a.png", mimeType: "image/png" },
        });
        const created = await call(app, "POST", "/api/product", {
          headers: alice,
          body: { name: "Mine", image: sent.body.id },
        });
        expect(created.status, created.text).toBe(201);
        const mine = await app.handler(
          new Request(`http://x/api/upload/download/${sent.body.id}`, { headers: alice }),
        );
        expect(mine.status).toBe(200);
        expect(Buffer.from(await mine.arrayBuffer()).equals(PNG)).toBe(true);
        // Bob may not read Alice's product (ownedBy): the file is a missing one to him.
        const theirs = await call(app, "GET", `/api/upload/download/${sent.body.id}`, { headers: bob });
        expect(theirs.status).toBe(404);
        expect((await call(app, "GET", `/api/upload/file/${sent.body.id}`, { headers: bob })).status).toBe(
          404,
        );
        expect((await call(app, "GET", `/api/upload/file/${sent.body.id}`, { headers: alice })).body.id).toBe(
          sent.body.id,
        );
        // A file no record owns still follows the download rule (closed).
        const loose = await call(app, "POST", "/api/upload/file", {
          headers: alice,
          body: { file: PNG.toString("base64"), filename: "b.png", mimeType: "image/png" },
        });
        expect(
          (await call(app, "GET", `/api/upload/download/${loose.body.id}`, { headers: alice })).status,
        ).toBe(403);
      } finally {
        await app.close();
      }
    });
  });

  for (const store of STORES) {
    describe(`${store.name} storage`, () => {
      let app: ReturnType<typeof makeApp>;
      let flaky: FlakyStorage;
      let objects: () => Promise<string[]>;
      let closeStore: () => Promise<void>;
      beforeAll(async () => {
        const made = await store.make();
        flaky = new FlakyStorage(made.storage);
        objects = made.objects;
        closeStore = made.close;
        app = makeApp(await dialect.fresh(), flaky);
        await app.ready;
      });
      afterAll(async () => {
        await app?.close();
        await closeStore?.();
      });

      const send = (headers: Record<string, string>, filename: string, mimeType: string, bytes: Buffer) =>
        call(app, "POST", "/api/upload/file", {
          headers,
          body: { file: bytes.toString("base64"), filename, mimeType },
        });
      const uploadPng = async (headers = alice) => {
        const res = await send(headers, "a.png", "image/png", PNG);
        expect(res.status, res.text).toBe(201);
        return res.body as { id: string; filename: string };
      };
      const rows = () =>
        app.db
          .selectFrom("uploaded_files")
          .select(["id", "path", "owner_resource", "owner_id", "owner_field", "released_at"])
          .execute();
      /** Every object has its row and every row its object: nothing is orphaned either way. */
      const expectNoOrphans = async () => {
        const paths = (await rows()).map((r) => String(r.path)).sort();
        expect((await objects()).sort()).toEqual(paths);
      };

      it("attaching a file records its owner; expand gives the file record", async () => {
        const file = await uploadPng();
        const created = await call(app, "POST", "/api/product", {
          headers: alice,
          body: { name: "Hat", image: file.id },
        });
        expect(created.status, created.text).toBe(201);
        const row = (await rows()).find((r) => r.id === file.id)!;
        expect(row).toMatchObject({
          owner_resource: "product",
          owner_id: created.body.id,
          owner_field: "image",
        });
        const read = await call(app, "GET", `/api/product/${created.body.id}?expand=image`, {
          headers: alice,
        });
        expect(read.body.image).toMatchObject({ id: file.id, mimeType: "image/png", size: PNG.length });
        // A record owns its file: deleting it through the upload routes is refused.
        const refused = await call(app, "DELETE", `/api/upload/file/${file.id}`, { headers: alice });
        expect(refused.status).toBe(409);
        await expectNoOrphans();
      });

      it("replacing the file and deleting the record remove the old object and its row", async () => {
        const first = await uploadPng();
        const second = await uploadPng();
        const created = await call(app, "POST", "/api/product", {
          headers: alice,
          body: { name: "Cap", image: first.id },
        });
        const replaced = await call(app, "PATCH", `/api/product/${created.body.id}`, {
          headers: alice,
          body: { image: second.id },
        });
        expect(replaced.status, replaced.text).toBe(200);
        expect((await rows()).map((r) => r.id)).not.toContain(first.id);
        expect(await objects()).not.toContain(first.filename);
        const cleared = await call(app, "PATCH", `/api/product/${created.body.id}`, {
          headers: alice,
          body: { image: null },
        });
        expect(cleared.status).toBe(200);
        expect(await objects()).not.toContain(second.filename);
        const third = await uploadPng();
        await call(app, "PATCH", `/api/product/${created.body.id}`, {
          headers: alice,
          body: { image: third.id },
        });
        expect(
          (await call(app, "DELETE", `/api/product/${created.body.id}`, { headers: alice })).status,
        ).toBe(200);
        expect((await rows()).map((r) => r.id)).not.toContain(third.id);
        expect(await objects()).not.toContain(third.filename);
        await expectNoOrphans();
      });

      it("refuses a missing, foreign, wrongly typed, oversized or already attached file with 400 naming the field", async () => {
        const text = await send(alice, "a.txt", "text/plain", Buffer.from("just text"));
        const bobs = await uploadPng(bob);
        const taken = await uploadPng();
        await call(app, "POST", "/api/product", { headers: alice, body: { name: "Owner", image: taken.id } });
        const cases: [unknown, string][] = [
          ["no-such-file", "No uploaded file with this id exists."],
          [bobs.id, "No uploaded file with this id exists."],
          [text.body.id, "Must be a file of type image/*; this one is text/plain."],
          [taken.id, "This file is already attached to another record."],
          ["x'; delete from uploaded_files; --", "No uploaded file with this id exists."],
        ];
        const before = await call(app, "GET", "/api/products?limit=100&count=exact", { headers: alice });
        for (const [image, message] of cases) {
          const res = await call(app, "POST", "/api/product", {
            headers: alice,
            body: { name: "Bad", image },
          });
          expect(res.status, String(image)).toBe(400);
          expect(res.body.details).toEqual([{ path: "image", message }]);
        }
        const bad = await call(app, "POST", "/api/product", {
          headers: alice,
          body: { name: "Bad", image: 42 },
        });
        expect(bad.status).toBe(400);
        // Nothing was created, and Bob's file is still his, unattached.
        const after = await call(app, "GET", "/api/products?limit=100&count=exact", { headers: alice });
        expect(after.body.pagination.total).toBe(before.body.pagination.total);
        expect((await rows()).find((r) => r.id === bobs.id)?.owner_id).toBeNull();
      });

      it("a write that fails after claiming leaves the file unattached, and claimable", async () => {
        const file = await uploadPng();
        failCreates = true;
        try {
          const res = await call(app, "POST", "/api/product", {
            headers: alice,
            body: { name: "X", image: file.id },
          });
          expect(res.status).toBe(500);
        } finally {
          failCreates = false;
        }
        expect((await rows()).find((r) => r.id === file.id)).toMatchObject({
          owner_id: null,
          released_at: null,
        });
        const retried = await call(app, "POST", "/api/product", {
          headers: alice,
          body: { name: "X", image: file.id },
        });
        expect(retried.status).toBe(201);
        await expectNoOrphans();
      });

      it("a storage failure after the commit leaves the file marked for gc, which finishes it", async () => {
        const first = await uploadPng();
        const second = await uploadPng();
        const created = await call(app, "POST", "/api/product", {
          headers: alice,
          body: { name: "F", image: first.id },
        });
        flaky.failDeletes = 1;
        const replaced = await call(app, "PATCH", `/api/product/${created.body.id}`, {
          headers: alice,
          body: { image: second.id },
        });
        expect(replaced.status).toBe(200);
        const left = (await rows()).find((r) => r.id === first.id)!;
        expect(left.owner_id).toBeNull();
        expect(left.released_at).not.toBeNull();
        expect(logged).toContain("crudkit: could not remove a released file; crudkit gc will retry");
        await expectNoOrphans();
        // gc fails once more (the storage is still down), then succeeds.
        const files = internalsOf(app)!.files!;
        flaky.failDeletes = 1;
        const failed = await files.collectGarbage({ olderThan: new Date(0), dryRun: false });
        expect(failed.files.map((f) => f.id)).not.toContain(first.id);
        const done = await files.collectGarbage({ olderThan: new Date(0), dryRun: false });
        expect(done.files).toContainEqual(expect.objectContaining({ id: first.id, reason: "released" }));
        expect((await rows()).map((r) => r.id)).not.toContain(first.id);
        await expectNoOrphans();
      });

      it("gc removes never-attached uploads older than its threshold, and nothing else; a dry run removes nothing", async () => {
        const files = internalsOf(app)!.files!;
        // Whatever earlier tests left unattached goes first, so this test counts only its own.
        await files.collectGarbage({ olderThan: new Date(Date.now() + 60_000), dryRun: false });
        const old = await uploadPng();
        const fresh = await uploadPng();
        const kept = await uploadPng();
        await call(app, "POST", "/api/product", { headers: alice, body: { name: "Kept", image: kept.id } });
        const past = new Date(Date.now() - 48 * 3600_000);
        const stamp = dialect.name === "sqlite" ? past.toISOString() : past;
        await app.db
          .updateTable("uploaded_files")
          .set({ uploaded_at: stamp })
          .where("id", "in", [old.id, kept.id])
          .execute();
        const cutoff = new Date(Date.now() - 24 * 3600_000);
        const dry = await files.collectGarbage({ olderThan: cutoff, dryRun: true });
        expect(dry.files.map((f) => f.id)).toEqual([old.id]);
        expect((await rows()).map((r) => r.id)).toContain(old.id);
        const real = await files.collectGarbage({ olderThan: cutoff, dryRun: false });
        expect(real.files).toEqual([
          { id: old.id, originalName: "a.png", size: PNG.length, reason: "never attached" },
        ]);
        const ids = (await rows()).map((r) => r.id);
        expect(ids).not.toContain(old.id);
        expect(ids).toEqual(expect.arrayContaining([fresh.id, kept.id]));
        await expectNoOrphans();
      });
    });
  }
});
