// `expand` of a `fileRef` field on SQLite, PostgreSQL and MariaDB, over HTTP and app.api: it gives
// the file record exactly to the callers the upload plugin lets read the file, as
// `GET /upload/file/:id` gives it, `ownedFileAccess: "record"` included (issue 45, item 11), and
// null, with nothing of the file, to anyone else; one statement per relation for a whole page.

import {
  apiKey,
  createResource,
  crudkit,
  type DatabaseOptions,
  fileRef,
  references,
  withId,
} from "crudkit-api";
import { upload } from "crudkit-api/plugins";
import type { Kysely } from "kysely";
import { beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { appPerDialect, countingKysely, forEachDialect } from "./dialects.ts";
import { call, randomBytesFor, tempUploadDirs } from "./helpers.ts";

const PNG = Buffer.concat([
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
  Buffer.from(randomBytesFor(1234, 7)),
]);
/** The uploaded name: no answer to a caller who may not read the file may contain it. */
const SECRET_NAME = "merger-plan-7f3a.png";
const KEYS = ["alice", "bob", "carol", "dave"] as const;
const as = {
  alice: { "x-api-key": "alice-key" },
  bob: { "x-api-key": "bob-key" },
  carol: { "x-api-key": "carol-key" },
  dave: { "x-api-key": "dave-key" },
};

const signedIn = ({ user }: { user: unknown }) => user !== null;

/** Every signed-in caller lists every doc; she reads one only as its owner or its reader. */
const doc = createResource({
  name: "doc",
  schema: withId({
    title: z.string().max(100),
    ownerId: z.string().max(255).optional(),
    readerId: z.string().max(255).optional(),
    attachment: fileRef().nullable().optional(),
  }),
  access: {
    owner: "ownerId",
    create: signedIn,
    list: signedIn,
    read: ({ user }) => (user ? { or: [{ ownerId: user.id }, { readerId: user.id }] } : false),
  },
});

const note = createResource({
  name: "note",
  schema: withId({ body: z.string().max(100), docId: references(doc) }),
  access: { create: signedIn, read: signedIn, list: signedIn },
});

/** Files are read by their uploader under the rules, and downloaded by no one. */
const makeApp = (database: DatabaseOptions | Kysely<any>, ownedFileAccess: "rule" | "record") =>
  crudkit({
    database,
    autoMigrate: true,
    resources: [doc, note],
    plugins: [
      apiKey({ keys: Object.fromEntries(KEYS.map((k) => [`${k}-key`, { id: k }])) }),
      upload({
        uploadDir: tempUploadDirs().uploadDir,
        ownedFileAccess,
        access: {
          upload: true,
          read: ({ user }) => (user ? { uploadedBy: user.id } : false),
          download: false,
        },
      }),
    ],
  });
type App = ReturnType<typeof makeApp>;

async function uploadAs(app: App, headers: Record<string, string>): Promise<{ id: string }> {
  const sent = await call(app, "POST", "/api/upload/file", {
    headers,
    body: { file: PNG.toString("base64"), filename: SECRET_NAME, mimeType: "image/png" },
  });
  expect(sent.status, sent.text).toBe(201);
  return sent.body;
}

/** Alice's doc, readable by Bob, holding a file Alice uploaded; a note on it. */
async function aliceDoc(app: App) {
  const file = await uploadAs(app, as.alice);
  const created = await call(app, "POST", "/api/doc", {
    headers: as.alice,
    body: { title: "Shared with Bob", readerId: "bob", attachment: file.id },
  });
  expect(created.status, created.text).toBe(201);
  const noted = await call(app, "POST", "/api/note", {
    headers: as.alice,
    body: { body: "see the plan", docId: created.body.id },
  });
  expect(noted.status, noted.text).toBe(201);
  return { fileId: file.id, docId: created.body.id as string };
}

/** What a caller who may not read the file must see: null, and nothing of it anywhere. */
function expectNoFile(res: { status: number; text: string }, attachment: unknown) {
  expect(res.status, res.text).toBe(200);
  expect(attachment).toBeNull();
  expect(res.text).not.toContain(SECRET_NAME);
  expect(res.text).not.toContain(String(PNG.length));
  expect(res.text).not.toContain('"mimeType"');
}

forEachDialect((dialect) => {
  describe('ownedFileAccess: "record"', () => {
    const app = appPerDialect(dialect, (database) => makeApp(database, "record"));
    let ids: { fileId: string; docId: string };
    beforeAll(async () => {
      ids = await aliceDoc(app);
    });

    it("a reader of the record gets the file from expand, as the file endpoint gives it to him (HTTP)", async () => {
      const { fileId, docId } = ids;
      // Bob did not upload the file: the upload rules alone would refuse him, the record lets him.
      const file = await call(app, "GET", `/api/upload/file/${fileId}`, { headers: as.bob });
      expect(file.status, file.text).toBe(200);
      expect(file.body).toMatchObject({ id: fileId, originalName: SECRET_NAME, size: PNG.length });
      const read = await call(app, "GET", `/api/doc/${docId}?expand=attachment`, { headers: as.bob });
      expect(read.status, read.text).toBe(200);
      expect(read.body.attachment).toEqual(file.body);
      const list = await call(app, "GET", "/api/docs?expand=attachment", { headers: as.bob });
      expect(list.body.items.find((d: { id: string }) => d.id === docId).attachment).toEqual(file.body);
      const nested = await call(app, "GET", "/api/notes?expand=doc.attachment", { headers: as.bob });
      expect(nested.body.items[0].doc.attachment).toEqual(file.body);
      // Alice owns the record and uploaded the file.
      const hers = await call(app, "GET", `/api/doc/${docId}?expand=attachment`, { headers: as.alice });
      expect(hers.body.attachment).toEqual(file.body);
    });

    it("the same through app.api, with the caller's headers and with overrideAccess", async () => {
      const { fileId, docId } = ids;
      const file = (await call(app, "GET", `/api/upload/file/${fileId}`, { headers: as.bob })).body;
      const read = await app.api.readDoc({
        params: { id: docId },
        query: { expand: ["attachment"] },
        headers: as.bob,
      });
      expect(read.attachment).toEqual(file);
      const list = await app.api.listDocs({ query: { expand: ["attachment"] }, headers: as.bob });
      expect(list.items.find((d) => d.id === docId)?.attachment).toEqual(file);
      const nested = await app.api.listNotes({ query: { expand: ["doc.attachment"] }, headers: as.bob });
      expect(nested.items[0]?.doc?.attachment).toEqual(file);
      const server = await app.api.readDoc({
        params: { id: docId },
        query: { expand: ["attachment"] },
        overrideAccess: true,
      });
      expect(server.attachment).toEqual(file);
    });

    it("a caller who may list the record but not read it gets null, and nothing of the file", async () => {
      const { fileId, docId } = ids;
      expect((await call(app, "GET", `/api/upload/file/${fileId}`, { headers: as.carol })).status).toBe(404);
      const list = await call(app, "GET", "/api/docs?expand=attachment", { headers: as.carol });
      const mine = list.body.items.find((d: { id: string }) => d.id === docId);
      expectNoFile(list, mine.attachment);
      const nested = await call(app, "GET", "/api/notes?expand=doc.attachment", { headers: as.carol });
      expectNoFile(nested, nested.body.items[0].doc?.attachment ?? null);
      const api = await app.api.listDocs({ query: { expand: ["attachment"] }, headers: as.carol });
      expect(api.items.find((d) => d.id === docId)?.attachment).toBeNull();
    });

    it("the uploader of a file a record she may not read owns gets null: the record decides, not the rules", async () => {
      const file = await uploadAs(app, as.dave);
      const created = await app.api.createDoc({
        body: { title: "Alice's, with Dave's file", ownerId: "alice", attachment: file.id },
        overrideAccess: true,
      });
      // The upload rules let Dave read his uploads; the owning record does not let him.
      expect((await call(app, "GET", `/api/upload/file/${file.id}`, { headers: as.dave })).status).toBe(404);
      const list = await call(app, "GET", "/api/docs?expand=attachment", { headers: as.dave });
      const held = list.body.items.find((d: { id: string }) => d.id === created.id);
      expectNoFile(list, held.attachment);
      const api = await app.api.listDocs({ query: { expand: ["attachment"] }, headers: as.dave });
      expect(api.items.find((d) => d.id === created.id)?.attachment).toBeNull();
    });
  });

  describe('ownedFileAccess: "rule"', () => {
    const app = appPerDialect(dialect, (database) => makeApp(database, "rule"));

    it("the upload read rule decides: the uploader gets the file, a reader of the record who is not gets null", async () => {
      const { fileId, docId } = await aliceDoc(app);
      const file = await call(app, "GET", `/api/upload/file/${fileId}`, { headers: as.alice });
      const hers = await call(app, "GET", `/api/doc/${docId}?expand=attachment`, { headers: as.alice });
      expect(hers.body.attachment).toEqual(file.body);
      expect((await call(app, "GET", `/api/upload/file/${fileId}`, { headers: as.bob })).status).toBe(404);
      const his = await call(app, "GET", `/api/doc/${docId}?expand=attachment`, { headers: as.bob });
      expectNoFile(his, his.body.attachment);
      const api = await app.api.readDoc({
        params: { id: docId },
        query: { expand: ["attachment"] },
        headers: as.bob,
      });
      expect(api.attachment).toBeNull();
    });
  });

  it('expanding the files of a page takes the same statements for 2 records as for 8 ("record")', async () => {
    const queries: string[] = [];
    const app = makeApp(await countingKysely(dialect.name, await dialect.fresh(), queries), "record");
    await app.ready;
    try {
      for (let i = 0; i < 8; i++) await aliceDoc(app);
      const selectsFor = async (limit: number) => {
        queries.length = 0;
        const page = await app.api.listDocs({ query: { limit, expand: ["attachment"] }, headers: as.bob });
        expect(page.items).toHaveLength(limit);
        expect(page.items.every((d) => d.attachment?.originalName === SECRET_NAME)).toBe(true);
        return queries.filter((q) => /^\s*select/i.test(q)).length;
      };
      expect(await selectsFor(8)).toBe(await selectsFor(2));
    } finally {
      await app.close();
    }
  });
});
