// The hand-written reference for the scale bench on PostgreSQL: node:http and pg, no framework,
// answering what the scale scenarios ask (GET /api/products, GET /api/product/:id) as a careful
// developer would: the same indexes as the example (each ending in id), a pg_trgm GIN index for
// search, reltuples for an estimated count, keyset pages by row comparison. It makes its own table on start.
//   PORT, DATABASE_URL (postgres://…), API_KEY as for the example server.

import { createHash, timingSafeEqual } from "node:crypto";
import { createServer, type ServerResponse } from "node:http";
import pg from "pg";
import { decodeCursor, fail, pageBody, send } from "./reference-shared.ts";

const port = Number(process.env.PORT ?? 3002);
const digest = (key: string) => createHash("sha256").update(key).digest();
const KEY = digest(process.env.API_KEY ?? "reference-key");
const STATUSES = new Set(["active", "inactive", "draft"]);
const SORTABLE = new Set(["id", "name", "price", "status", "createdAt", "updatedAt"]);

// Timestamps as the API sends them: ISO text, not Date objects.
pg.types.setTypeParser(1184, (text) => new Date(text).toISOString());
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });

await pool.query(`create extension if not exists pg_trgm`);
await pool.query(`create table if not exists "product" (
  "id" text primary key, "name" text not null, "price" double precision not null,
  "status" text not null check ("status" in ('active', 'inactive', 'draft')),
  "createdAt" timestamptz not null, "updatedAt" timestamptz not null)`);
await pool.query(`create index if not exists "product_createdAt_id_idx" on "product" ("createdAt", "id")`);
await pool.query(
  `create index if not exists "product_status_createdAt_id_idx" on "product" ("status", "createdAt", "id")`,
);
await pool.query(`create index if not exists "product_price_id_idx" on "product" ("price", "id")`);
await pool.query(
  `create index if not exists "product_name_trgm_idx" on "product" using gin ("name" gin_trgm_ops)`,
);

/**
 * A parameterised query, as node-postgres documents it. Not a named prepared statement: crudkit
 * (through Kysely) does not keep plans per connection either, so the ratio compares the same
 * protocol. Named statements would make both about 10% faster on short queries.
 */
const query = (text: string, values: unknown[]) => pool.query(text, values);

async function list(res: ServerResponse, params: URLSearchParams): Promise<void> {
  const page = Number(params.get("page") ?? 1);
  const limit = Math.min(Number(params.get("limit") ?? 10), 100);
  const search = params.get("search") || undefined;
  const sortBy = params.get("sortBy") || "createdAt";
  const sortOrder = (params.get("sortOrder") ?? "desc").toLowerCase();
  const count = params.get("count") ?? "exact";
  const cursorText = params.get("cursor");
  const cursor = cursorText ? decodeCursor(cursorText) : undefined;
  const status = params.get("filter[status]");
  if (!(page >= 1) || !Number.isInteger(page) || !(limit >= 1) || !Number.isInteger(limit))
    return fail(res, 400, "BAD_REQUEST", "page/limit");
  if (!SORTABLE.has(sortBy) || (sortOrder !== "asc" && sortOrder !== "desc"))
    return fail(res, 400, "BAD_REQUEST", "sort");
  if ((count !== "exact" && count !== "estimated" && count !== "none") || (cursorText && !cursor))
    return fail(res, 400, "BAD_REQUEST", "count/cursor");
  if (status !== null && !STATUSES.has(status)) return fail(res, 400, "BAD_REQUEST", "filter");
  const conditions: string[] = [];
  const args: unknown[] = [];
  if (search) {
    args.push(`%${search.replace(/[\\%_]/g, "\\$&")}%`);
    conditions.push(`"name" ilike $${args.length}`);
  }
  if (status !== null) {
    args.push(status);
    conditions.push(`"status" = $${args.length}`);
  }
  const where = conditions.length ? `where ${conditions.join(" and ")}` : "";
  let total: number | null = null;
  if (count === "exact" || (count === "estimated" && conditions.length > 0)) {
    total = Number((await query(`select count(*) as total from "product" ${where}`, args)).rows[0].total);
  } else if (count === "estimated") {
    const { rows } = await query(
      `select reltuples as total from pg_class where oid = '"product"'::regclass`,
      [],
    );
    total = Math.max(0, Number(rows[0].total));
  }
  const page1 = [...args];
  let keyset = "";
  if (cursor) {
    page1.push(cursor[0], cursor[1]);
    keyset = `${where ? " and" : "where"} ("${sortBy}", "id") ${sortOrder === "asc" ? ">" : "<"} ($${page1.length - 1}, $${page1.length})`;
  }
  const readMore = total === null || cursor !== undefined;
  page1.push(readMore ? limit + 1 : limit);
  let tail = `limit $${page1.length}`;
  if (!cursor) {
    page1.push((page - 1) * limit);
    tail += ` offset $${page1.length}`;
  }
  const { rows } = await query(
    `select * from "product" ${where}${keyset} order by "${sortBy}" ${sortOrder}, "id" ${sortOrder} ${tail}`,
    page1,
  );
  send(res, 200, pageBody(rows, { page, limit, total, cursor, sortBy }));
}

async function read(res: ServerResponse, id: string): Promise<void> {
  const { rows } = await query(`select * from "product" where "id" = $1`, [id]);
  if (rows.length === 0) return fail(res, 404, "NOT_FOUND", "No product with that id.");
  send(res, 200, rows[0]);
}

createServer((req, res) => {
  const key = req.headers["x-api-key"];
  if (typeof key !== "string" || !timingSafeEqual(digest(key), KEY))
    return fail(res, 401, "UNAUTHORIZED", "The API key is not valid.");
  const url = req.url ?? "/";
  const q = url.indexOf("?");
  const path = q === -1 ? url : url.slice(0, q);
  const answer =
    path === "/api/products" && req.method === "GET"
      ? list(res, new URLSearchParams(q === -1 ? "" : url.slice(q + 1)))
      : path.startsWith("/api/product/") && req.method === "GET"
        ? read(res, decodeURIComponent(path.slice("/api/product/".length)))
        : Promise.resolve(fail(res, 404, "NOT_FOUND", "No such route."));
  answer.catch(() => fail(res, 500, "INTERNAL_ERROR", "The query failed."));
}).listen(port, "127.0.0.1", () => console.log(`PostgreSQL reference server on http://127.0.0.1:${port}`));
