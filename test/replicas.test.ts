// Read replicas (issue 37 §1), on a real PostgreSQL streaming replica and a real MariaDB GTID
// replica (scripts/services.sh starts both). To see where a read went, the test stops the replica
// from replaying (PostgreSQL's pg_wal_replay_pause(), MariaDB's STOP SLAVE SQL_THREAD): a write
// then exists on the primary only, so a read that does not find it was answered by the replica.

import { connect, createServer, type Socket } from "node:net";
import { createResource, crudkit, type DatabaseOptions, databaseFromUrl, withId } from "crudkit-api";
import { createClient } from "crudkit-api/client";
import { type Kysely, sql } from "kysely";
import { afterAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { INTERNALS } from "../src/app/internals.ts";
import type { ReplicaSet } from "../src/db/replica-set.ts";
import { DIALECTS } from "./dialects.ts";
import { call, freePort, tempUploadDirs, userFromHeader } from "./helpers.ts";

const note = createResource({
  name: "note",
  schema: withId({ text: z.string().max(100) }),
  access: { list: true, read: true, create: true, update: true, delete: true },
});

const ENGINES = [
  { name: "postgres", replica: process.env.CRUDKIT_TEST_POSTGRES_REPLICA_URL },
  { name: "mysql", replica: process.env.CRUDKIT_TEST_MYSQL_REPLICA_URL },
] as const;

/** `url` naming database `name` instead. */
const onDatabase = (url: string, name: string) => {
  const parsed = new URL(url);
  parsed.pathname = `/${name}`;
  return parsed.toString();
};

const closing: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const close of closing.splice(0).reverse()) await close().catch(() => {});
});

const replicasOf = (app: object) =>
  (app as { [INTERNALS]: { database: { replicas?: ReplicaSet } } })[INTERNALS].database.replicas!;

/** Resolves once every replica serves reads (a poll found it caught up). */
async function serving(app: object): Promise<void> {
  const replicas = replicasOf(app);
  for (let i = 0; i < 100 && !replicas.states().every((r) => r.status === "ok"); i++) await replicas.polled();
  expect(replicas.states().map((r) => r.status)).toEqual(replicas.states().map(() => "ok"));
}

/** Resolves once the replica holds `count` notes. */
async function replicated(replica: Kysely<any>, count: number): Promise<void> {
  await until(async () => {
    const rows = await replica
      .selectFrom("note")
      .select("id")
      .execute()
      .catch(() => []);
    return rows.length === count;
  });
}

