// Issue 35 §2, the tamper-evident audit chain, on SQLite, PostgreSQL and MariaDB: verify() passes on a
// busy log written by 8 concurrent writers (a cascade included), and fails, naming the entry, after
// an UPDATE of any column, a swap and a DELETE made with the database's own client; `crudkit audit
// verify` exits 0 and 1 accordingly; GET /audit/head answers readers of the whole log only; an
// old audit table keeps its entries unchained; the chain still verifies after a prune.

import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { apiKey, createResource, crudkit, type DatabaseOptions, references, withId } from "crudkit-api";
import type { TableDefinition } from "crudkit-api/plugin-kit";
import { audit } from "crudkit-api/plugins";
import type { Kysely, SelectQueryBuilder } from "kysely";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { canonicalJson } from "../src/core/canonical-json.ts";
import { columnsOfRow, entryDigest, entryJson, GENESIS, linkHash } from "../src/plugins/audit/audit-chain.ts";
import { CLI_RUNNER, cliWorkDir } from "./cli-project.ts";
import { checkContract } from "./contract.ts";
import { type DialectName, forEachDialect, type TestDialect } from "./dialects.ts";
import { expectNoLeak, readResponse } from "./helpers.ts";

const signedIn = ({ user }: { user: unknown }) => user !== null;
const open = { create: signedIn, read: signedIn, update: signedIn, delete: signedIn, list: signedIn };
const project = createResource({
  name: "project",
  schema: withId({ name: z.string().max(100) }),
  access: open,
});
const task = createResource({
  name: "task",
  schema: withId({
    title: z.string().max(100),
    done: z.boolean().optional(),
    projectId: references(project, { onDelete: "cascade" }),
  }),
  access: open,
});

const AUDITOR = { "x-api-key": "auditor-key" };
const ALICE = { "x-api-key": "alice-key" };
const WRITER = { "x-api-key": "writer-key", "user-agent": "chain-test/1.0" };

function makeApp(database: DatabaseOptions, retentionDays?: number) {
  const auditPlugin = audit({
    retentionDays,
    // Auditors read the whole log; anyone else signed in, the entries of her own changes.
    access: {
      read: ({ user }) => (user?.roles?.includes("auditor") ? true : user ? { userId: user.id } : false),
    },
  });
  const app = crudkit({
    database,
    autoMigrate: true,
    resources: [project, task],
    plugins: [
      apiKey({
        keys: {
          "auditor-key": { id: "ada", roles: ["auditor"] },
          "alice-key": { id: "alice" },
          "writer-key": { id: "writer" },
        },
      }),
      auditPlugin,
    ],
  });
  return { app, auditPlugin };
}

type App = ReturnType<typeof makeApp>["app"];

/** A request as `serve()` makes it (with the client's address), checked against the OpenAPI document. */
async function send(
  app: App,
  method: string,
  path: string,
  options: { body?: unknown; headers?: Record<string, string> } = {},
) {
  const headers: Record<string, string> = { ...options.headers };
  if (options.body !== undefined) headers["content-type"] = "application/json";
  const request = new Request(`http://localhost${path}`, {
    method,
    headers,
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
  });
  const response = await readResponse(await app.handler(request, { ip: "203.0.113.9" }));
  checkContract(app, method, path, response);
  return response;
}

/** The database's own client, bypassing crudkit: what someone with write access to it would use. */
interface RawClient {
  run(sql: string, ...params: unknown[]): Promise<Record<string, any>[]>;
  close(): Promise<void>;
}

async function rawClient(dialect: DialectName, url: string): Promise<RawClient> {
  if (dialect === "sqlite") {
    const { default: Database } = await import("better-sqlite3");
    const db = new Database(url.slice("file:".length));
    return {
      async run(sql, ...params) {
        const statement = db.prepare(sql);
        if (statement.reader) return statement.all(...params) as Record<string, unknown>[];
        statement.run(...params);
        return [];
      },
      async close() {
        db.close();
      },
    };
  }
  if (dialect === "postgres") {
    const { default: pg } = await import("pg");
    const client = new pg.Client(url);
    await client.connect();
    return {
      async run(sql, ...params) {
        let n = 0;
        return (
          await client.query(
            sql.replace(/\?/g, () => `$${++n}`),
            params,
          )
        ).rows;
      },
      close: () => client.end(),
    };
  }
  const mysql = await import("mysql2/promise");
  const connection = await mysql.createConnection(url);
  return {
    async run(sql, ...params) {
      const [rows] = await connection.query(sql, params);
      return Array.isArray(rows) ? (rows as Record<string, unknown>[]) : [];
    },
    close: () => connection.end(),
  };
}

/** `c` quoted for the dialect (`before` is a reserved word in MariaDB). */
const quoted = (dialect: DialectName, c: string) => (dialect === "mysql" ? `\`${c}\`` : `"${c}"`);

/** A value read by a raw client, as a parameter that writes it back unchanged. */
const asParameter = (value: unknown) =>
  value !== null && typeof value === "object" && !(value instanceof Date) ? JSON.stringify(value) : value;

const cliDir = () => cliWorkDir("audit");

function cliProject(database: DatabaseOptions & { url: string }, withAudit = true, dir = cliDir()): string {
  writeFileSync(
    join(dir, "app.config.ts"),
    `import { crudkit } from "crudkit-api";
import { audit } from "crudkit-api/plugins";

export default crudkit({ database: ${JSON.stringify(database)}, resources: [], plugins: [${withAudit ? "audit()" : ""}] });
`,
  );
  return dir;
}

