// A batch's consecutive creates of one resource go to PostgreSQL and MariaDB as one multi-row
// INSERT (src/db/coalesced-inserts.ts), and nothing else may tell: every record stored as
// answered, every later statement of the batch (a hook's read, a reference check, another
// resource's write) seeing the rows before it, and a row the database refuses answered as the
// request it came from (its index, its own error, byte for byte as alone), with nothing stored,
// even when a hook swallowed the error. On SQLite (no round trips to save) the same batches run
// one statement per create, with the same answers. Statements are counted from the spans an
// OpenTelemetry SDK records.

import { InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { NodeTracerProvider } from "@opentelemetry/sdk-trace-node";
import { createResource, crudkit, type DatabaseOptions, references, withId } from "crudkit-api";
import { createClient } from "crudkit-api/client";
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { appPerDialect, forEachDialect } from "./dialects.ts";
import { call, expectNoLeak } from "./helpers.ts";

const exporter = new InMemorySpanExporter();
const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
provider.register();
afterAll(() => provider.shutdown());
beforeEach(() => exporter.reset());

const OPEN = { create: true, read: true, list: true, update: true, delete: true } as const;

const shelf = createResource({
  name: "shelf",
  schema: withId({ label: z.string().max(50) }),
  access: OPEN,
});
const book = createResource({
  name: "book",
  schema: withId({
    title: z.string().max(100),
    isbn: z.string().max(20),
    // Not read-checked: an unknown shelf is refused by the foreign key, when the row is sent.
    shelfId: references(shelf, { requireRead: false }).optional(),
  }),
  unique: ["isbn"],
  access: OPEN,
});
/** Each note records how many books existed when it was made: its hook reads the table. */
const note = createResource({
  name: "note",
  schema: withId({ bookId: references(book), text: z.string().max(100), booksBefore: z.number().default(0) }),
  access: OPEN,
  hooks: {
    beforeCreate: async ({ data, db }) => {
      const { n } = await db
        .selectFrom("book")
        .select((eb) => eb.fn.countAll<number>().as("n"))
        .executeTakeFirstOrThrow();
      return { ...data, booksBefore: Number(n) };
    },
  },
});
/** Its hook reads books and swallows any error: a refused row must still undo the batch. */
const stamp = createResource({
  name: "stamp",
  schema: withId({ text: z.string().max(100) }),
  access: OPEN,
  hooks: {
    beforeCreate: async ({ db }) => {
      await db
        .selectFrom("book")
        .select("id")
        .execute()
        .catch(() => undefined);
    },
  },
});

/**
 * Its hook writes through ctx.api a shelf that may exist already, catching the 409: as alone, the
 * caught failure must not fail the batch. And it lists the books before it (a count and a page,
 * run together), which must both see every row before it.
 */
const tally = createResource({
  name: "tally",
  schema: withId({ shelf: z.string().max(50), seen: z.number().default(0), counted: z.number().default(0) }),
  access: OPEN,
  hooks: {
    beforeCreate: async ({ data, api, db }) => {
      const [page, count] = await Promise.all([
        (api as any).listBooks({ query: { limit: 100 } }),
        db
          .selectFrom("book")
          .select((eb) => eb.fn.countAll<number>().as("n"))
          .executeTakeFirstOrThrow(),
      ]);
      return { ...data, seen: page.items.length, counted: Number(count.n) };
    },
    afterCreate: async ({ record, api }) => {
      await (api as any)
        .createShelf({ body: { id: (record as { shelf: string }).shelf, label: "tally" } })
        .catch((error: { status?: number }) => {
          if (error.status !== 409) throw error;
        });
    },
  },
});

const makeApp = (database: DatabaseOptions) =>
  crudkit({
    database,
    autoMigrate: true,
    resources: [shelf, book, note, stamp, tally],
    batch: { maxRequests: 250 },
    log: () => {},
  });

type Request = { method: string; path: string; body?: unknown };
const creates = (from: number, to: number, extra: (i: number) => object = () => ({})): Request[] =>
  Array.from({ length: to - from }, (_, k) => ({
    method: "POST",
    path: "/book",
    body: { title: `Book ${from + k}`, isbn: `isbn-${from + k}`, ...extra(from + k) },
  }));

/** The INSERT statements the database received for `table`, from the spans. */
const insertsInto = (table: string) =>
  exporter
    .getFinishedSpans()
    .map((span) => String(span.attributes["db.statement"] ?? ""))
    .filter((text) => new RegExp(`^insert into [\`"]${table}[\`"]`, "i").test(text));

describe("coalesced inserts in a batch", () => {
  forEachDialect((dialect) => {
    const app = appPerDialect(dialect, makeApp);
    const coalesces = dialect.name !== "sqlite";
    const batch = (requests: Request[]) => call(app, "POST", "/api/batch", { body: { requests } });
    const books = async () => (await app.db.selectFrom("book").selectAll().orderBy("isbn").execute()).length;
    let run = 0;
    beforeEach(async () => {
      run++;
      await app.db.deleteFrom("note").execute();
      await app.db.deleteFrom("book").execute();
    });

    it("50 creates are one INSERT, and each record is stored as it was answered", async () => {
      const res = await batch(creates(0, 50));
      expect(res.status).toBe(200);
      const answered = res.body.results.map((r: { status: number; body: object }) => {
        expect(r.status).toBe(201);
        return r.body;
      });
      const stored = await Promise.all(
        answered.map(async (b: { id: string }) => (await call(app, "GET", `/api/book/${b.id}`)).body),
      );
      expect(stored).toEqual(answered);
      expect(insertsInto("book")).toHaveLength(coalesces ? 1 : 50);
    });

    it("past the statement's bound (1,000 parameters), the rows go in a few statements", async () => {
      const res = await batch(creates(0, 250));
      expect(res.status).toBe(200);
      expect(await books()).toBe(250);
      // A book binds 6 parameters (id, title, isbn, shelfId, createdAt, updatedAt): 166 a statement.
      expect(insertsInto("book")).toHaveLength(coalesces ? 2 : 250);
    });

    it("a later step sees every earlier row: a hook's read, a reference check, another resource", async () => {
      const [first, second] = [creates(0, 3), creates(3, 6, () => ({ shelfId: `s-${run}` }))];
      (second[2]!.body as { id?: string }).id = `b-${run}`;
      const res = await batch([
        ...first,
        { method: "POST", path: "/shelf", body: { id: `s-${run}`, label: "A" } },
        ...second,
        { method: "POST", path: "/note", body: { bookId: `b-${run}`, text: "n" } },
      ]);
      expect(res.status).toBe(200);
      // The note's hook counted the six books before it; its reference check found the sixth.
      expect(res.body.results[7].body).toMatchObject({ bookId: `b-${run}`, booksBefore: 6 });
      expect(await books()).toBe(6);
      if (coalesces) expect(insertsInto("book")).toHaveLength(2);
    });

    it("a refused row answers as its own request: its index, its error byte for byte as alone, nothing stored", async () => {
      await call(app, "POST", "/api/book", { body: { title: "Taken", isbn: "isbn-taken" } });
      const alone = await call(app, "POST", "/api/book", { body: { title: "Again", isbn: "isbn-taken" } });
      expect(alone.status).toBe(409);
      const requests = creates(0, 20);
      requests[12] = { method: "POST", path: "/book", body: { title: "Again", isbn: "isbn-taken" } };
      const res = await batch(requests);
      expect(res.status).toBe(409);
      expect(res.body.details).toEqual({ index: 12, error: alone.body });
      expectNoLeak(res.text);
      expect(await books()).toBe(1);
    });

    it("a duplicate inside the run is blamed on the second of the two", async () => {
      const requests = creates(0, 10);
      requests[7] = { method: "POST", path: "/book", body: { title: "Twin", isbn: "isbn-3" } };
      const res = await batch(requests);
      expect(res.status).toBe(409);
      expect(res.body.details.index).toBe(7);
      expect(await books()).toBe(0);
    });

    it("an unknown reference the foreign key refuses is the same 400 as alone, at its index", async () => {
      const alone = await call(app, "POST", "/api/book", {
        body: { title: "Lost", isbn: "isbn-lost", shelfId: "no-such-shelf" },
      });
      expect(alone.status).toBe(400);
      const requests = creates(0, 8);
      requests[5] = {
        method: "POST",
        path: "/book",
        body: { title: "Lost", isbn: "isbn-lost", shelfId: "no-such-shelf" },
      };
      const res = await batch(requests);
      expect(res.status).toBe(400);
      expect(res.body.details).toEqual({ index: 5, error: alone.body });
      expect(await books()).toBe(0);
    });

    it("the first failure wins: a held row refused before a later request's own 400", async () => {
      await call(app, "POST", "/api/book", { body: { title: "Taken", isbn: "isbn-taken" } });
      const requests = creates(0, 6);
      requests[2] = { method: "POST", path: "/book", body: { title: "Again", isbn: "isbn-taken" } };
      requests[4] = { method: "POST", path: "/book", body: { title: 42 } };
      const res = await batch(requests);
      expect(res.status).toBe(409);
      expect(res.body.details.index).toBe(2);
      expect(await books()).toBe(1);
    });

    it("a hook that swallows the refusal cannot commit the batch", async () => {
      await call(app, "POST", "/api/book", { body: { title: "Taken", isbn: "isbn-taken" } });
      const stamps = (await app.db.selectFrom("stamp").selectAll().execute()).length;
      const res = await batch([
        ...creates(0, 3),
        { method: "POST", path: "/book", body: { title: "Again", isbn: "isbn-taken" } },
        { method: "POST", path: "/stamp", body: { text: "after" } },
      ]);
      expect(res.status).toBe(409);
      expect(res.body.details.index).toBe(3);
      expect(await books()).toBe(1);
      expect((await app.db.selectFrom("stamp").selectAll().execute()).length).toBe(stamps);
    });

    it("a hook's caught 409 on a nested write leaves the batch whole; a hook's list sees every row before it", async () => {
      const res = await batch([
        ...creates(0, 4),
        ...Array.from({ length: 3 }, () => ({ method: "POST", path: "/tally", body: { shelf: `t-${run}` } })),
        ...creates(4, 7),
        { method: "POST", path: "/tally", body: { shelf: `t-${run}` } },
      ]);
      expect(res.status, res.text).toBe(200);
      const tallies = res.body.results
        .filter((_: unknown, i: number) => i >= 4 && i < 7)
        .concat(res.body.results.slice(-1));
      expect(
        tallies.map((r: { body: { seen: number; counted: number } }) => [r.body.seen, r.body.counted]),
      ).toEqual([
        [4, 4],
        [4, 4],
        [4, 4],
        [7, 7],
      ]);
      expect(await books()).toBe(7);
      expect(
        (await app.db.selectFrom("shelf").selectAll().where("id", "=", `t-${run}`).execute()).length,
      ).toBe(1);
    });

    it("app.api.batch and client.$batch coalesce the same, and the app goes on after a refusal", async () => {
      const viaApi = await app.api.batch({
        body: { requests: creates(0, 10) as never },
      });
      expect(viaApi.results).toHaveLength(10);
      const client = createClient<typeof app>({
        baseURL: "http://localhost/api",
        fetch: (input, init) => app.handler(new Request(input, init)),
      });
      const viaClient = await client.$batch((b) =>
        Array.from({ length: 10 }, (_, i) =>
          b.book.create({ title: `Client ${i}`, isbn: `isbn-client-${i}` }),
        ),
      );
      expect(viaClient.error).toBeNull();
      expect(await books()).toBe(20);
      // Statements are traced within a request's span: the client's HTTP batch is one INSERT.
      if (coalesces) expect(insertsInto("book")).toHaveLength(1);
      // The connection that held a refused row serves the next request as new.
      const refused = await batch([...creates(100, 103), ...creates(100, 101)]);
      expect(refused.status).toBe(409);
      for (let i = 0; i < 12; i++) expect((await batch(creates(200 + i * 2, 202 + i * 2))).status).toBe(200);
      expect(await books()).toBe(44);
    });
  });
});
