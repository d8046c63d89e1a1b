// The yardstick of the many-to-many figure (bench/data-api.ts): the two pages it compares, written
// by hand on node:http and the database's own driver, on the database the API serves. A page of
// 100 articles in createdAt order with its total, each article with its list of label ids (the
// junction table, in position order), and then either its author (one statement by ids) or its 5
// labels (one statement by the distinct ids). The same statements crudkit makes, with nothing
// around them: the ratio of its two pages is what any server gets that answers the same records.

import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

const PAGE = 100;

/** What the pages need of a database: rows for a statement with `?` placeholders. */
type Rows = (sql: string, parameters: unknown[]) => Promise<Record<string, any>[]>;

/** Serves GET /articles?page=N&expand=author|labels on a free port of 127.0.0.1; resolves with its URL. */
export async function serveExpandReference(
  databaseUrl: string,
): Promise<{ url: string; close(): Promise<void> }> {
  const { rows, close } = await connect(databaseUrl);
  const server: Server = createServer((request, response) => {
    const url = new URL(request.url ?? "/", "http://localhost");
    const page = Math.max(1, Number(url.searchParams.get("page") ?? 1));
    const expand = url.searchParams.get("expand");
    answer(rows, page, expand === "labels" ? "labels" : "author").then(
      (body) => {
        response.writeHead(200, { "content-type": "application/json", "content-length": body.length });
        response.end(body);
      },
      () => {
        response.writeHead(500);
        response.end();
      },
    );
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    async close() {
      await new Promise((resolve) => server.close(resolve));
      await close();
    },
  };
}

async function answer(rows: Rows, page: number, expand: "author" | "labels"): Promise<Buffer> {
  const items = await rows(`select * from article order by "createdAt", id limit ${PAGE} offset ?`, [
    (page - 1) * PAGE,
  ]);
  const [{ n }] = (await rows("select count(*) as n from article", [])) as [{ n: number }];
  const lists = new Map<string, string[]>(items.map((a) => [a.id, []]));
  if (items.length > 0)
    for (const link of await rows(
      `select owner, target from "article_labelIds" where owner in (${marks(items.length)}) order by owner, position`,
      items.map((a) => a.id),
    ))
      lists.get(link.owner)!.push(link.target);
  for (const item of items) item.labelIds = lists.get(item.id);
  const ids =
    expand === "author"
      ? [...new Set(items.map((a) => a.authorId as string))]
      : [...new Set(items.flatMap((a) => a.labelIds as string[]))];
  const table = expand === "author" ? "author" : "label";
  const found = ids.length
    ? await rows(`select * from ${table} where id in (${marks(ids.length)})`, ids)
    : [];
  const byId = new Map(found.map((row) => [row.id, row]));
  for (const item of items)
    if (expand === "author") item.author = byId.get(item.authorId);
    else item.labels = (item.labelIds as string[]).map((id) => byId.get(id));
  return Buffer.from(JSON.stringify({ items, total: Number(n) }));
}

const marks = (count: number) => Array.from({ length: count }, () => "?").join(", ");

async function connect(databaseUrl: string): Promise<{ rows: Rows; close(): Promise<void> }> {
  if (databaseUrl.startsWith("postgres")) {
    const { default: pg } = await import("pg");
    // Dates as the ISO text the API answers (timestamptz arrives as text, as crudkit reads it).
    const pool = new pg.Pool({ connectionString: databaseUrl, max: 10 });
    pool.on("connect", (client) => {
      client.setTypeParser(1184, (value: string) => new Date(value).toISOString());
    });
    const numbered = (sql: string) => {
      let n = 0;
      return sql.replace(/\?/g, () => `$${++n}`);
    };
    return {
      rows: async (sql, parameters) => (await pool.query(numbered(sql), parameters)).rows,
      close: () => pool.end(),
    };
  }
  const { default: Database } = await import("better-sqlite3");
  const db = new Database(databaseUrl.replace(/^file:/, ""), { readonly: true });
  const statements = new Map<string, ReturnType<typeof db.prepare>>();
  return {
    rows: async (sql, parameters) => {
      let statement = statements.get(sql);
      if (!statement) {
        statement = db.prepare(sql);
        statements.set(sql, statement);
      }
      return statement.all(parameters) as Record<string, any>[];
    },
    close: async () => {
      db.close();
    },
  };
}
