// The real `crudkit` binary as a subprocess against each database: generate, migrate, re-run,
// add a field, remove one (refused without the flag), --dry-run, and the error exits.

import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { crudkit } from "crudkit-api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { forEachDialect, type TestDialect } from "./dialects.ts";

const root = new URL("..", import.meta.url).pathname;
const bin = join(root, "bin/crudkit.mjs");
// Under the repository, so the config's imports (zod) resolve.
const work = join(root, "test/.cli-work");
mkdirSync(work, { recursive: true });
const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function project(): string {
  const dir = mkdtempSync(join(work, "project-"));
  dirs.push(dir);
  return dir;
}

function run(cwd: string, ...args: string[]) {
  const result = spawnSync(process.execPath, [bin, ...args], { cwd, encoding: "utf8", timeout: 60_000 });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

function writeConfig(
  dir: string,
  database: { provider: string; url: string },
  fields: string,
  name = "crudkit.config.ts",
  options = "",
) {
  writeFileSync(
    join(dir, name),
    `import { createResource, crudkit, withId } from "crudkit-api";
import { z } from "zod";

const product = createResource({ name: "product", schema: withId({ ${fields} }), searchable: ["name"]${options} });

export default crudkit({ database: ${JSON.stringify(database)}, resources: [product] });
`,
  );
}

/** Tables, columns and indexes as the database itself reports them. */
async function inspect(database: { provider: string; url: string }) {
  const app = crudkit({ database: database as never, resources: [] });
  const tables = await app.db.introspection.getTables();
  // The search index (SQLite's FTS5 table and its shadow tables) is checked on its own.
  const columns = Object.fromEntries(
    tables
      .filter((t) => !t.name.includes("__search"))
      .map((t) => [t.name, t.columns.map((c) => c.name).sort()]),
  );
  await app.close();
  return columns;
}

forEachDialect((dialect) => {
  let database: { provider: string; url: string };
  let dir = "";
  beforeAll(async () => {
    database = (await dialect.fresh()) as { provider: string; url: string };
    dir = project();
  });

  it("generate writes the SQL; migrate applies it; a second migrate changes nothing", async () => {
    writeConfig(dir, database, `name: z.string().min(1), price: z.number().min(0)`);
    const generated = run(dir, "generate", "--out", "migrations");
    expect(generated.code, generated.stderr).toBe(0);
    const files = readdirSync(join(dir, "migrations"));
    expect(files).toHaveLength(1);
    expect(files[0]).toMatch(/^\d{8}_\d{9}_[0-9a-f]{4}_create_table_product\.sql$/);
    const sqlText = readFileSync(join(dir, "migrations", files[0]!), "utf8");
    expect(sqlText).toMatch(/create table [`"]product[`"]/);
    expect(sqlText).toMatch(/create index [`"]product_createdAt_id_idx[`"]/);
    // The searchable name gets the dialect's search index (MariaDB has none: search scans there).
    const searchIndex = {
      sqlite: /create virtual table "product__search" using fts5\("name", .*tokenize='trigram'\)/,
      postgres: /create index "product_name_trgm_idx" on "product" using gin \("name" gin_trgm_ops\)/,
      mysql: undefined,
    }[dialect.name];
    if (searchIndex) expect(sqlText).toMatch(searchIndex);
    else expect(sqlText).not.toMatch(/fulltext|trgm|fts5/);
    expect(await inspect(database)).toEqual({});

    const migrated = run(dir, "migrate");
    expect(migrated.code, migrated.stderr).toBe(0);
    expect(migrated.stdout).toMatch(/create table [`"]product[`"]/);
    expect(migrated.stdout).toMatch(/applied \d{8}_\d{9}_[0-9a-f]{4}_create_table_product: \d+ statement/);
    expect(migrated.stdout).toContain("in sync: the database matches the resources");
    expect(await inspect(database)).toEqual({
      crudkit_migrations: ["applied_at", "checksum", "name", "tables"],
      product: ["createdAt", "id", "name", "price", "updatedAt"],
    });
    expect(await indexes(database)).toContain("product_createdAt_id_idx");

    const again = run(dir, "migrate");
    expect(again.code).toBe(0);
    expect(again.stdout.trim()).toBe(
      "no pending migration files\nin sync: the database matches the resources",
    );
    expect(run(dir, "generate").stdout.trim()).toBe("nothing to generate: the database matches the schema");
  });

  it("a new field: generate shows only the ALTER; --dry-run changes nothing; migrate adds it", async () => {
    writeConfig(
      dir,
      database,
      `name: z.string().min(1), price: z.number().min(0), colour: z.string().optional()`,
    );
    const generated = run(dir, "generate", "--out", "next");
    expect(generated.code, generated.stderr).toBe(0);
    const [file] = readdirSync(join(dir, "next"));
    const statements = readFileSync(join(dir, "next", file!), "utf8")
      .split("\n")
      .filter((l) => l && !l.startsWith("--"));
    expect(statements).toHaveLength(1);
    expect(statements[0]).toMatch(/^alter table [`"]product[`"] add column [`"]colour[`"] (long)?text;$/);

    const dry = run(dir, "migrate", "--dir", "next", "--dry-run");
    expect(dry.code).toBe(0);
    expect(dry.stdout).toContain("dry run: nothing was applied");
    expect((await inspect(database)).product).not.toContain("colour");

    expect(run(dir, "migrate", "--dir", "next").code).toBe(0);
    expect((await inspect(database)).product).toContain("colour");
  });

  it("a removed field is refused without --allow-destructive, and dropped with it", async () => {
    writeConfig(dir, database, `name: z.string().min(1), colour: z.string().optional()`);
    const refused = run(dir, "migrate", "--push");
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("Refused: 1 destructive change(s) would lose data");
    expect(refused.stderr).toContain("product.price");
    expect(refused.stderr).toContain("Nothing was applied");
    expect((await inspect(database)).product).toContain("price");

    const generated = run(dir, "generate", "--out", "destructive");
    expect(generated.stdout).toContain("destructive step(s) are commented out");

    const allowed = run(dir, "migrate", "--push", "--allow-destructive");
    expect(allowed.code, allowed.stderr).toBe(0);
    expect((await inspect(database)).product).toEqual(["colour", "createdAt", "id", "name", "updatedAt"]);
    expect(run(dir, "migrate", "--push").stdout.trim()).toBe(
      "nothing to migrate: the database matches the schema",
    );
  });

  it("migration files: drop a column, rename a field, narrow a type; migrate never exits 0 out of sync", async () => {
    const own = (await dialect.fresh()) as { provider: string; url: string };
    const work = project();
    const item = (fields: string) =>
      writeFileSync(
        join(work, "crudkit.config.ts"),
        `import { createResource, crudkit, withId } from "crudkit-api";
import { z } from "zod";
const item = createResource({ name: "item", schema: withId({ ${fields} }) });
export default crudkit({ database: ${JSON.stringify(own)}, resources: [item] });
`,
      );
    const newest = () => {
      const files = readdirSync(join(work, "migrations")).sort();
      return readFileSync(join(work, "migrations", files.at(-1)!), "utf8");
    };
    const inSync = "in sync: the database matches the resources";
    item(`name: z.string(), note: z.string().optional(), count: z.number()`);
    expect(run(work, "generate").code).toBe(0);
    const first = run(work, "migrate");
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toContain(inSync);

    // The three changes that lose data, one after the other.
    const changes = [
      { fields: `name: z.string(), count: z.number()`, loses: "drops column item.note" },
      { fields: `title: z.string(), count: z.number()`, loses: "drops column item.name" },
      { fields: `title: z.string(), count: z.number().int()`, loses: "item.count" },
    ];
    for (const { fields, loses } of changes) {
      item(fields);
      const generated = run(work, "generate");
      expect(generated.code, generated.stderr).toBe(0);
      expect(generated.stdout).toContain("commented out: after this file the database will still differ");
      expect(newest()).toContain("-- NOT IN SYNC:");
      const partial = run(work, "migrate");
      expect(partial.code, partial.stdout).toBe(4);
      expect(partial.stdout).not.toContain(inSync);
      expect(partial.stdout).toContain("not in sync: the database differs from the resources");
      expect(partial.stdout).toContain(loses);
      expect(partial.stderr).toContain("run crudkit generate --allow-destructive, then crudkit migrate");
      const status = run(work, "status");
      expect(status.stdout).not.toContain(inSync);
      expect(status.stdout).toContain("not in sync");

      const destructive = run(work, "generate", "--allow-destructive");
      expect(destructive.code, destructive.stderr).toBe(0);
      expect(destructive.stdout).toContain("written as statements: they lose data when applied");
      const file = newest();
      expect(file).not.toContain("NOT IN SYNC");
      expect(file).toContain(`-- DESTRUCTIVE (loses data): `);
      expect(file).toContain(loses);
      const applied = run(work, "migrate");
      expect(applied.code, applied.stdout + applied.stderr).toBe(0);
      expect(applied.stdout).toContain(inSync);
      expect(run(work, "status").stdout).toContain(inSync);
    }
    expect((await inspect(own)).item).toEqual(["count", "createdAt", "id", "title", "updatedAt"]);
  }, 180_000);

  it("a required field with a default is added to rows that exist, with that default", async () => {
    const app = crudkit({ database: database as never, resources: [] });
    await app.db.insertInto("product").values(row(dialect.name)).execute();
    await app.close();
    writeConfig(
      dir,
      database,
      `name: z.string().min(1), colour: z.string().optional(), status: z.enum(["draft", "live"]).default("draft")`,
    );
    const migrated = run(dir, "migrate", "--push");
    expect(migrated.code, migrated.stderr).toBe(0);
    const check = crudkit({ database: database as never, resources: [] });
    const rows = await check.db.selectFrom("product").select(["id", "status"]).execute();
    await check.close();
    expect(rows).toEqual([{ id: "old-row", status: "draft" }]);
  });

  it("unique fields and indexes: refused over duplicates, then created, then dropped when removed", async () => {
    const fields = `name: z.string().min(1), colour: z.string().optional(), status: z.enum(["draft", "live"]).default("draft")`;
    const app = crudkit({ database: database as never, resources: [] });
    const copy = { ...row(dialect.name), id: "copy-row" };
    await app.db
      .insertInto("product")
      .values({ ...copy, name: "Old", status: "draft" })
      .execute();
    writeConfig(dir, database, fields, "crudkit.config.ts", `, unique: ["name"], indexes: ["status"]`);
    const refused = run(dir, "migrate", "--push");
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('Cannot make name unique on "product": some rows already share a value');
    expect(await indexes(database)).not.toContain("product_name_uniq");

    await app.db.deleteFrom("product").where("id", "=", "copy-row").execute();
    await app.close();
    const generated = run(dir, "generate", "--out", "unique");
    expect(generated.code, generated.stderr).toBe(0);
    const [file] = readdirSync(join(dir, "unique"));
    const sqlText = readFileSync(join(dir, "unique", file!), "utf8");
    expect(sqlText).toMatch(
      /create unique index [`"]product_name_uniq[`"] on [`"]product[`"] \([`"]name[`"]\)/,
    );
    expect(sqlText).toMatch(/create index [`"]product_status_id_idx[`"]/);
    expect(run(dir, "migrate", "--push").code).toBe(0);
    expect(await indexes(database)).toEqual(
      expect.arrayContaining(["product_name_uniq", "product_status_id_idx"]),
    );
    expect(run(dir, "migrate", "--push").stdout.trim()).toBe(
      "nothing to migrate: the database matches the schema",
    );

    writeConfig(dir, database, fields);
    const dropped = run(dir, "migrate", "--push");
    expect(dropped.code, dropped.stderr).toBe(0);
    expect(dropped.stdout).toContain("drop index product_name_uniq");
    const left = await indexes(database);
    expect(left).not.toContain("product_name_uniq");
    expect(left).not.toContain("product_status_id_idx");
  });
});

/** An author and a post whose `authorId` is `field` (a plain string, or a reference). */
function writeBlogConfig(dir: string, database: { provider: string; url: string }, field: string) {
  writeFileSync(
    join(dir, "crudkit.config.ts"),
    `import { createResource, crudkit, references, withId } from "crudkit-api";
import { z } from "zod";

const author = createResource({ name: "author", schema: withId({ name: z.string() }) });
const post = createResource({ name: "post", schema: withId({ title: z.string(), authorId: ${field} }) });

export default crudkit({ database: ${JSON.stringify(database)}, resources: [author, post] });
`,
  );
}

/**
 * A blog migrated with `authorId` a plain string, holding author "ann" and post "p1" (titled
 * `title`); `at` gives further rows their timestamps.
 */
async function blogWithRows(dialect: TestDialect, title: string) {
  const database = (await dialect.fresh()) as { provider: string; url: string };
  const dir = project();
  writeBlogConfig(dir, database, "z.string()");
  expect(run(dir, "migrate", "--push").code).toBe(0);
  const app = crudkit({ database: database as never, resources: [] });
  const stamp = dialect.name === "sqlite" ? "2026-01-01T00:00:00.000Z" : new Date("2026-01-01T00:00:00Z");
  const at = { createdAt: stamp, updatedAt: stamp };
  await app.db
    .insertInto("author")
    .values({ id: "ann", name: "Ann", ...at })
    .execute();
  await app.db
    .insertInto("post")
    .values({ id: "p1", title, authorId: "ann", ...at })
    .execute();
  return { database, dir, app, at };
}

forEachDialect((dialect) => {
  it("references: migrate adds the foreign key over existing rows, refuses orphans, and drops it again", async () => {
    const { database, dir, app, at } = await blogWithRows(dialect, "kept");
    await app.db
      .insertInto("post")
      .values({ id: "p2", title: "orphan", authorId: "nobody", ...at })
      .execute();

    writeBlogConfig(dir, database, `references("author", { onDelete: "cascade" })`);
    const refused = run(dir, "migrate", "--push");
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(
      'Cannot add the reference post.authorId → author: in 1 row(s) of "post", authorId names no existing "author".',
    );
    await app.db.deleteFrom("post").where("id", "=", "p2").execute();

    const generated = run(dir, "generate", "--out", "fk");
    expect(generated.code, generated.stderr).toBe(0);
    const [file] = readdirSync(join(dir, "fk"));
    const text = readFileSync(join(dir, "fk", file!), "utf8");
    expect(text).toMatch(
      /foreign key \([`"]authorId[`"]\) references [`"]author[`"] \([`"]id[`"]\) on delete cascade/,
    );
    const migrated = run(dir, "migrate", "--push");
    expect(migrated.code, migrated.stderr).toBe(0);
    expect(run(dir, "migrate", "--push").stdout.trim()).toBe(
      "nothing to migrate: the database matches the schema",
    );
    // The rows survived (SQLite rebuilt the table), and the key now holds.
    expect(await app.db.selectFrom("post").select(["id", "authorId"]).execute()).toEqual([
      { id: "p1", authorId: "ann" },
    ]);
    await expect(
      app.db
        .insertInto("post")
        .values({ id: "p3", title: "x", authorId: "nobody", ...at })
        .execute(),
    ).rejects.toThrow();

    writeBlogConfig(dir, database, "z.string()");
    const dropped = run(dir, "migrate", "--push");
    expect(dropped.code, dropped.stderr).toBe(0);
    expect(dropped.stdout).toMatch(/drop foreign key post\.authorId|drop the reference of post\.authorId/);
    expect(run(dir, "migrate", "--push").stdout.trim()).toBe(
      "nothing to migrate: the database matches the schema",
    );
    await app.db
      .insertInto("post")
      .values({ id: "p4", title: "free", authorId: "nobody", ...at })
      .execute();
    await app.close();
  });
});

forEachDialect((dialect) => {
  it("review then apply: migrate applies the edited file, refuses once an applied file changes, and --check catches drift", async () => {
    const database = (await dialect.fresh()) as { provider: string; url: string };
    const dir = project();
    writeConfig(dir, database, `name: z.string().min(1), price: z.number().min(0)`);
    expect(run(dir, "generate").code).toBe(0);
    const [file] = readdirSync(join(dir, "migrations"));
    expect(file).toMatch(/^\d{8}_\d{9}_[0-9a-f]{4}_create_table_product\.sql$/);
    const path = join(dir, "migrations", file!);
    const generated = readFileSync(path, "utf8");
    expect(generated).toMatch(/^-- checksum as generated: [0-9a-f]{64}$/m);
    // The review: price gets a default the schema does not have.
    const edited = generated.replace(/([`"]price[`"] [a-z ]+?) not null/, "$1 default 7 not null");
    expect(edited).not.toBe(generated);
    writeFileSync(path, edited);
    const status = run(dir, "status");
    expect(status.stdout).toContain(`pending  ${file!.slice(0, -4)}`);
    const applied = run(dir, "migrate");
    expect(applied.code, applied.stderr).toBe(0);
    expect(applied.stdout).toContain(`applied ${file!.slice(0, -4)}`);
    expect(applied.stdout).toContain("in sync: the database matches the resources");
    const app = crudkit({ database: database as never, resources: [] });
    const stamp = dialect.name === "sqlite" ? "2026-01-01T00:00:00.000Z" : new Date("2026-01-01T00:00:00Z");
    await app.db
      .insertInto("product")
      .values({ id: "p", name: "n", createdAt: stamp, updatedAt: stamp })
      .execute();
    expect(Number((await app.db.selectFrom("product").select("price").executeTakeFirst())?.price)).toBe(7);
    await app.close();
    expect(run(dir, "migrate").stdout).toContain("no pending migration files");

    // Changing a file once applied stops migrate, until it is put back.
    writeFileSync(path, edited.replace("default 7", "default 8"));
    const refused = run(dir, "migrate");
    expect(refused.code).toBe(3);
    expect(refused.stderr).toContain(`Refused: ${file!.slice(0, -4)} changed after it was applied`);
    expect(run(dir, "status").stdout).toContain("(CHANGED since applied)");
    writeFileSync(path, `${edited}\n-- a comment changes nothing\n`);
    expect(run(dir, "migrate").code).toBe(0);

    // A new field without a migration is drift: reported, and with --check a failure.
    writeConfig(
      dir,
      database,
      `name: z.string().min(1), price: z.number().min(0), colour: z.string().optional()`,
    );
    const drift = run(dir, "migrate", "--check");
    expect(drift.code).toBe(4);
    expect(drift.stdout).toContain("not in sync: the database differs from the resources in 1 step(s):");
    expect(drift.stdout).toContain("add column product.colour");
    expect(run(dir, "status").stdout).toContain("add column product.colour");
    expect(run(dir, "generate").code).toBe(0);
    expect(readdirSync(join(dir, "migrations"))).toHaveLength(2);
    const next = run(dir, "migrate", "--check");
    expect(next.code, next.stdout + next.stderr).toBe(0);
    expect(next.stdout).toMatch(/applied \d{8}_\d{9}_[0-9a-f]{4}_add_column_product_colour: 1 statement/);
    const version = run(dir, "--version");
    expect(version.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
  });
});

describe("crudkit gc", () => {
  it("removes never-attached uploads past --older-than; --dry-run lists them; an app without fileRef collects nothing", async () => {
    const dir = project();
    const url = `file:${join(dir, "gc.db")}`;
    const uploads = join(dir, "uploads");
    mkdirSync(uploads);
    const config = (withFiles: boolean) =>
      writeFileSync(
        join(dir, "crudkit.config.ts"),
        `import { createResource, crudkit, fileRef, withId } from "crudkit-api";
import { upload } from "crudkit-api/plugins";
import { z } from "zod";

const doc = createResource({ name: "doc", schema: withId({ ${withFiles ? "file: fileRef().optional()" : "name: z.string().optional()"} }) });

export default crudkit({
  database: { provider: "sqlite", url: ${JSON.stringify(url)} },
  autoMigrate: true,
  resources: [doc],
  plugins: [upload({ uploadDir: ${JSON.stringify(uploads)}, access: { upload: true } })],
});
`,
      );
    config(true);
    expect(run(dir, "migrate").code).toBe(0);
    const app = crudkit({ database: { provider: "sqlite", url }, resources: [] });
    await app.db
      .insertInto("uploaded_files")
      .values({
        id: "old-file",
        filename: "old.txt",
        original_name: "old.txt",
        mime_type: "text/plain",
        size: 3,
        path: "old.txt",
        uploaded_at: "2020-01-01T00:00:00.000Z",
      })
      .execute();
    writeFileSync(join(uploads, "old.txt"), "old");
    const dry = run(dir, "gc", "--older-than", "24h", "--dry-run");
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toContain("would remove old-file (old.txt, 3 bytes, never attached)");
    expect(readdirSync(uploads)).toEqual(["old.txt"]);
    const bad = run(dir, "gc", "--older-than", "yesterday");
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("--older-than takes a duration such as 90s, 30m, 24h or 7d");
    const real = run(dir, "gc", "--older-than", "24h");
    expect(real.stdout).toContain("removed 1 file(s), 3 bytes");
    expect(readdirSync(uploads)).toEqual([]);
    expect(await app.db.selectFrom("uploaded_files").selectAll().execute()).toEqual([]);
    await app.close();
    config(false);
    expect(run(dir, "gc", "--older-than", "1s").stdout).toContain(
      "nothing to collect: no resource has a fileRef field",
    );
  });
});

describe("CLI errors", () => {
  it("no config found", () => {
    const result = run(project(), "migrate");
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^crudkit: No crudkit config found in .*crudkit\.config\.ts/);
  });

  it("a config without an app", () => {
    const dir = project();
    writeFileSync(join(dir, "crudkit.config.mjs"), "export const nothing = 1;\n");
    const result = run(dir, "generate");
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('does not export a crudkit app: export it as default or as "app"');
  });

  it("a database that cannot be reached", () => {
    const dir = project();
    writeConfig(dir, { provider: "postgres", url: "postgres://nobody@127.0.0.1:9/none" }, "name: z.string()");
    const result = run(dir, "migrate");
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^crudkit: Cannot reach the database \(ECONNREFUSED\)/);
  });

  it("--config names another file; --help documents each command", () => {
    const dir = project();
    writeConfig(
      dir,
      { provider: "sqlite", url: `file:${join(dir, "db.sqlite")}` },
      "name: z.string()",
      "other.config.ts",
    );
    expect(run(dir, "migrate", "--config", "other.config.ts").code).toBe(0);
    for (const command of ["generate", "migrate"]) {
      const help = run(dir, command, "--help");
      expect(help.code).toBe(0);
      expect(help.stdout).toContain(`Usage: crudkit ${command}`);
      expect(help.stdout).toContain("--config <path>");
    }
    expect(run(dir, "migrate", "--help").stdout).toContain("--allow-destructive");
  });
});

async function indexes(database: { provider: string; url: string }): Promise<string[]> {
  const { sql } = await import("kysely");
  const app = crudkit({ database: database as never, resources: [] });
  const query =
    database.provider === "sqlite"
      ? sql<{ name: string }>`select name from sqlite_master where type = 'index'`
      : database.provider === "postgres"
        ? sql<{ name: string }>`select indexname as name from pg_indexes where schemaname = current_schema()`
        : sql<{
            name: string;
          }>`select index_name as name from information_schema.statistics where table_schema = database()`;
  const names = (await query.execute(app.db)).rows.map((r) => r.name);
  await app.close();
  return names;
}

function row(dialect: string) {
  const now = dialect === "sqlite" ? new Date().toISOString() : new Date();
  return { id: "old-row", name: "Old", createdAt: now, updatedAt: now };
}

forEachDialect((dialect) => {
  // Issue 45: adding a reference to a table that has rows. The key is added with the column (or
  // after it): no orphan check runs on a column that does not exist yet.
  it("adding a nullable reference, then a required one with a default, to a table with rows: migrate and autoMigrate", async () => {
    const { database, dir, app } = await blogWithRows(dialect, "t");

    // A new nullable reference, through generate and migrate.
    writeFileSync(
      join(dir, "crudkit.config.ts"),
      readFileSync(join(dir, "crudkit.config.ts"), "utf8").replace(
        "authorId: z.string() })",
        'authorId: z.string(), editorId: references("author").nullable().optional() })',
      ),
    );
    const status = run(dir, "status");
    expect(status.stderr).not.toMatch(/does not exist/);
    const generated = run(dir, "generate", "--out", "editor");
    expect(generated.code, generated.stderr).toBe(0);
    const migrated = run(dir, "migrate", "--push");
    expect(migrated.code, migrated.stderr).toBe(0);
    expect(run(dir, "migrate", "--push").stdout.trim()).toBe(
      "nothing to migrate: the database matches the schema",
    );
    await app.db.updateTable("post").set({ editorId: "ann" }).execute();
    await expect(app.db.updateTable("post").set({ editorId: "nobody" }).execute()).rejects.toThrow();

    // A required reference with a default, through autoMigrate at startup.
    const { createResource, references, withId } = await import("crudkit-api");
    const { z } = await import("zod");
    const author = createResource({ name: "author", schema: withId({ name: z.string() }) });
    const post = createResource({
      name: "post",
      schema: withId({
        title: z.string(),
        authorId: z.string(),
        editorId: references(author).nullable().optional(),
        reviewerId: references(author, { reverse: "reviewedPosts" }).default("ann"),
      }),
    });
    const started = crudkit({
      database: database as never,
      resources: [author, post],
      autoMigrate: true,
      log: () => {},
    });
    await started.ready;
    expect(await started.db.selectFrom("post").select(["id", "reviewerId"]).execute()).toEqual([
      { id: "p1", reviewerId: "ann" },
    ]);
    await expect(started.db.updateTable("post").set({ reviewerId: "nobody" }).execute()).rejects.toThrow();
    await started.close();
    await app.close();
  });
});

/** An author and a post with `extra` fields (a list of author ids, or none). */
function writeListConfig(dir: string, database: { provider: string; url: string }, extra: string) {
  writeFileSync(
    join(dir, "crudkit.config.ts"),
    `import { createResource, crudkit, referencesMany, withId } from "crudkit-api";
import { z } from "zod";

const author = createResource({ name: "author", schema: withId({ name: z.string() }) });
const post = createResource({ name: "post", schema: withId({ title: z.string()${extra} }) });

export default crudkit({ database: ${JSON.stringify(database)}, resources: [author, post] });
`,
  );
}

forEachDialect((dialect) => {
  it("a list of ids: generate and migrate add its junction table; removing it is destructive", async () => {
    const database = (await dialect.fresh()) as { provider: string; url: string };
    const dir = project();
    writeListConfig(dir, database, "");
    expect(run(dir, "migrate", "--push").code).toBe(0);

    writeListConfig(dir, database, `, authorIds: referencesMany("author", { maxItems: 5 })`);
    const generated = run(dir, "generate", "--out", "list");
    expect(generated.code, generated.stderr).toBe(0);
    const [file] = readdirSync(join(dir, "list"));
    const text = readFileSync(join(dir, "list", file!), "utf8");
    expect(text).toMatch(/create table [`"]post_authorIds[`"]/);
    expect(text).toMatch(/create unique index [`"]post_authorIds_owner_target_uniq[`"]/);
    expect(text).toMatch(/create index [`"]post_authorIds_target_idx[`"]/);
    expect(text).toMatch(/references [`"]author[`"] \([`"]id[`"]\) on delete cascade/);
    const migrated = run(dir, "migrate", "--push");
    expect(migrated.code, migrated.stderr).toBe(0);
    expect(run(dir, "migrate", "--push").stdout.trim()).toBe(
      "nothing to migrate: the database matches the schema",
    );
    expect(Object.keys(await inspect(database))).toContain("post_authorIds");

    writeListConfig(dir, database, "");
    const refused = run(dir, "migrate", "--push");
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("drop table post_authorIds");
    expect(Object.keys(await inspect(database))).toContain("post_authorIds");
    const dropped = run(dir, "migrate", "--push", "--allow-destructive");
    expect(dropped.code, dropped.stderr).toBe(0);
    expect(Object.keys(await inspect(database))).not.toContain("post_authorIds");
  });
});
