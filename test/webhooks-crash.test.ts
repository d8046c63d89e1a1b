// kill -9 of an app in the middle of 4-writer create load, then a restart on the same database:
// every create acknowledged before the kill is delivered, and every event delivered is of a
// record that was stored (an event exists if and only if its change committed).

import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { Kysely, MysqlDialect, PostgresDialect, SqliteDialect } from "kysely";
import { afterEach, expect, it } from "vitest";
import { forEachDialect, type TestDialect } from "./dialects.ts";
import { startReceiver } from "./webhook-receiver.ts";

const SECRET = `whsec_${Buffer.from("a webhook secret of 32 bytes!!!!").toString("base64")}`;
const CHILD = fileURLToPath(new URL("./child/webhook-app.ts", import.meta.url));

let children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children) child.kill("SIGKILL");
  children = [];
});

/** Starts the app in a process of its own; resolves with its port once it listens. */
function startApp(dialect: TestDialect["name"], url: string, receiverUrl: string, directUrl = "") {
  const child = spawn(
    process.execPath,
    ["--import", "tsx", CHILD, dialect, url, receiverUrl, SECRET, directUrl],
    {
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  children.push(child);
  return new Promise<{ child: ChildProcess; port: number }>((resolve, reject) => {
    let output = "";
    child.stdout!.on("data", (chunk) => {
      output += String(chunk);
      const match = /listening (\d+)/.exec(output);
      if (match) resolve({ child, port: Number(match[1]) });
    });
    child.stderr!.on("data", (chunk) => {
      output += String(chunk);
    });
    child.on("exit", (code) => reject(new Error(`the app exited (${code}) before listening: ${output}`)));
  });
}

async function storedIds(dialect: TestDialect["name"], url: string): Promise<Set<string>> {
  const db = new Kysely<any>({ dialect: await dialectFor(dialect, url) });
  try {
    const rows = await db.selectFrom("item").select("id").execute();
    return new Set(rows.map((r) => String(r.id)));
  } finally {
    await db.destroy();
  }
}

async function dialectFor(name: TestDialect["name"], url: string) {
  if (name === "postgres") {
    const { default: pg } = await import("pg");
    return new PostgresDialect({ pool: new pg.Pool({ connectionString: url, max: 1 }) });
  }
  if (name === "mysql") {
    const { createPool } = await import("mysql2");
    return new MysqlDialect({ pool: createPool({ uri: url, connectionLimit: 1 }) });
  }
  const { default: Database } = await import("better-sqlite3");
  return new SqliteDialect({ database: new Database(url.replace(/^file:/, "")) });
}

forEachDialect((dialect) => {
  it("delivers every acknowledged create after kill -9 and a restart, and nothing that was not stored", async () => {
    const receiver = await startReceiver();
    const { url, directUrl } = (await dialect.fresh()) as { url: string; directUrl?: string };
    try {
      const first = await startApp(dialect.name, url, receiver.url, directUrl);
      const acknowledged = new Set<string>();
      let stop = false;
      const writer = async (w: number) => {
        for (let i = 0; !stop; i++) {
          try {
            const response = await fetch(`http://127.0.0.1:${first.port}/api/item`, {
              method: "POST",
              headers: { "content-type": "application/json" },
              body: JSON.stringify({ name: `w${w}-${i}` }),
            });
            if (response.status === 201) acknowledged.add(((await response.json()) as { id: string }).id);
          } catch {
            return; // the app is gone: this write was not acknowledged
          }
        }
      };
      const writers = [0, 1, 2, 3].map(writer);
      await new Promise((r) => setTimeout(r, 1500));
      first.child.kill("SIGKILL");
      stop = true;
      await Promise.all(writers);
      expect(acknowledged.size).toBeGreaterThan(20);

      await startApp(dialect.name, url, receiver.url, directUrl);
      const stored = await storedIds(dialect.name, url);
      // Every acknowledged create was stored, and every stored one (acknowledged or not) is delivered.
      for (const id of acknowledged) expect(stored.has(id)).toBe(true);
      const delivered = () => new Set(receiver.deliveries.map((d) => d.payload.data.id as string));
      const until = Date.now() + 30_000;
      while ([...stored].some((id) => !delivered().has(id)) && Date.now() < until)
        await new Promise((r) => setTimeout(r, 100));
      const got = delivered();
      expect([...acknowledged].filter((id) => !got.has(id))).toEqual([]);
      expect([...stored].filter((id) => !got.has(id))).toEqual([]);
      // …and no event of a write that was not stored.
      expect([...got].filter((id) => !stored.has(id))).toEqual([]);
      for (const delivery of receiver.deliveries) expect(delivery.payload.type).toBe("item.create");
    } finally {
      await receiver.close();
    }
  }, 90_000);
});