async function until(test: () => Promise<boolean>, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await test())) {
    if (Date.now() > end) throw new Error("timed out");
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

for (const engine of ENGINES) {
  const dialect = DIALECTS.find((d) => d.name === engine.name && !d.label)!;
  const missing =
    dialect.missing ?? (engine.replica ? undefined : `no ${engine.name} replica (scripts/services.sh)`);
  if (missing && !process.env.CI) continue;

  describe(`read replicas on ${engine.name}`, () => {
    /** A fresh database on the primary, and the same database's name on the replica. */
    const fresh = async () => {
      const primary = await dialect.fresh();
      const name = new URL(primary.url).pathname.slice(1);
      return { primary, replicaUrl: onDatabase(engine.replica!, name) };
    };
    const direct = async (url: string): Promise<Kysely<any>> => {
      const { Kysely, MysqlDialect, PostgresDialect } = await import("kysely");
      const db =
        engine.name === "postgres"
          ? new Kysely<any>({
              dialect: new PostgresDialect({
                pool: new (await import("pg")).default.Pool({ connectionString: url, max: 2 }),
              }),
            })
          : new Kysely<any>({
              dialect: new MysqlDialect({
                pool: (await import("mysql2")).createPool({ uri: url, connectionLimit: 2 }),
              }),
            });
      closing.push(() => db.destroy());
      return db;
    };
    /** Stops or restarts the replica's replay (its connection is a superuser's). */
    const replay = async (replica: Kysely<any>, on: boolean) => {
      if (engine.name === "mysql") {
        await sql.raw(on ? "START SLAVE SQL_THREAD" : "STOP SLAVE SQL_THREAD").execute(replica);
        return;
      }
      await sql.raw(on ? "select pg_wal_replay_resume()" : "select pg_wal_replay_pause()").execute(replica);
      // A pause is a request: replay stops at its next record.
      if (!on)
        await until(
          async () =>
            (await sql<{ state: string }>`select pg_get_wal_replay_pause_state() as state`.execute(replica))
              .rows[0]?.state === "paused",
        );
    };
    /**
     * What the replica itself counts (PostgreSQL: its database's committed transactions, flushed
     * within about a second; MariaDB: the SELECTs it ran) grows by at least the 50 reads `reads` makes.
     */
    const replicaCount = async (replica: Kysely<any>) =>
      engine.name === "postgres"
        ? Number(
            (
              await sql<{
                n: string;
              }>`select xact_commit::text as n from pg_stat_database where datname = current_database()`.execute(
                replica,
              )
            ).rows[0]!.n,
          )
        : Number(
            (await sql<{ Value: string }>`show global status like 'Com_select'`.execute(replica)).rows[0]!
              .Value,
          );
    const expectServedByReplica = async (replica: Kysely<any>, reads: () => Promise<void>) => {
      const before = await replicaCount(replica);
      await reads();
      await until(async () => (await replicaCount(replica)) >= before + 50);
    };
    /** Once `app` serves, with one note the replica holds: the replica's own connection. */
    const warmed = async (
      app: Parameters<typeof call>[0] & { ready: Promise<void>; close(): Promise<void> },
      replicaUrl: string,
    ) => {
      closing.push(() => app.close());
      await app.ready;
      expect(
        (await call(app, "POST", "/api/note", { body: { text: "warm" }, headers: { "x-user": "a" } })).status,
      ).toBe(201);
      const replicaDb = await direct(replicaUrl);
      await replicated(replicaDb, 1);
      return replicaDb;
    };
    const appOn = (database: DatabaseOptions, more: { log?: (m: string) => void } = {}) => {
      const app = crudkit({
        database,
        autoMigrate: true,
        resources: [note],
        identify: userFromHeader,
        log: more.log ?? (() => {}),
      });
      closing.push(() => app.close());
      return app;
    };

    const texts = (res: { body: any }) => res.body.items.map((n: { text: string }) => n.text).sort();

    it("reads go to a replica; a writer reads her writes, on this instance and on another with the position; past maxLag reads go to the primary and health says degraded", async () => {
      const { primary, replicaUrl } = await fresh();
      const database = { ...primary, replicas: [replicaUrl], maxLag: 2 } as DatabaseOptions;
      const app = appOn(database);
      const other = appOn(database);
      await app.ready;
      await other.ready;
      const replicaDb = await direct(replicaUrl);
      // The replica has the table before the test stops its replay.
      expect(
        (await call(app, "POST", "/api/note", { body: { text: "warm" }, headers: { "x-user": "carol" } }))
          .status,
      ).toBe(201);
      await replicated(replicaDb, 1);
      await serving(app);
      await serving(other);
      // Reads land on the replica, by its own statistics.
      await expectServedByReplica(replicaDb, async () => {
        for (let i = 0; i < 50; i++)
          expect((await call(app, "GET", "/api/notes", { headers: { "x-user": "bob" } })).status).toBe(200);
      });
      try {
        await replay(replicaDb, false);
        await replicasOf(app).polled();
        const written = await call(app, "POST", "/api/note", {
          body: { text: "alice's" },
          headers: { "x-user": "alice" },
        });
        expect(written.status).toBe(201);
        const position = written.headers.get("crudkit-position")!;
        expect(position).toMatch(
          engine.name === "postgres" ? /^[0-9A-F]+\/[0-9A-F]+$/ : /^\d+-\d+-\d+(,\d+-\d+-\d+)*$/,
        );

        // bob reads from the replica, which has not replayed alice's write.
        expect(texts(await call(app, "GET", "/api/notes", { headers: { "x-user": "bob" } }))).toEqual([
          "warm",
        ]);
        expect(
          (await call(app, "GET", `/api/note/${written.body.id}`, { headers: { "x-user": "bob" } })).status,
        ).toBe(404);
        // alice sees hers: here her user id is remembered, on the other instance the position says it.
        expect(texts(await call(app, "GET", "/api/notes", { headers: { "x-user": "alice" } }))).toEqual([
          "alice's",
          "warm",
        ]);
        expect(
          (await call(app, "GET", `/api/note/${written.body.id}`, { headers: { "x-user": "alice" } })).status,
        ).toBe(200);
        expect(texts(await call(other, "GET", "/api/notes", { headers: { "x-user": "alice" } }))).toEqual([
          "warm",
        ]);
        expect(
          texts(
            await call(other, "GET", "/api/notes", {
              headers: { "x-user": "alice", "crudkit-position": position },
            }),
          ),
        ).toEqual(["alice's", "warm"]);
        // Server code reads what its instance wrote; an anonymous caller with the position too.
        expect((await app.api.listNotes()).items).toHaveLength(2);
        expect(
          texts(await call(other, "GET", "/api/notes", { headers: { "crudkit-position": position } })),
        ).toHaveLength(2);
        // A write reads the primary: dave, who has written nothing, updates alice's note.
        const patched = await call(other, "PATCH", `/api/note/${written.body.id}`, {
          headers: { "x-user": "dave" },
          body: { text: "dave's" },
        });
        expect(patched.status).toBe(200);
        expect(patched.headers.get("crudkit-position")).toBeTruthy();

        // Past maxLag the replica is skipped: bob reads from the primary, health is degraded.
        await until(async () => replicasOf(app).states()[0]!.status === "lagging");
        expect(texts(await call(app, "GET", "/api/notes", { headers: { "x-user": "bob" } }))).toEqual([
          "dave's",
          "warm",
        ]);
        const health = await call(app, "GET", "/api/health");
        expect(health.status).toBe(200);
        expect(health.body).toMatchObject({
          status: "degraded",
          checks: { database: "ok", replicas: "degraded" },
        });
      } finally {
        await replay(replicaDb, true);
      }
      await serving(app);
      expect((await call(app, "GET", "/api/health")).body).toMatchObject({
        status: "ok",
        checks: { replicas: "ok" },
      });
      expect(texts(await call(app, "GET", "/api/notes", { headers: { "x-user": "bob" } }))).toEqual([
        "dave's",
        "warm",
      ]);
    }, 30_000);

    it("the typed client sends its last write's position back: its reads on another instance see its writes", async () => {
      const { primary, replicaUrl } = await fresh();
      const database = { ...primary, replicas: [replicaUrl], maxLag: 5 } as DatabaseOptions;
      const { serve } = await import("crudkit-api/node");
      const writer = appOn(database);
      const reader = appOn(database);
      const servers = [
        await serve(writer, { port: await freePort() }),
        await serve(reader, { port: await freePort() }),
      ];
      closing.push(...servers.map((s) => () => s.close()));
      await writer.api.createNote({ body: { text: "warm" }, overrideAccess: true });
      const replicaDb = await direct(replicaUrl);
      await replicated(replicaDb, 1);
      await serving(writer);
      await serving(reader);
      // Each request goes to the next instance, as a load balancer would send them.
      let turn = 0;
      const client = createClient<typeof writer>({
        baseURL: "http://127.0.0.1/api",
        headers: { "x-user": "erin" },
        fetch: (url, init) =>
          fetch(String(url).replace("http://127.0.0.1/", `${servers[turn++ % 2]!.url}/`), init),
      });
      try {
        await replay(replicaDb, false);
        await replicasOf(reader).polled();
        const created = await client.note.create({ text: "erin's" });
        expect(created.error).toBeNull();
        const listed = await client.note.list();
        expect(listed.data!.items.map((n) => n.text).sort()).toEqual(["erin's", "warm"]);
        // Another client, without the position, reads the replica on that instance.
        const stranger = createClient<typeof writer>({
          baseURL: `${servers[1]!.url}/api`,
          headers: { "x-user": "erin" },
        });
        expect((await stranger.note.list()).data!.items).toHaveLength(1);
      } finally {
        await replay(replicaDb, true);
      }
    }, 30_000);

    it("uploads' reads (a file's record, the list of files) go to the replica too, and the uploader reads her upload", async () => {
      const { primary, replicaUrl } = await fresh();
      const { upload } = await import("crudkit-api/plugins");
      const ALL = { upload: true, read: true, download: true, delete: true, list: true };
      const app = crudkit({
        database: { ...primary, replicas: [replicaUrl], maxLag: 5 } as DatabaseOptions,
        autoMigrate: true,
        resources: [note],
        identify: userFromHeader,
        plugins: [upload({ ...tempUploadDirs(), access: ALL })],
        log: () => {},
      });
      const replicaDb = await warmed(app, replicaUrl);
      await serving(app);
      try {
        await replay(replicaDb, false);
        const uploaded = await call(app, "POST", "/api/upload/file", {
          headers: { "x-user": "alice" },
          body: { filename: "a.txt", mimeType: "text/plain", file: Buffer.from("hello").toString("base64") },
        });
        expect(uploaded.status).toBe(201);
        const id = uploaded.body.id as string;
        const as = (user: string) => ({ headers: { "x-user": user } });
        expect((await call(app, "GET", "/api/upload/files", as("bob"))).body.items).toHaveLength(0);
        expect((await call(app, "GET", `/api/upload/file/${id}`, as("bob"))).status).toBe(404);
        expect((await call(app, "GET", "/api/upload/files", as("alice"))).body.items).toHaveLength(1);
        expect((await call(app, "GET", `/api/upload/file/${id}`, as("alice"))).status).toBe(200);
        expect((await call(app, "GET", `/api/upload/download/${id}`, as("alice"))).text).toBe("hello");
      } finally {
        await replay(replicaDb, true);
      }
      await serving(app);
      await until(
        async () =>
          (await call(app, "GET", "/api/upload/files", { headers: { "x-user": "bob" } })).body.items
            .length === 1,
      );
    });

    it("a replica that dies mid-traffic: no read fails, its reads go to the primary, and it serves again once back", async () => {
      const { primary, replicaUrl } = await fresh();
      // The app reaches the replica through a TCP relay the test can cut, as a crash would.
      const target = new URL(replicaUrl);
      const sockets = new Set<Socket>();
      const relay = createServer((client) => {
        const server = connect(Number(target.port), target.hostname);
        for (const socket of [client, server]) {
          sockets.add(socket);
          socket.on("error", () => {});
          socket.on("close", () => sockets.delete(socket));
        }
        client.pipe(server).pipe(client);
      });
      const port = await freePort();
      const listen = () => new Promise<void>((resolve) => relay.listen(port, "127.0.0.1", resolve));
      await listen();
      const relayed = Object.assign(new URL(replicaUrl), { port: String(port) }).toString();
      const logged: string[] = [];
      const app = appOn({ ...primary, replicas: [relayed], maxLag: 5 } as DatabaseOptions, {
        log: (m) => logged.push(m),
      });
      await app.ready;
      expect(
        (await call(app, "POST", "/api/note", { body: { text: "x" }, headers: { "x-user": "a" } })).status,
      ).toBe(201);
      await replicated(await direct(replicaUrl), 1);
      await serving(app);
      let reading = true;
      const statuses: number[] = [];
      const readers = Array.from({ length: 4 }, async () => {
        while (reading)
          statuses.push((await call(app, "GET", "/api/notes", { headers: { "x-user": "b" } })).status);
      });
      await new Promise((resolve) => setTimeout(resolve, 300));
      // The replica goes away: connections cut, nothing listening.
      relay.close();
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => setTimeout(resolve, 700));
      expect(replicasOf(app).states()[0]!.status).toBe("unavailable");
      expect((await call(app, "GET", "/api/health")).body.checks.replicas).toBe("degraded");
      await listen();
      await serving(app);
      reading = false;
      await Promise.all(readers);
      // Back: reads return to it.
      await expectServedByReplica(await direct(replicaUrl), async () => {
        for (let i = 0; i < 50; i++)
          expect((await call(app, "GET", "/api/notes", { headers: { "x-user": "b" } })).status).toBe(200);
      });
      relay.close();
      for (const socket of sockets) socket.destroy();
      expect(statuses.length).toBeGreaterThan(20);
      expect(statuses.filter((status) => status !== 200)).toEqual([]);
      expect(logged.some((m) => m.includes("is skipped"))).toBe(true);
      expect(logged.some((m) => m.includes("serves reads again"))).toBe(true);
    }, 30_000);

    it("a replica that refuses connections, or whose reads fail, is skipped: every read answers from the primary and health says degraded", async () => {
      const { primary, replicaUrl } = await fresh();
      const logged: string[] = [];
      const closed = onDatabase(
        engine.replica!.replace(/:\d+\//, `:${await freePort()}/`),
        new URL(replicaUrl).pathname.slice(1),
      );
      const down = appOn({ ...primary, replicas: [closed], maxLag: 1 } as DatabaseOptions, {
        log: (m) => logged.push(m),
      });
      await down.ready;
      for (let i = 0; i < 10; i++) {
        const created = await call(down, "POST", "/api/note", {
          body: { text: `n${i}` },
          headers: { "x-user": "a" },
        });
        expect(created.status).toBe(201);
        expect(
          (await call(down, "GET", `/api/note/${created.body.id}`, { headers: { "x-user": "b" } })).status,
        ).toBe(200);
      }
      expect(
        (await call(down, "GET", "/api/notes?limit=20", { headers: { "x-user": "b" } })).body.items,
      ).toHaveLength(10);
      await until(async () => (await call(down, "GET", "/api/health")).body.checks?.replicas === "degraded");
      expect((await call(down, "GET", "/api/health")).status).toBe(200);
      expect(logged.some((m) => m.includes("is skipped") && !m.includes("@"))).toBe(true);

      // A replica that is caught up but answers reads with an error (here: the server's own
      // database, which has no table `note`): each read runs again on the primary.
      const wrong = appOn({
        ...primary,
        replicas: [onDatabase(engine.replica!, engine.name === "postgres" ? "postgres" : "mysql")],
        maxLag: 5,
      } as DatabaseOptions);
      await wrong.ready;
      await serving(wrong);
      for (let i = 0; i < 5; i++)
        expect(
          (await call(wrong, "GET", "/api/notes?limit=20", { headers: { "x-user": "b" } })).body.items,
        ).toHaveLength(10);
      expect((await wrong.api.listNotes({ query: { limit: 20 } })).items).toHaveLength(10);
    }, 30_000);

    it("a position header that is not one (or holds more than 16) sends the read to the primary; several valid ones are each waited for", async () => {
      const { primary, replicaUrl } = await fresh();
      const app = appOn({ ...primary, replicas: [replicaUrl] } as DatabaseOptions);
      await app.ready;
      const first = await call(app, "POST", "/api/note", { body: { text: "x" }, headers: { "x-user": "a" } });
      const replicaDb = await direct(replicaUrl);
      await replicated(replicaDb, 1);
      await serving(app);
      try {
        await replay(replicaDb, false);
        const second = await call(app, "POST", "/api/note", {
          body: { text: "y" },
          headers: { "x-user": "a" },
        });
        const positions = [first.headers.get("crudkit-position")!, second.headers.get("crudkit-position")!];
        // Without a header bob reads the replica, which has only the first note.
        expect(
          (await call(app, "GET", "/api/notes", { headers: { "x-user": "b" } })).body.items,
        ).toHaveLength(1);
        for (const position of [
          "",
          " ",
          "zz",
          "0/",
          "FFFFFFFFF/0",
          "1-2",
          "0-1-99999999999999999999999",
          "x".repeat(5000),
          "' or 1=1 --",
          Array.from({ length: 100 }, (_, i) => `${i}-1-1`).join(","),
          "FFFFFFFF/FFFFFFFF",
          "4294967295-1-99999999999999999999",
          Array.from({ length: 17 }, () => positions[0]).join(" "),
          `${positions[0]}  ${positions[1]}`,
          `${positions[0]} zz`,
          `${positions[0]},${positions[1]}`.replace(/,/g, engine.name === "postgres" ? "," : ";"),
          // Several positions (a client's writes in flight at once): the later one is waited for.
          `${positions[0]} ${positions[1]}`,
          `${positions[1]} ${positions[0]}`,
        ]) {
          const res = await call(app, "GET", "/api/notes", {
            headers: { "x-user": "b", "crudkit-position": position },
          });
          expect(res.status, position.slice(0, 40)).toBe(200);
          expect(res.body.items, position.slice(0, 40)).toHaveLength(2);
        }
        // A write's answer covers the positions its request sent, whatever their order.
        const third = await call(app, "POST", "/api/note", {
          body: { text: "z" },
          headers: { "x-user": "c", "crudkit-position": `${positions[1]} ${positions[0]}` },
        });
        expect(third.headers.get("crudkit-position")).not.toContain(" ");
      } finally {
        await replay(replicaDb, true);
      }
    });

    it("reads a cache keeps, and reads a hook makes through ctx.api, come from the primary", async () => {
      const { primary, replicaUrl } = await fresh();
      const { cache } = await import("crudkit-api/plugins");
      const seen: (string | null)[] = [];
      const memo = createResource({
        name: "memo",
        schema: withId({ text: z.string().max(100) }),
        access: { list: true, read: true, create: true },
        hooks: {
          // After the commit, before the write's position is noted: the record is on the primary only.
          afterCreateCommit: async ({ api, record }) => {
            const found = await api.readMemo!({ params: { id: String(record.id) } }).catch(() => null);
            seen.push(found?.text ?? null);
          },
        },
      });
      const app = crudkit({
        database: { ...primary, replicas: [replicaUrl], maxLag: 5 } as DatabaseOptions,
        autoMigrate: true,
        resources: [note, memo],
        identify: userFromHeader,
        plugins: [cache({ ttl: 60 })],
        log: () => {},
      });
      const replicaDb = await warmed(app, replicaUrl);
      await serving(app);
      try {
        await replay(replicaDb, false);
        expect(
          (await call(app, "POST", "/api/note", { body: { text: "new" }, headers: { "x-user": "a" } }))
            .status,
        ).toBe(201);
        // bob's list would come from the replica, which lacks the new note; the cache keeps its
        // answers, so they are read from the primary.
        expect(texts(await call(app, "GET", "/api/notes", { headers: { "x-user": "b" } }))).toEqual([
          "new",
          "warm",
        ]);
        expect(
          (await call(app, "POST", "/api/memo", { body: { text: "m" }, headers: { "x-user": "a" } })).status,
        ).toBe(201);
        expect(seen).toEqual(["m"]);
      } finally {
        await replay(replicaDb, true);
      }
    });
  });
}

describe("read replicas: the typed client's positions", () => {
  it("keeps the positions of answers that crossed, and replaces those a request sent by its answer's", async () => {
    const sentHeaders: (string | null)[] = [];
    const answers = ["0/20", "0/10", "0/30", "0/40"];
    const gates: (() => void)[] = [];
    const client = createClient<any>({
      baseURL: "http://127.0.0.1/api",
      fetch: async (_url, init) => {
        sentHeaders.push(new Headers(init?.headers).get("crudkit-position"));
        const answer = answers[sentHeaders.length - 1]!;
        // The first two answers are held, then let go in reverse order.
        if (sentHeaders.length <= 2) await new Promise<void>((resolve) => gates.push(resolve));
        return new Response("{}", {
          status: 201,
          headers: { "crudkit-position": answer, "content-type": "application/json" },
        });
      },
    });
    const first = client.$fetch("/note", { method: "POST", body: {} });
    const second = client.$fetch("/note", { method: "POST", body: {} });
    while (gates.length < 2) await new Promise((resolve) => setTimeout(resolve, 1));
    gates[1]!();
    await second;
    gates[0]!();
    await first;
    // Both crossed: both are sent. The answer to a request that sent them replaces them.
    await client.$fetch("/notes");
    await client.$fetch("/notes");
    expect(sentHeaders).toEqual([null, null, "0/10 0/20", "0/30"]);
  });
});

describe("read replicas: configuration", () => {
  it("refuses what cannot work, saying what to give", () => {
    const bad: [unknown, RegExp][] = [
      [{ provider: "sqlite", url: "file::memory:", replicas: ["postgres://h/db"] }, /SQLite/],
      [
        { provider: "postgres", url: "postgres://h/db", replicas: "postgres://r/db" },
        /list of at most 16 URLs/,
      ],
      [
        { provider: "postgres", url: "postgres://h/db", replicas: ["mysql://r/db"] },
        /replicas\[0\] must be a postgres URL/,
      ],
      [
        { provider: "mysql", url: "mysql://h/db", replicas: ["postgres://r/db"] },
        /replicas\[0\] must be a mysql URL/,
      ],
      [{ provider: "postgres", url: "postgres://h/db", replicas: [42] }, /replicas\[0\]/],
      [{ provider: "postgres", url: "postgres://h/db", replicas: [""] }, /replicas\[0\]/],
      [{ provider: "postgres", url: "postgres://h/db", replicas: ["not a url"] }, /replicas\[0\]/],
      [
        { provider: "postgres", url: "postgres://h/db", replicas: Array(17).fill("postgres://r/db") },
        /at most 16/,
      ],
      [{ provider: "postgres", url: "postgres://h/db", replicas: ["postgres://r/db"], maxLag: 0 }, /maxLag/],
      [{ provider: "postgres", url: "postgres://h/db", replicas: ["postgres://r/db"], maxLag: -1 }, /maxLag/],
      [
        { provider: "postgres", url: "postgres://h/db", replicas: ["postgres://r/db"], maxLag: Number.NaN },
        /maxLag/,
      ],
      [
        { provider: "postgres", url: "postgres://h/db", replicas: ["postgres://r/db"], maxLag: "5" },
        /maxLag/,
      ],
      [
        { provider: "postgres", url: "postgres://h/db", replicas: ["postgres://r/db"], maxLag: 1e9 },
        /maxLag/,
      ],
    ];
    for (const [database, message] of bad)
      expect(
        () => crudkit({ database: database as DatabaseOptions, resources: [note] }),
        JSON.stringify(database),
      ).toThrow(message);
    expect(() => databaseFromUrl("file:./x.db", { replicas: ["postgres://r/db"] })).toThrow(/SQLite/);
    expect(databaseFromUrl("postgres://u:p@h/db", { replicas: ["postgres://u:p@r/db"] })).toEqual({
      provider: "postgres",
      url: "postgres://u:p@h/db",
      replicas: ["postgres://u:p@r/db"],
    });
    expect(databaseFromUrl("postgres://u:p@h/db", { replicas: [] })).toEqual({
      provider: "postgres",
      url: "postgres://u:p@h/db",
    });
  });
});