function cli(dir: string, ...args: string[]) {
  const result = spawnSync(process.execPath, [join(dir, CLI_RUNNER), ...args], {
    cwd: dir,
    encoding: "utf8",
    timeout: 60_000,
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** One writer's work: projects with tasks, created, updated and deleted, the last ones by cascade. */
async function writer(app: App, w: number, rounds: number) {
  const ok = async (method: string, path: string, body?: unknown) => {
    const response = await send(app, method, path, { body, headers: WRITER });
    expect(response.status, response.text).toBeLessThan(300);
    return response.body;
  };
  for (let round = 0; round < rounds; round++) {
    const made =
      round % 2 === 0
        ? await ok("POST", "/api/project", { name: `p${w}-${round}` })
        : await app.api.createProject({ body: { name: `p${w}-${round}` }, headers: WRITER });
    const tasks: string[] = [];
    for (let t = 0; t < 3; t++)
      tasks.push((await ok("POST", "/api/task", { title: `t${t}`, projectId: made.id })).id);
    await ok("PATCH", `/api/task/${tasks[0]}`, { done: true });
    await app.api.updateTask({ params: { id: tasks[1]! }, body: { title: "renamed" }, overrideAccess: true });
    await ok("DELETE", `/api/task/${tasks[2]}`);
    // The project's delete cascades to its two remaining tasks: three entries in one transaction.
    await ok("DELETE", `/api/project/${made.id}`);
  }
}

function suite(dialect: TestDialect) {
  let database: DatabaseOptions & { url: string };
  let app: App;
  let auditPlugin: ReturnType<typeof makeApp>["auditPlugin"];
  let raw: RawClient;
  const q = (c: string) => quoted(dialect.name, c);
  beforeAll(async () => {
    database = await dialect.fresh();
    ({ app, auditPlugin } = makeApp(database));
    await app.ready;
    raw = await rawClient(dialect.name, database.url);
  });
  afterAll(async () => {
    await raw?.close();
    await app?.close();
  });

  const rows = async () => {
    await auditPlugin.seal();
    return app.db.selectFrom("audit_logs").selectAll().orderBy("seq").execute();
  };

  it("verify passes on a busy log written by 8 concurrent writers, in commit order", async () => {
    await Promise.all(Array.from({ length: 8 }, (_, w) => writer(app, w, 3)));
    const all = await rows();
    // 8 writers × 3 rounds × (project create, 3 task creates, 2 updates, a delete, a project delete
    // and its 2 cascaded task deletes).
    expect(all).toHaveLength(8 * 3 * 10);
    expect(all.map((r) => Number(r.seq))).toEqual(all.map((_, i) => i + 1));
    // Each record's entries are chained in the order its changes committed.
    const byRecord = new Map<string, Record<string, unknown>[]>();
    for (const row of all)
      byRecord.set(String(row.record_id), [...(byRecord.get(String(row.record_id)) ?? []), row]);
    for (const entries of byRecord.values()) {
      expect(entries[0]!.operation).toBe("create");
      expect(entries.at(-1)!.operation).toBe("delete");
      expect(entries.slice(1, -1).every((e) => e.operation === "update")).toBe(true);
    }
    // A cascade: the children's deletes, then the parent's, in one transaction, one after another.
    const parentDeletes = all.filter((r) => r.resource === "project" && r.operation === "delete");
    for (const parent of parentDeletes) {
      const children = all.filter((r) => r.caused_by === parent.id);
      expect(children).toHaveLength(2);
      expect(children.map((c) => Number(c.seq))).toEqual([Number(parent.seq) - 2, Number(parent.seq) - 1]);
    }

    const report = await auditPlugin.verify();
    expect(report).toEqual({
      ok: true,
      entries: 240,
      unchained: 0,
      head: { seq: 240, hash: all.at(-1)!.hash },
    });
    // Read a few entries a page, the keyset walk gives the same answer.
    expect(await auditPlugin.verify({ pageSize: 7 })).toEqual(report);
    await expect(auditPlugin.verify({ pageSize: 0 })).rejects.toThrow(/pageSize/);
  });

  it("GET /audit/head answers the latest seq and hash to readers of the whole log only", async () => {
    const head = await send(app, "GET", "/api/audit/head", { headers: AUDITOR });
    expect(head.status, head.text).toBe(200);
    const report = await auditPlugin.verify();
    expect(report.ok).toBe(true);
    expect(head.body).toEqual(report.ok ? report.head : undefined);
    expect(head.body.hash).toMatch(/^[0-9a-f]{64}$/);

    // It moves on with each write.
    await send(app, "POST", "/api/project", { body: { name: "one more" }, headers: WRITER });
    const moved = await send(app, "GET", "/api/audit/head", { headers: AUDITOR });
    expect(moved.body.seq).toBe(head.body.seq + 1);
    expect(moved.body.hash).not.toBe(head.body.hash);

    // Alice reads the entries of her own changes: the head, a digest of every entry, is not hers.
    expect((await send(app, "GET", "/api/audit/logs", { headers: ALICE })).status).toBe(200);
    const alice = await send(app, "GET", "/api/audit/head", { headers: ALICE });
    expect(alice.status).toBe(403);
    expect(alice.body).toEqual({
      code: "FORBIDDEN",
      message: expect.stringContaining("the audit chain's head covers every entry"),
    });
    const anonymous = await send(app, "GET", "/api/audit/head");
    expect([anonymous.status, anonymous.body.code]).toEqual([403, "FORBIDDEN"]);
    const forged = await send(app, "GET", "/api/audit/head", { headers: { "x-api-key": "forged" } });
    expect([forged.status, forged.body.code]).toEqual([401, "UNAUTHORIZED"]);
    // The credentials are checked before the parameters: a stranger learns nothing of the route.
    const strangerProbe = await send(app, "GET", "/api/audit/head?seq=1", { headers: ALICE });
    expect(strangerProbe.status).toBe(403);

    const unknown = await send(app, "GET", "/api/audit/head?seq=1", { headers: AUDITOR });
    expect(unknown.status).toBe(400);
    expect(unknown.body).toEqual({
      code: "BAD_REQUEST",
      message: 'Unknown query parameter "seq": GET /audit/head takes none.',
      details: [{ path: "seq", message: "Not a parameter of this route." }],
    });
    for (const query of [
      "?__proto__=1",
      "?a%00b=1",
      `?${"x".repeat(300)}=1`,
      "?hash[gte]=0",
      "?%F0%9F%92%A5=1",
    ]) {
      const response = await send(app, "GET", `/api/audit/head${query}`, { headers: AUDITOR });
      expect(response.status, query).toBe(400);
      expect(["BAD_REQUEST", "VALIDATION_ERROR"]).toContain(response.body.code);
      expectNoLeak(response.text);
    }
    expect((await send(app, "POST", "/api/audit/head", { headers: AUDITOR, body: {} })).status).toBe(405);

    const document = (await send(app, "GET", "/api/openapi.json")).body;
    const path = Object.keys(document.paths).find((p) => p.endsWith("/audit/head"))!;
    expect(document.paths[path].get.responses["200"].content["application/json"].schema).toMatchObject({
      required: ["seq", "hash"],
    });
  });

  it("`crudkit audit verify` exits 0 on a good log, printing the entries and the head", async () => {
    const dir = cliProject(database);
    const result = cli(dir, "audit", "verify", "--config", "app.config.ts");
    expect(result.code, result.stderr).toBe(0);
    const report = await auditPlugin.verify();
    expect(result.stdout.trim()).toBe(
      `audit chain verified: ${report.entries} entries, head seq ${report.ok ? report.head.seq : -1}`,
    );
  });

  it("an UPDATE of any column of an entry is found, naming it; put back, the chain verifies", async () => {
    // An update made over HTTP: every column holds a value (those that do not get one here).
    const [target] = await raw.run(
      `select * from audit_logs where operation = 'update' and ip is not null order by seq limit 1`,
    );
    const seq = Number(target!.seq);
    const id = String(target!.id);
    const edits: Record<string, unknown> = {
      id: "tampered-id",
      seq: 999_999,
      created_at: dialect.name === "sqlite" ? "2001-01-01T00:00:00.000Z" : "2001-01-01 00:00:00",
      resource: "project",
      operation: "delete",
      record_id: "someone-else",
      user_id: "mallory",
      source: "server",
      ip: "198.51.100.1",
      user_agent: "curl/8",
      before: '{"title":"t0","done":false}',
      after: '{"title":"t0","done":false}',
      changes: '{"done":{"from":true,"to":false}}',
      caused_by: "another-entry",
      scope: "org-2",
      hash: "f".repeat(64),
    };
    expect(Object.keys(edits).sort()).toEqual(Object.keys(target!).sort());
    for (const [column, value] of Object.entries(edits)) {
      await raw.run(`update audit_logs set ${q(column)} = ? where id = ?`, value, id);
      const report = await auditPlugin.verify();
      expect(report.ok, column).toBe(false);
      if (report.ok) continue;
      if (column === "seq") {
        expect(report).toMatchObject({ problem: "missing", at: { seq, id: null }, entries: seq - 1 });
      } else {
        expect(report, column).toMatchObject({
          problem: "edited",
          at: { seq, id: column === "id" ? "tampered-id" : id },
          entries: seq - 1,
        });
        expect(report.message).toContain(`Entry seq ${seq}`);
      }
      const where = column === "id" ? "tampered-id" : id;
      await raw.run(
        `update audit_logs set ${q(column)} = ? where id = ?`,
        asParameter(target![column]),
        where,
      );
      expect((await auditPlugin.verify()).ok, `${column} put back`).toBe(true);
    }
  });

  it("a swap of two entries is found at the first of them", async () => {
    const a = 10;
    // An entry of another record a little further on.
    const [{ record_id: recordA }] = (await raw.run("select record_id from audit_logs where seq = ?", a)) as [
      Record<string, unknown>,
    ];
    const further = await raw.run(
      "select seq, record_id from audit_logs where seq > ? order by seq limit 20",
      a + 1,
    );
    const b = Number(further.find((r) => r.record_id !== recordA)!.seq);
    const swapSeqs = async () => {
      await raw.run("update audit_logs set seq = -1 where seq = ?", a);
      await raw.run("update audit_logs set seq = ? where seq = ?", a, b);
      await raw.run("update audit_logs set seq = ? where seq = -1", b);
    };
    // Their places exchanged (each keeps its content and hash): reordered.
    await swapSeqs();
    const reordered = await auditPlugin.verify();
    expect(reordered).toMatchObject({ ok: false, problem: "out of order", at: { seq: a }, entries: a - 1 });
    await swapSeqs();
    expect((await auditPlugin.verify()).ok).toBe(true);

    // One entry given another's seq (the index on seq is not unique): two entries at one place.
    const [moved] = await raw.run("select id from audit_logs where seq = ?", a + 6);
    await raw.run("update audit_logs set seq = ? where id = ?", a + 2, moved!.id);
    expect(await auditPlugin.verify()).toMatchObject({
      ok: false,
      problem: "out of order",
      at: { seq: a + 2 },
    });
    await raw.run("update audit_logs set seq = ? where id = ?", a + 6, moved!.id);
    expect((await auditPlugin.verify()).ok).toBe(true);

    // Their contents exchanged in place: the first of them no longer matches its hash.
    const [first] = await raw.run("select id, record_id from audit_logs where seq = ?", a);
    const [second] = await raw.run("select id, record_id from audit_logs where seq = ?", b);
    expect(first!.record_id).not.toBe(second!.record_id);
    await raw.run("update audit_logs set record_id = ? where id = ?", second!.record_id, first!.id);
    await raw.run("update audit_logs set record_id = ? where id = ?", first!.record_id, second!.id);
    expect(await auditPlugin.verify()).toMatchObject({
      ok: false,
      problem: "edited",
      at: { seq: a, id: first!.id },
    });
    await raw.run("update audit_logs set record_id = ? where id = ?", first!.record_id, first!.id);
    await raw.run("update audit_logs set record_id = ? where id = ?", second!.record_id, second!.id);
    expect((await auditPlugin.verify()).ok).toBe(true);
  });

  it("a chain rewritten from an edit on, head included, fails only against an anchor kept elsewhere", async () => {
    const anchor = (await send(app, "GET", "/api/audit/head", { headers: AUDITOR })).body as {
      seq: number;
      hash: string;
    };
    expect(await auditPlugin.verify({ anchor })).toMatchObject({ ok: true, head: anchor });
    expect(await auditPlugin.verify({ anchor: { seq: 0, hash: GENESIS } })).toMatchObject({ ok: true });

    // Someone who knows the (public) algorithm edits an entry and recomputes every link after it.
    const from = anchor.seq - 5;
    const original = await app.db
      .selectFrom("audit_logs")
      .selectAll()
      .where("seq", ">=", from)
      .orderBy("seq")
      .execute();
    const [previous] = await raw.run("select hash from audit_logs where seq = ?", from - 1);
    await raw.run("update audit_logs set user_id = 'mallory' where seq = ?", from);
    let hash = String(previous!.hash);
    for (const row of await app.db
      .selectFrom("audit_logs")
      .selectAll()
      .where("seq", ">=", from)
      .orderBy("seq")
      .execute()) {
      hash = linkHash(hash, Number(row.seq), entryDigest(columnsOfRow(row, () => {})));
      await raw.run("update audit_logs set hash = ? where id = ?", hash, row.id);
    }
    await raw.run("update audit_chain set hash = ?", hash);
    expect((await auditPlugin.verify()).ok).toBe(true);
    expect(await auditPlugin.verify({ anchor })).toMatchObject({
      ok: false,
      problem: "anchor mismatch",
      at: { seq: anchor.seq, id: original.at(-1)!.id },
    });
    const dir = cliProject(database);
    const result = cli(
      dir,
      "audit",
      "verify",
      "--config",
      "app.config.ts",
      "--anchor",
      `${anchor.seq}:${anchor.hash}`,
    );
    expect(result.code).toBe(1);
    expect(result.stdout).toContain(`anchor mismatch: Entry seq ${anchor.seq}`);
    const bad = cli(dir, "audit", "verify", "--config", "app.config.ts", "--anchor", "12:not-a-hash");
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("crudkit: --anchor takes SEQ:HASH as GET /audit/head answers them");
    // An anchor past the end: the head was moved back.
    expect(await auditPlugin.verify({ anchor: { seq: anchor.seq + 10, hash: anchor.hash } })).toMatchObject({
      ok: false,
      problem: "anchor mismatch",
      at: { seq: anchor.seq + 10, id: null },
    });
    await expect(auditPlugin.verify({ anchor: { seq: -1, hash: "x" } })).rejects.toThrow(/anchor/);

    for (const row of original) {
      await raw.run("update audit_logs set hash = ? where id = ?", row.hash, row.id);
      await raw.run("update audit_logs set user_id = ? where id = ?", row.user_id, row.id);
    }
    await raw.run("update audit_chain set hash = ?", anchor.hash);
    expect(await auditPlugin.verify({ anchor })).toMatchObject({ ok: true });
  });

  it("a DELETE of the last entry, then of one in the middle, is found; the CLI exits 1 naming it", async () => {
    const before = await auditPlugin.verify();
    if (!before.ok) throw new Error(before.message);
    const last = before.head.seq;
    await raw.run("delete from audit_logs where seq = ?", last);
    expect(await auditPlugin.verify()).toMatchObject({
      ok: false,
      problem: "missing",
      at: { seq: last, id: null },
      entries: last - 1,
      message: `Entry seq ${last} is missing (deleted): the head row says the last entry is seq ${last}.`,
    });

    const [middle] = await raw.run("select id from audit_logs where seq = 5");
    await raw.run("delete from audit_logs where seq = 5");
    const report = await auditPlugin.verify();
    expect(report).toMatchObject({ ok: false, problem: "missing", at: { seq: 5, id: null }, entries: 4 });
    if (report.ok) return;
    expect(report.message).toMatch(
      /^Entry seq 5 is missing \(deleted\): the next entry is seq 6 \(id .+\)\.$/,
    );
    expect(middle).toBeDefined();

    const result = cli(cliProject(database), "audit", "verify", "--config", "app.config.ts");
    expect(result.code).toBe(1);
    expect(result.stdout).toContain(`missing: ${report.message}`);
    expect(result.stderr.trim()).toBe(
      "crudkit: audit chain broken at seq 5: missing; 4 entries verified before it.",
    );

    // The head row itself deleted: reported, and an app will not start a second chain over the first.
    await raw.run("delete from audit_chain");
    expect(await auditPlugin.verify()).toMatchObject({ ok: false, problem: "head mismatch", at: { seq: 0 } });
    const again = makeApp(database);
    await expect(again.app.ready).rejects.toThrow(/the chain's head row \(table audit_chain\) is missing/);
    await again.app.close();
  });

  it("an old audit table keeps its entries, unchained; the chain starts after them", async () => {
    const own = await dialect.fresh();
    const old = crudkit({
      database: own,
      autoMigrate: true,
      resources: [project, task],
      plugins: [{ id: "old-audit", tables: [OLD_AUDIT_LOGS] }],
    });
    await old.ready;
    const at = (iso: string) => (dialect.name === "sqlite" ? iso : new Date(iso));
    for (let i = 0; i < 3; i++)
      await old.db
        .insertInto("audit_logs")
        .values({
          id: `old-${i}`,
          created_at: at(`2024-01-0${i + 1}T00:00:00.000Z`),
          resource: "project",
          operation: "create",
          source: "server",
          after: JSON.stringify({ name: `old ${i}` }),
        })
        .execute();
    await old.close();

    const upgraded = makeApp(own);
    await upgraded.app.ready;
    try {
      for (let i = 0; i < 4; i++)
        await upgraded.app.api.createProject({ body: { name: `new ${i}` }, overrideAccess: true });
      await upgraded.auditPlugin.seal();
      const stored = await upgraded.app.db
        .selectFrom("audit_logs")
        .select(["id", "seq"])
        .orderBy("created_at")
        .orderBy("seq")
        .execute();
      expect(
        stored.map((r) => [r.id.startsWith("old-") ? r.id : "new", r.seq === null ? null : Number(r.seq)]),
      ).toEqual([
        ["old-0", null],
        ["old-1", null],
        ["old-2", null],
        ["new", 1],
        ["new", 2],
        ["new", 3],
        ["new", 4],
      ]);
      const report = await upgraded.auditPlugin.verify();
      expect(report).toMatchObject({ ok: true, entries: 4, unchained: 3, head: { seq: 4 } });
      const listed = await send(upgraded.app, "GET", "/api/audit/logs?limit=100", { headers: AUDITOR });
      expect(listed.body.pagination.total).toBe(7);

      const result = cli(cliProject(own), "audit", "verify", "--config", "app.config.ts");
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout.trim().split("\n")).toEqual([
        "3 entries were written before the chain existed: unchained, not covered",
        "audit chain verified: 4 entries, head seq 4",
      ]);
    } finally {
      await upgraded.app.close();
    }
  });

  it("after a prune the kept chain verifies from where it now starts", async () => {
    const own = await dialect.fresh();
    const pruned = makeApp(own, 30);
    await pruned.app.ready;
    const ownRaw = await rawClient(dialect.name, own.url);
    const make = (name: string) => pruned.app.api.createProject({ body: { name }, overrideAccess: true });
    try {
      // Entries 1-3 and 5 are 40 days old, 4, 6 and 7 new: writers' clocks interleave that way too.
      const old = new Date(Date.now() - 40 * 24 * 3600 * 1000);
      const writeOld = async (names: string[]) => {
        vi.useFakeTimers({ toFake: ["Date"] });
        vi.setSystemTime(old);
        try {
          for (const name of names) await make(name);
        } finally {
          vi.useRealTimers();
        }
      };
      await writeOld(["a", "b", "c"]);
      await make("d");
      await writeOld(["e"]);
      await make("f");
      await make("g");
      const full = await pruned.auditPlugin.verify();
      expect(full).toMatchObject({ ok: true, entries: 7 });

      // Up to the first entry written since the cutoff: 1-3 go, 5 stays (no gap in the chain).
      expect(await pruned.auditPlugin.prune()).toBe(3);
      const seqs = await pruned.app.db.selectFrom("audit_logs").select("seq").orderBy("seq").execute();
      expect(seqs.map((r) => Number(r.seq))).toEqual([4, 5, 6, 7]);
      const after = await pruned.auditPlugin.verify();
      expect(after).toEqual({ ok: true, entries: 4, unchained: 0, head: full.ok ? full.head : undefined });
      expect(await pruned.auditPlugin.prune()).toBe(0);

      // The first kept entry is checked against the link the head row recorded for it.
      await ownRaw.run("update audit_logs set resource = 'task' where seq = 4");
      expect(await pruned.auditPlugin.verify()).toMatchObject({
        ok: false,
        problem: "edited",
        at: { seq: 4 },
      });
      await ownRaw.run("update audit_logs set resource = 'project' where seq = 4");
      expect((await pruned.auditPlugin.verify()).ok).toBe(true);
      await ownRaw.run("delete from audit_logs where seq = 4");
      expect(await pruned.auditPlugin.verify()).toMatchObject({
        ok: false,
        problem: "missing",
        at: { seq: 4, id: null },
        entries: 0,
      });
    } finally {
      await ownRaw.close();
      await pruned.app.close();
    }
  });

  it("a prune of every entry leaves an empty chain that goes on from its last seq", async () => {
    const own = await dialect.fresh();
    const pruned = makeApp(own, 1);
    await pruned.app.ready;
    try {
      vi.useFakeTimers({ toFake: ["Date"] });
      vi.setSystemTime(new Date(Date.now() - 3 * 24 * 3600 * 1000));
      try {
        for (const name of ["a", "b"])
          await pruned.app.api.createProject({ body: { name }, overrideAccess: true });
      } finally {
        vi.useRealTimers();
      }
      expect(await pruned.auditPlugin.prune()).toBe(2);
      expect(await pruned.auditPlugin.verify()).toMatchObject({ ok: true, entries: 0, head: { seq: 2 } });
      await pruned.app.api.createProject({ body: { name: "c" }, overrideAccess: true });
      expect(await pruned.auditPlugin.verify()).toMatchObject({ ok: true, entries: 1, head: { seq: 3 } });
    } finally {
      await pruned.app.close();
    }
  });
}

/** `audit_logs` as it was before the chain: no seq, no hash. */
const OLD_AUDIT_LOGS: TableDefinition = {
  name: "audit_logs",
  columns: {
    id: { type: "text", primaryKey: true, notNull: true },
    created_at: { type: "date", notNull: true, defaultNow: true },
    resource: { type: "text", notNull: true },
    operation: { type: "text", notNull: true },
    record_id: { type: "text" },
    user_id: { type: "text" },
    source: { type: "text", notNull: true, enumValues: ["http", "server", "override"] },
    ip: { type: "text" },
    user_agent: { type: "text" },
    before: { type: "json" },
    after: { type: "json" },
    changes: { type: "json" },
    caused_by: { type: "text" },
    scope: { type: "text" },
  },
  indexes: [
    { name: "audit_logs_created_at_id_idx", columns: ["created_at", "id"] },
    { name: "audit_logs_resource_idx", columns: ["resource", "operation", "created_at"] },
    { name: "audit_logs_record_id_idx", columns: ["record_id", "created_at"] },
    { name: "audit_logs_user_id_idx", columns: ["user_id", "created_at"] },
  ],
};

describe("audit chain", () => {
  forEachDialect(suite);

  it("an entry's JSON is its canonical JSON, character for character: every digest already stored depends on it", () => {
    const base = {
      id: "e1",
      created_at: "2026-11-27T06:00:00.000Z",
      resource: "item",
      operation: "update",
      record_id: "r1",
      user_id: null,
      source: "http",
      ip: "127.0.0.1",
      user_agent: 'a "quoted" agent\\ with \u0000 and \u2028',
      before: { b: 1, a: [{ d: 2, c: "é" }], z: null },
      after: { b: 2, a: [], "": "empty key", é: "accent", "😀": true },
      changes: ["b", "a"],
      caused_by: null,
      scope: "org-1",
    };
    const variants = [
      base,
      { ...base, before: null, after: null, changes: null, ip: null, scope: null },
      // A column a row lacks is left out, as canonicalJson leaves out undefined members.
      { ...base, before: undefined, changes: undefined },
      { ...base, after: { __proto__: "x", constructor: 1, nested: { deep: [[1, [2, { y: 1, x: 2 }]]] } } },
      { ...base, after: "a text", before: 12.5, changes: true },
    ];
    for (const columns of variants) {
      const typed = columns as unknown as Parameters<typeof entryJson>[0];
      expect(entryJson(typed)).toBe(canonicalJson(typed));
    }
  });
});

/** `writers` writers each creating `each` projects at once. */
async function createConcurrently(app: App, writers: number, each: number) {
  await Promise.all(
    Array.from({ length: writers }, async (_, w) => {
      for (let i = 0; i < each; i++)
        await app.api.createProject({ body: { name: `w${w}-${i}` }, overrideAccess: true });
    }),
  );
}

/**
 * A PostgreSQL database the owner set up (tables, chain, seal function) and a login role that may
 * read and write its tables but create nothing: the app's role in a hardened deployment.
 */
async function limitedRole(dialect: TestDialect, options: { revoke?: string; dropFunction?: boolean }) {
  const database = await dialect.fresh();
  const owner = crudkit({ database, autoMigrate: true, resources: [project, task], plugins: [audit()] });
  await owner.ready;
  await owner.close();
  const role = `ck_writer_${randomBytes(4).toString("hex")}`;
  const raw = await rawClient("postgres", database.url);
  if (options.dropFunction) await raw.run("drop function crudkit_audit_seal_v3(integer)");
  await raw.run(`create role ${role} login password 'writer'`);
  await raw.run(`grant usage on schema public to ${role}`);
  await raw.run(`grant select, insert, update, delete on all tables in schema public to ${role}`);
  if (options.revoke) await raw.run(`${options.revoke} from ${role}`);
  // The role's rights are PostgreSQL's: straight to the server (PgBouncer's entry connects every
  // client as postgres).
  const url = new URL((database as { directUrl?: string }).directUrl ?? database.url);
  url.username = role;
  url.password = "writer";
  return {
    url: url.toString(),
    /** The owner's, as the tables were made with. */
    ownerDatabase: database,
    raw,
    async drop() {
      await raw.run(`drop owned by ${role}`);
      await raw.run(`drop role ${role}`);
      await raw.close();
    },
  };
}

// PostgreSQL queues each entry (audit_pending) and seals entries just after they commit, in the
// database; without the right to create the seal function, the app links in each write instead.
// Both keep the chain whole.
describe("audit chain on PostgreSQL: sealed after commit", () => {
  forEachDialect(
    (dialect) => {
      const throwing = {
        id: "after-audit",
        hooks: {
          afterCreate: ({ record }: { record: Record<string, unknown> }) => {
            if (record.name === "boom") throw new Error("rolled back after its audit entry");
          },
        },
      };
      // Entries queued (and version 2's, pending in the log itself) that the sealer has yet to link.
      const pendingCount = async (app: { db: Kysely<any> }) => {
        const count = async (query: SelectQueryBuilder<any, any, object>) =>
          Number((await query.select((eb) => eb.fn.countAll().as("n")).executeTakeFirst())?.n);
        return (
          (await count(app.db.selectFrom("audit_pending"))) +
          (await count(app.db.selectFrom("audit_logs").where("seq", "<", 0)))
        );
      };

      it("the sealer links every committed entry soon after its commit; a rolled-back write leaves no gap", async () => {
        const database = await dialect.fresh();
        const app = crudkit({
          database,
          autoMigrate: true,
          resources: [project, task],
          plugins: [audit(), throwing],
          log: () => {},
        });
        await app.ready;
        try {
          const raw = await rawClient("postgres", database.url);
          const [fn] = await raw.run("select prosecdef from pg_proc where proname = 'crudkit_audit_seal_v3'");
          await raw.close();
          expect(fn?.prosecdef).toBe(true);
          const make = (name: string) => app.api.createProject({ body: { name }, overrideAccess: true });
          await Promise.all(
            Array.from({ length: 8 }, async (_, w) => {
              for (let i = 0; i < 5; i++) {
                await make(`p${w}-${i}`);
                await expect(make("boom")).rejects.toThrow();
              }
            }),
          );
          // Without anyone asking for the head: the sealer, woken by the commits, gets there alone.
          await expect.poll(() => pendingCount(app), { timeout: 5000 }).toBe(0);
          const seqs = await app.db.selectFrom("audit_logs").select("seq").orderBy("seq").execute();
          expect(seqs.map((row) => Number(row.seq))).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
          expect(await app.audit.verify()).toMatchObject({ ok: true, entries: 40, unchained: 0 });
        } finally {
          await app.close();
        }
      });

      it("a transaction's entries are chained together, in the order written, while other writers commit around it", async () => {
        const database = await dialect.fresh();
        const app = crudkit({ database, autoMigrate: true, resources: [project, task], plugins: [audit()] });
        await app.ready;
        try {
          const doomed = await app.api.createProject({ body: { name: "doomed" }, overrideAccess: true });
          for (let i = 0; i < 5; i++)
            await app.api.createTask({
              body: { title: `t${i}`, projectId: doomed.id },
              overrideAccess: true,
            });
          // The cascade writes six entries in one transaction (five tasks, then the project), while
          // four writers commit entries of their own.
          await Promise.all([
            app.api.deleteProject({ params: { id: doomed.id }, overrideAccess: true }),
            createConcurrently(app, 4, 5),
          ]);
          expect(await app.audit.verify()).toMatchObject({ ok: true, entries: 32 });
          const deletes = await app.db
            .selectFrom("audit_logs")
            .select(["seq", "resource", "caused_by"])
            .where("operation", "=", "delete")
            .orderBy("seq")
            .execute();
          const seqs = deletes.map((row) => Number(row.seq));
          expect(seqs).toEqual(Array.from({ length: 6 }, (_, i) => seqs[0]! + i));
          expect(deletes.map((row) => row.resource)).toEqual([...Array(5).fill("task"), "project"]);
        } finally {
          await app.close();
        }
      });

      it("the head and verify() cover every write acknowledged before them, sealed or not yet", async () => {
        const database = await dialect.fresh();
        const app = crudkit({
          database,
          autoMigrate: true,
          resources: [project, task],
          plugins: [audit({ access: { read: () => true } })],
        });
        await app.ready;
        try {
          for (let round = 1; round <= 3; round++) {
            await app.api.createProject({ body: { name: `r${round}` }, overrideAccess: true });
            const head = await app.handler(new Request("http://localhost/api/audit/head"));
            expect(await head.json()).toMatchObject({ seq: round });
          }
          await app.api.createProject({ body: { name: "last" }, overrideAccess: true });
          expect(await app.audit.verify()).toMatchObject({ ok: true, entries: 4, head: { seq: 4 } });
        } finally {
          await app.close();
        }
      });

      it("GET /audit/logs and the history list every write acknowledged before them, with readers all at once", async () => {
        const database = await dialect.fresh();
        const app = crudkit({
          database,
          autoMigrate: true,
          resources: [project, task],
          plugins: [
            apiKey({ keys: { "alice-key": { id: "alice" } } }),
            audit({ access: { read: () => true } }),
          ],
        });
        await app.ready;
        const get = async (path: string) => {
          const response = await app.handler(new Request(`http://localhost/api${path}`, { headers: ALICE }));
          expect(response.status).toBe(200);
          return ((await response.json()) as { items: { operation: string }[] }).items;
        };
        try {
          // Each writer reads right after its write, while the others write: the entry is queued
          // until sealed, and readers read the queue with the log.
          await Promise.all(
            Array.from({ length: 8 }, async (_, w) => {
              for (let i = 0; i < 4; i++) {
                const made = await app.api.createProject({
                  body: { name: `r${w}-${i}` },
                  overrideAccess: true,
                });
                const [logs, history] = await Promise.all([
                  get(`/audit/logs?recordId=${made.id}`),
                  get(`/project/${made.id}/history`),
                ]);
                expect(logs.map((entry) => entry.operation)).toEqual(["create"]);
                expect(history.map((entry) => entry.operation)).toEqual(["create"]);
              }
            }),
          );
          expect(await app.audit.verify()).toMatchObject({ ok: true, entries: 32 });
        } finally {
          await app.close();
        }
      });

      it("queued entries are listed while sealing fails, and sealed once it works again", async () => {
        const database = await dialect.fresh();
        const app = crudkit({
          database,
          autoMigrate: true,
          resources: [project, task],
          plugins: [
            apiKey({ keys: { "alice-key": { id: "alice" } } }),
            audit({ access: { read: () => true } }),
          ],
          log: () => {},
        });
        await app.ready;
        const raw = await rawClient("postgres", database.url);
        try {
          await raw.run("alter function crudkit_audit_seal_v3(integer) rename to crudkit_audit_seal_off");
          const made = await app.api.createProject({ body: { name: "queued" }, overrideAccess: true });
          await app.api.updateProject({
            params: { id: made.id },
            body: { name: "queued 2" },
            overrideAccess: true,
          });
          expect(await raw.run("select count(*)::int as n from audit_logs")).toEqual([{ n: 0 }]);
          const logs = await app.handler(
            new Request(`http://localhost/api/audit/logs?recordId=${made.id}`, { headers: ALICE }),
          );
          expect((await logs.json()).items.map((e: { operation: string }) => e.operation)).toEqual([
            "update",
            "create",
          ]);
          const history = await app.handler(
            new Request(`http://localhost/api/project/${made.id}/history`, { headers: ALICE }),
          );
          expect((await history.json()).items.map((e: { after: { name: string } }) => e.after.name)).toEqual([
            "queued 2",
            "queued",
          ]);
          await raw.run("alter function crudkit_audit_seal_off(integer) rename to crudkit_audit_seal_v3");
          expect(await app.audit.verify()).toMatchObject({ ok: true, entries: 2 });
          expect(await raw.run("select count(*)::int as n from audit_pending")).toEqual([{ n: 0 }]);
        } finally {
          await raw.close();
          await app.close();
        }
      });

      it("an entry the log refuses is kept aside, out of the chain, which goes on and verifies", async () => {
        const database = await dialect.fresh();
        const app = crudkit({ database, autoMigrate: true, resources: [project, task], plugins: [audit()] });
        await app.ready;
        const raw = await rawClient("postgres", database.url);
        try {
          const first = await app.api.createProject({ body: { name: "first" }, overrideAccess: true });
          await app.audit.seal();
          const [{ id: firstEntry }] = (await raw.run("select id from audit_logs")) as [{ id: string }];
          // A constraint added to the log since the queue was made, and an id the log holds already:
          // the queue takes both entries, the log refuses them when they are moved.
          await raw.run("alter table audit_logs add constraint no_refused check (record_id <> 'refused')");
          const queue = (id: string, recordId: string, place: string) =>
            raw.run(
              "insert into audit_pending (id, created_at, resource, operation, record_id, source, place, digest) " +
                `values ('${id}', now(), 'project', 'create', '${recordId}', 'server', '${place}', '${"d".repeat(64)}')`,
            );
          await queue("bad", "refused", "0000000000000000");
          await queue(firstEntry, first.id, "0000000000000001");
          await app.api.createProject({ body: { name: "after" }, overrideAccess: true });
          await app.audit.seal();
          expect(await raw.run("select count(*)::int as n from audit_pending")).toEqual([{ n: 0 }]);
          expect(await raw.run("select seq::int as seq from audit_logs order by seq")).toEqual([
            { seq: 1 },
            { seq: 2 },
          ]);
          const refused = await raw.run("select id, reason from audit_refused order by place");
          expect(refused.map((row) => row.id)).toEqual(["bad", firstEntry]);
          expect(String(refused[0]!.reason)).toMatch(/no_refused/);
          expect(String(refused[1]!.reason)).toMatch(/duplicate key/);
          expect(await app.audit.verify()).toMatchObject({ ok: true, entries: 2 });
          // A later batch without a refused entry takes the fast way again.
          await createConcurrently(app, 2, 2);
          expect(await app.audit.verify()).toMatchObject({ ok: true, entries: 6 });
        } finally {
          await raw.close();
          await app.close();
        }
      });

      it("close() seals what the instance committed last", async () => {
        const database = await dialect.fresh();
        const app = crudkit({ database, autoMigrate: true, resources: [project, task], plugins: [audit()] });
        await app.ready;
        await createConcurrently(app, 4, 2);
        await app.close();
        const raw = await rawClient("postgres", database.url);
        try {
          expect(await raw.run("select count(*)::int as n from audit_pending")).toEqual([{ n: 0 }]);
          expect(await raw.run("select count(*)::int as n from audit_logs where seq > 0")).toEqual([
            { n: 8 },
          ]);
        } finally {
          await raw.close();
        }
      });

      it("an instance that does not seal says so at start when entries wait in the queue", async () => {
        const database = await dialect.fresh();
        const raw = await rawClient("postgres", database.url);
        try {
          const first = crudkit({
            database,
            autoMigrate: true,
            resources: [project, task],
            plugins: [audit()],
          });
          await first.ready;
          await raw.run("alter function crudkit_audit_seal_v3(integer) rename to crudkit_audit_seal_off");
          await createConcurrently(first, 1, 2);
          await first.close().catch(() => {});
          await raw.run("alter function crudkit_audit_seal_off(integer) rename to crudkit_audit_seal_v3");
          const logged: string[] = [];
          const plain = crudkit({
            database,
            resources: [project, task],
            plugins: [audit({ chain: false })],
            log: (message) => logged.push(message),
          });
          await plain.ready;
          await plain.close();
          expect(logged.join("\n")).toMatch(
            /2 audit entries wait in audit_pending and this instance does not seal them/,
          );
        } finally {
          await raw.close();
        }
      });

      it("entries left pending by an instance that stopped before sealing are sealed by another", async () => {
        const database = await dialect.fresh();
        const first = crudkit({
          database,
          autoMigrate: true,
          resources: [project, task],
          plugins: [audit()],
        });
        await first.ready;
        const raw = await rawClient("postgres", database.url);
        try {
          // What a crash between a commit and its seal leaves: committed entries still pending.
          await raw.run("alter function crudkit_audit_seal_v3(integer) rename to crudkit_audit_seal_off");
          await createConcurrently(first, 2, 3);
          await first.close();
          await raw.run("alter function crudkit_audit_seal_off(integer) rename to crudkit_audit_seal_v3");
          expect(await raw.run("select count(*)::int as n from audit_pending")).toEqual([{ n: 6 }]);
          expect(await raw.run("select count(*)::int as n from audit_logs")).toEqual([{ n: 0 }]);
          const second = crudkit({ database, resources: [project, task], plugins: [audit()], log: () => {} });
          await second.ready;
          try {
            // Its poll finds them, without a write of its own.
            await expect.poll(() => pendingCount(second), { timeout: 5000 }).toBe(0);
            expect(await second.audit.verify()).toMatchObject({ ok: true, entries: 6 });
          } finally {
            await second.close();
          }
        } finally {
          await raw.close();
        }
      });

      it("an entry pending at verify() is sealed first; one edited while pending fails verify, named", async () => {
        const database = await dialect.fresh();
        const app = crudkit({ database, autoMigrate: true, resources: [project, task], plugins: [audit()] });
        await app.ready;
        const raw = await rawClient("postgres", database.url);
        try {
          await app.api.createProject({ body: { name: "sealed" }, overrideAccess: true });
          expect(await app.audit.verify()).toMatchObject({ ok: true, entries: 1 });
          // An entry written straight into the table as pending, as the app writes them, and then
          // edited by the database's own client before the sealer links it: its content no
          // longer matches the digest it entered with.
          const entry = await raw.run(
            "insert into audit_logs (id, created_at, resource, operation, record_id, source, seq, hash) " +
              `values ('edited-while-pending', now(), 'project', 'create', 'x', 'server', -1, '${"a".repeat(64)}') returning id`,
          );
          expect(entry).toEqual([{ id: "edited-while-pending" }]);
          expect(await app.audit.verify()).toMatchObject({
            ok: false,
            problem: "edited",
            at: { seq: 2, id: "edited-while-pending" },
          });
        } finally {
          await raw.close();
          await app.close();
        }
      });

      it("a pending row without a hash cannot stop the chain: it is sealed last and verify names it; a forged seq -5 too", async () => {
        const database = await dialect.fresh();
        const app = crudkit({ database, autoMigrate: true, resources: [project, task], plugins: [audit()] });
        await app.ready;
        const raw = await rawClient("postgres", database.url);
        try {
          await app.api.createProject({ body: { name: "before" }, overrideAccess: true });
          await raw.run(
            "insert into audit_logs (id, created_at, resource, operation, source, seq, hash) " +
              "values ('no-hash', now(), 'project', 'create', 'server', -1, null)",
          );
          await app.api.createProject({ body: { name: "after" }, overrideAccess: true });
          await app.audit.seal();
          expect(await pendingCount(app)).toBe(0);
          // The entry after it was sealed before it (its place sorts first): only the bad row fails.
          expect(await app.audit.verify()).toMatchObject({
            ok: false,
            problem: "edited",
            at: { seq: 3, id: "no-hash" },
          });
          await raw.run("delete from audit_logs where id = 'no-hash'");
          await raw.run("update audit_chain set seq = 2, hash = (select hash from audit_logs where seq = 2)");
          expect(await app.audit.verify()).toMatchObject({ ok: true, entries: 2 });
          await raw.run(
            "insert into audit_logs (id, created_at, resource, operation, source, seq, hash) " +
              `values ('forged', now(), 'project', 'create', 'server', -5, '${"c".repeat(64)}')`,
          );
          expect(await app.audit.verify()).toMatchObject({
            ok: false,
            problem: "out of order",
            at: { seq: -5, id: "forged" },
          });
        } finally {
          await raw.close();
          await app.close();
        }
      });

      it("a seal function made by another role is not trusted: the app links in each write instead", async () => {
        const database = await dialect.fresh();
        const owner = crudkit({
          database,
          autoMigrate: true,
          resources: [project, task],
          plugins: [audit()],
        });
        await owner.ready;
        await owner.close();
        const raw = await rawClient("postgres", database.url);
        const role = `ck_other_${randomBytes(4).toString("hex")}`;
        try {
          await raw.run("drop function crudkit_audit_seal_v3(integer)");
          await raw.run(`create role ${role}`);
          await raw.run(`grant create on schema public to ${role}`);
          await raw.run(`set role ${role}`);
          await raw.run(
            "create function crudkit_audit_seal_v3(batch integer) returns integer language sql as $$ select 0 $$",
          );
          await raw.run("reset role");
          const logged: string[] = [];
          const app = crudkit({
            database,
            resources: [project, task],
            plugins: [audit()],
            log: (message) => logged.push(message),
          });
          try {
            await app.ready;
            expect(logged.join("\n")).toMatch(/could not create the function that seals audit entries/);
            await createConcurrently(app, 4, 3);
            expect(await pendingCount(app)).toBe(0);
            expect(await app.audit.verify()).toMatchObject({ ok: true, entries: 12 });
          } finally {
            await app.close();
          }
          await raw.run(`drop function crudkit_audit_seal_v3(integer)`);
          await raw.run(`revoke create on schema public from ${role}`);
          await raw.run(`drop role ${role}`);
        } finally {
          await raw.close();
        }
      });

      it("an entry left without a seq by an older version's trigger is unlinked: verify fails naming it", async () => {
        const database = await dialect.fresh();
        const app = crudkit({ database, autoMigrate: true, resources: [project, task], plugins: [audit()] });
        await app.ready;
        const raw = await rawClient("postgres", database.url);
        try {
          await app.api.createProject({ body: { name: "linked" }, overrideAccess: true });
          // Version 1 wrote entries with no seq and its digest, for a trigger to link at commit:
          // one that trigger skipped (disabled, session_replication_role) stays outside the proof.
          await raw.run(
            "insert into audit_logs (id, created_at, resource, operation, source, hash) " +
              `values ('skipped', now(), 'project', 'create', 'server', '${"b".repeat(64)}')`,
          );
          expect(await app.audit.verify()).toMatchObject({
            ok: false,
            problem: "unlinked",
            at: { id: "skipped" },
            unchained: 0,
          });
          // Retention does not take it for an entry from before the chain.
          expect(await raw.run("select count(*)::int as n from audit_logs where seq is null")).toEqual([
            { n: 1 },
          ]);
        } finally {
          await raw.close();
          await app.close();
        }
      });

      it("the app's role needs no right to update audit entries: the seal function runs as its owner", async () => {
        const writer = await limitedRole(dialect, {
          revoke: "revoke update, delete on audit_logs, audit_chain",
        });
        const app = crudkit({
          database: { provider: "postgres", url: writer.url },
          resources: [project, task],
          plugins: [audit()],
          log: () => {},
        });
        try {
          await app.ready;
          await createConcurrently(app, 4, 5);
          expect(await app.audit.verify()).toMatchObject({ ok: true, entries: 20, unchained: 0 });
        } finally {
          await app.close();
          await writer.drop();
        }
      });

      it("an app role granted the log's rights before the queue existed may use the queue the owner makes", async () => {
        // A database of version 2: the owner's tables, the app role's grants, no queue yet.
        const writer = await limitedRole(dialect, {});
        await writer.raw.run("drop table audit_pending");
        await writer.raw.run("drop function crudkit_audit_seal_v3(integer)");
        await writer.raw.run("drop function crudkit_audit_pending_v3()");
        const owner = crudkit({
          database: writer.ownerDatabase,
          resources: [project, task],
          plugins: [audit()],
        });
        await owner.ready;
        await owner.close();
        const logged: string[] = [];
        const app = crudkit({
          database: { provider: "postgres", url: writer.url },
          resources: [project, task],
          plugins: [audit()],
          log: (message) => logged.push(message),
        });
        try {
          await app.ready;
          await createConcurrently(app, 4, 2);
          expect(await app.audit.verify()).toMatchObject({ ok: true, entries: 8, unchained: 0 });
          expect(logged).toEqual([]);
        } finally {
          await app.close();
          await writer.drop();
        }
      });

      it("a role that may not use the queue links in each write instead, and says so", async () => {
        // Without select on it (readers read it), as without insert: and the start still works.
        const writer = await limitedRole(dialect, { revoke: "revoke select on audit_pending" });
        const logged: string[] = [];
        const app = crudkit({
          database: { provider: "postgres", url: writer.url },
          resources: [project, task],
          plugins: [audit()],
          log: (message) => logged.push(message),
        });
        try {
          await app.ready;
          expect(logged.join("\n")).toMatch(/may not insert into and read audit_pending/);
          await createConcurrently(app, 4, 2);
          expect(await app.audit.verify()).toMatchObject({ ok: true, entries: 8 });
        } finally {
          await app.close();
          await writer.drop();
        }
      });

      it("without the right to create the seal function, entries are linked in the write: the chain verifies", async () => {
        const writer = await limitedRole(dialect, { dropFunction: true });
        const logged: string[] = [];
        const app = crudkit({
          database: { provider: "postgres", url: writer.url },
          resources: [project, task],
          plugins: [audit()],
          log: (message) => logged.push(message),
        });
        try {
          await app.ready;
          expect(logged.join("\n")).toMatch(
            /could not create the function that seals audit entries after commit/,
          );
          await createConcurrently(app, 8, 5);
          expect(await app.audit.verify()).toMatchObject({ ok: true, entries: 40, unchained: 0 });
          expect(await writer.raw.run("select count(*)::int as n from audit_logs where seq < 0")).toEqual([
            { n: 0 },
          ]);
        } finally {
          await app.close();
          await writer.drop();
        }
      });

      it("a database that still has version 1's trigger keeps one chain with it", async () => {
        const database = await dialect.fresh();
        const app = crudkit({ database, autoMigrate: true, resources: [project, task], plugins: [audit()] });
        await app.ready;
        const raw = await rawClient("postgres", database.url);
        try {
          await createConcurrently(app, 2, 2);
          // An older instance still running: it writes entries with no seq, and its deferred
          // trigger links them at commit, moving the same head under the same lock.
          await raw.run(`create function crudkit_audit_link_v1() returns trigger language plpgsql as $$
            declare moved record;
            begin
              update audit_chain set seq = seq + 1,
                hash = encode(sha256(convert_to(hash || ':' || (seq + 1)::text || ':' || new.hash, 'UTF8')), 'hex')
                where id = 'audit' returning seq, hash into moved;
              update audit_logs set seq = moved.seq, hash = moved.hash where id = new.id;
              return null;
            end $$`);
          await raw.run(`create constraint trigger audit_logs_link after insert on audit_logs
            deferrable initially deferred for each row when (new.seq is null and new.hash is not null)
            execute function crudkit_audit_link_v1()`);
          const old = crudkit({ database, resources: [project, task], plugins: [audit()], log: () => {} });
          await old.ready;
          await Promise.all([createConcurrently(app, 4, 3), createConcurrently(old, 4, 3)]);
          expect(await app.audit.verify()).toMatchObject({ ok: true, entries: 28, unchained: 0 });
          await old.close();
        } finally {
          await raw.close();
          await app.close();
        }
      });
    },
    ["postgres"],
  );
});

describe("crudkit audit verify", () => {
  it("says so for an app without the audit plugin", async () => {
    const dir = cliDir();
    cliProject({ provider: "sqlite", url: `file:${join(dir, "app.db")}` }, false, dir);
    const result = cli(dir, "audit", "verify", "--config", "app.config.ts");
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /^crudkit: The app in .*app\.config\.ts has no audit plugin: add audit\(\) to its plugins/,
    );
  });
});
