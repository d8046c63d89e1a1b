// The benchmark's yardstick: the example API written by hand on node:http and better-sqlite3
// prepared statements. Same routes, same checks (API key, validation, unknown fields, ids,
// timestamps, search, pagination), same SQLite settings and schema, and like the example's audit()
// an audit row written in each write's transaction. Not part of the library.
//   PORT, DATA_DIR, API_KEY, AUDIT (on; `off` writes no audit rows) as for the example server;
//   COALESCE_REFERENCE=on writes answers as serve() does (bench --coalesced-reference).

import { createHash, timingSafeEqual } from "node:crypto";
import { mkdirSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { extname, join } from "node:path";
import Database from "better-sqlite3";
import { uuidv7 } from "../src/core/id.ts";
import { SQLITE_PRAGMAS } from "../src/db/engines/sqlite/driver.ts";
import { coalescingResponse } from "../src/node/coalescing-response.ts";
import { reviewRoutes } from "./reference-reviews.ts";
import { decodeCursor, fail, pageBody, send } from "./reference-shared.ts";

const port = Number(process.env.PORT ?? 3001);
const dataDir = process.env.DATA_DIR ?? "./data-reference";
const digest = (key: string) => createHash("sha256").update(key).digest();
/** The example's two keys: the admin's, and a user's without roles (who sees only her own orders). */
const KEYS = [
  { digest: digest(process.env.API_KEY ?? "reference-key"), user: "example-user", admin: true },
  {
    digest: digest(process.env.USER_API_KEY ?? "reference-user-key"),
    user: "example-customer",
    admin: false,
  },
];
type Caller = (typeof KEYS)[number];
const BODY_LIMIT = 1024 * 1024;
const UPLOAD_LIMIT = 4 * Math.ceil(Number(process.env.MAX_FILE_SIZE ?? 10 * 1024 * 1024) / 3) + 1024 * 1024;
const uploadDir = join(dataDir, "uploads");
mkdirSync(uploadDir, { recursive: true });
const STATUSES = new Set(["active", "inactive", "draft"]);
const FIELDS = new Set(["id", "name", "price", "status"]);
const SORTABLE = new Set(["id", "name", "price", "status", "createdAt", "updatedAt"]);

mkdirSync(dataDir, { recursive: true });
const db = new Database(join(dataDir, "reference.db"));
for (const pragma of SQLITE_PRAGMAS) db.pragma(pragma);
db.exec(`create table if not exists "product" ("id" text primary key, "name" text not null, "price" real not null,
  "status" text not null check ("status" in ('active','inactive','draft')), "createdAt" text not null, "updatedAt" text not null);
  create index if not exists "product_createdAt_id_idx" on "product" ("createdAt", "id");
  create index if not exists "product_status_createdAt_id_idx" on "product" ("status", "createdAt", "id");
  create index if not exists "product_price_id_idx" on "product" ("price", "id");
  create virtual table if not exists "product_fts" using fts5("name", content='', contentless_delete=1, tokenize='trigram');
  create trigger if not exists "product_fts_insert" after insert on "product" begin
    insert into "product_fts" (rowid, "name") values (new.rowid, new."name"); end;
  create trigger if not exists "product_fts_delete" after delete on "product" begin
    delete from "product_fts" where rowid = old.rowid; end;
  create trigger if not exists "product_fts_update" after update of "name" on "product" begin
    delete from "product_fts" where rowid = old.rowid;
    insert into "product_fts" (rowid, "name") values (new.rowid, new."name"); end`);
const lastRowid = db.prepare(`select max(rowid) as last from "product"`);

db.exec(`create table if not exists "uploaded_files" ("id" text primary key, "filename" text not null, "original_name" text not null,
  "mime_type" text not null, "size" integer not null, "path" text not null, "url" text, "uploaded_by" text, "uploaded_at" text, "metadata" text)`);
const insertFile = db.prepare(`insert into "uploaded_files" values (?,?,?,?,?,?,?,?,?,?)`);
db.exec(`create table if not exists "audit_logs" ("id" text primary key, "created_at" text not null, "resource" text not null,
  "operation" text not null, "record_id" text, "user_id" text, "source" text not null, "ip" text, "user_agent" text,
  "before" text, "after" text, "changes" text, "seq" integer, "hash" text);
  create index if not exists "audit_logs_seq_idx" on "audit_logs" ("seq");
  create table if not exists "audit_chain" ("id" text primary key, "seq" integer not null, "hash" text not null);
  insert or ignore into "audit_chain" values ('audit', 0, '${"0".repeat(64)}');
  create index if not exists "audit_logs_created_at_id_idx" on "audit_logs" ("created_at", "id");
  create index if not exists "audit_logs_resource_idx" on "audit_logs" ("resource", "operation", "created_at");
  create index if not exists "audit_logs_record_id_idx" on "audit_logs" ("record_id", "created_at");
  create index if not exists "audit_logs_user_id_idx" on "audit_logs" ("user_id", "created_at")`);
db.exec(`create table if not exists "order" ("id" text primary key, "ownerId" text, "item" text not null,
  "quantity" integer not null, "status" text not null check ("status" in ('open','paid','shipped')), "cost" real,
  "createdAt" text not null, "updatedAt" text not null);
  create index if not exists "order_createdAt_id_idx" on "order" ("createdAt", "id");
  create index if not exists "order_ownerId_createdAt_id_idx" on "order" ("ownerId", "createdAt", "id");
  create index if not exists "order_ownerId_status_id_idx" on "order" ("ownerId", "status", "id")`);
const insertOrder = db.prepare(`insert into "order" values (?,?,?,?,?,?,?,?)`);
const ORDER_STATUSES = new Set(["open", "paid", "shipped"]);
const ORDER_FIELDS = new Set(["id", "ownerId", "item", "quantity", "status", "cost"]);
const reviews = reviewRoutes(db);
const insertAudit = db.prepare(`insert into "audit_logs" values (?,?,?,?,?,?,?,?,?,?,?,?,?,?)`);
// The audit log's hash chain, as audit() keeps it: the head row read, the entry linked, the head moved.
const chainHead = db.prepare(`select "seq", "hash" from "audit_chain" where "id" = 'audit'`);
const moveHead = db.prepare(`update "audit_chain" set "seq" = ?, "hash" = ? where "id" = 'audit'`);
// OUTBOX=on: one webhook event per write, in its transaction, with the indexes webhooks() keeps.
const OUTBOX = process.env.OUTBOX === "on";
db.exec(`create table if not exists "webhook_events" ("id" text primary key, "endpoint" text not null, "type" text not null,
  "queue" text not null, "body" text not null, "created_at" text not null, "status" text not null, "attempts" integer not null,
  "next_attempt_at" text not null, "last_error" text, "delivered_at" text);
  create index if not exists "webhook_events_claim_order_idx" on "webhook_events" ("status", "next_attempt_at", "id");
  create index if not exists "webhook_events_queue_idx" on "webhook_events" ("status", "queue", "id")`);
const insertEvent = db.prepare(
  `insert into "webhook_events" ("id","endpoint","type","queue","body","created_at","status","attempts","next_attempt_at") values (?,?,?,?,?,?,'pending',0,?)`,
);

/** The audit row the example's audit() writes, with the changed fields of an update. */
const AUDITED = process.env.AUDIT !== "off";

function audit(
  req: IncomingMessage,
  resource: string,
  operation: string,
  recordId: string,
  before: Record<string, unknown> | null,
  after: Record<string, unknown> | null,
): void {
  if (!AUDITED) return;
  let changes: Record<string, { from: unknown; to: unknown }> | null = null;
  if (before && after) {
    changes = {};
    for (const key of Object.keys(after))
      if (before[key] !== after[key]) changes[key] = { from: before[key], to: after[key] };
  }
  const id = uuidv7();
  const createdAt = new Date().toISOString();
  const entry = [
    id,
    createdAt,
    resource,
    operation,
    recordId,
    "example-user",
    "http",
    req.socket.remoteAddress ?? null,
    req.headers["user-agent"] ?? null,
    before && JSON.stringify(before),
    after && JSON.stringify(after),
    changes && JSON.stringify(changes),
  ];
  const head = chainHead.get() as { seq: number; hash: string };
  const seq = head.seq + 1;
  const hash = createHash("sha256")
    .update(head.hash)
    .update(JSON.stringify([seq, ...entry]))
    .digest("hex");
  insertAudit.run(...entry, seq, hash);
  moveHead.run(seq, hash);
  if (OUTBOX) {
    const type = `${resource}.${operation}`;
    const body = JSON.stringify({
      type,
      timestamp: createdAt,
      data: { resource, operation, id: recordId, record: after ?? before },
    });
    insertEvent.run(uuidv7(), "example", type, `example ${resource}:${recordId}`, body, createdAt, createdAt);
  }
}
const insert = db.prepare(
  `insert into "product" ("id","name","price","status","createdAt","updatedAt") values (?,?,?,?,?,?)`,
);
const byId = db.prepare(`select * from "product" where "id" = ?`);
const remove = db.prepare(`delete from "product" where "id" = ? returning *`);
const updates = new Map<string, Database.Statement>();
const lists = new Map<
  string,
  { page: Database.Statement; count: Database.Statement; capped: Database.Statement }
>();

type Product = {
  id: string;
  name: string;
  price: number;
  status: string;
  createdAt: string;
  updatedAt: string;
};

function readBody(req: IncomingMessage, limit = BODY_LIMIT): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        req.destroy();
        reject(new Error("too large"));
      } else chunks.push(chunk);
    });
    req.on("end", () => {
      try {
        resolve(JSON.parse(Buffer.concat(chunks).toString("utf8")));
      } catch (error) {
        reject(error);
      }
    });
    req.on("error", reject);
  });
}

/** Checks a body; returns the problem, or undefined when valid. */
function invalid(body: Record<string, unknown>, partial: boolean): string | undefined {
  for (const key of Object.keys(body))
    if (!FIELDS.has(key) || (partial && key === "id")) return `Unknown field "${key}".`;
  if (!partial || "name" in body) if (typeof body.name !== "string" || body.name.length < 1) return "name";
  if (!partial || "price" in body) if (typeof body.price !== "number" || !(body.price >= 0)) return "price";
  if ("status" in body && !STATUSES.has(body.status as string)) return "status";
  if (!partial && "id" in body && (typeof body.id !== "string" || body.id.length < 1)) return "id";
  return undefined;
}

function authorized(req: IncomingMessage, res: ServerResponse): Caller | undefined {
  const key = req.headers["x-api-key"];
  if (typeof key !== "string") {
    fail(res, 403, "FORBIDDEN", "Access denied.");
    return undefined;
  }
  const sent = digest(key);
  const caller = KEYS.find((k) => timingSafeEqual(sent, k.digest));
  if (!caller) fail(res, 401, "UNAUTHORIZED", "The API key is not valid.");
  return caller;
}

async function create(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const body = (await readBody(req)) as Record<string, unknown>;
  if (typeof body !== "object" || body === null || Array.isArray(body))
    return fail(res, 400, "VALIDATION_ERROR", "Expected an object.");
  const problem = invalid(body, false);
  if (problem) return fail(res, 400, "VALIDATION_ERROR", problem);
  const now = new Date().toISOString();
  const product: Product = {
    id: (body.id as string) ?? uuidv7(),
    name: body.name as string,
    price: body.price as number,
    status: (body.status as string) ?? "draft",
    createdAt: now,
    updatedAt: now,
  };
  try {
    db.transaction(() => {
      insert.run(product.id, product.name, product.price, product.status, now, now);
      audit(req, "product", "create", product.id, null, product);
    })();
  } catch {
    return fail(res, 409, "CONFLICT", "Duplicate id.");
  }
  send(res, 201, product);
}

async function update(req: IncomingMessage, res: ServerResponse, id: string): Promise<void> {
  const body = (await readBody(req)) as Record<string, unknown>;
  if (typeof body !== "object" || body === null || Array.isArray(body))
    return fail(res, 400, "VALIDATION_ERROR", "Expected an object.");
  const problem = invalid(body, true);
  if (problem) return fail(res, 400, "VALIDATION_ERROR", problem);
  const columns = [...Object.keys(body).sort(), "updatedAt"];
  const key = columns.join(",");
  let statement = updates.get(key);
  if (!statement) {
    statement = db.prepare(
      `update "product" set ${columns.map((c) => `"${c}" = ?`).join(", ")} where "id" = ? returning *`,
    );
    updates.set(key, statement);
  }
  const row = db.transaction(() => {
    const before = byId.get(id) as Product | undefined;
    if (!before) return undefined;
    const after = statement.get(
      ...columns.map((c) => (c === "updatedAt" ? new Date().toISOString() : body[c])),
      id,
    ) as Product;
    audit(req, "product", "update", id, before, after);
    return after;
  })();
  if (!row) return fail(res, 404, "NOT_FOUND", "No such product.");
  send(res, 200, row);
}

/** The filters the bench sends, checked as the API checks them: status equality, a price range. */
function productFilter(query: URLSearchParams): { sql: string[]; args: unknown[] } | undefined {
  const sql: string[] = [];
  const args: unknown[] = [];
  for (const [name, value] of query) {
    if (!name.startsWith("filter[")) continue;
    if (name === "filter[status]" && STATUSES.has(value)) {
      sql.push(`"status" = ?`);
      args.push(value);
    } else if (
      (name === "filter[price][gte]" || name === "filter[price][lt]") &&
      /^\d+(\.\d+)?$/.test(value)
    ) {
      sql.push(`"price" ${name.endsWith("[gte]") ? ">=" : "<"} ?`);
      args.push(Number(value));
    } else return undefined;
  }
  return { sql, args };
}

/**
 * GET /api/products as a careful hand-written server would: search through the FTS5 trigram
 * index (3 characters or more) and the LIKE, counts by mode (estimated: the largest rowid past
 * 10,000 rows without a filter), pages by offset or by keyset cursor.
 */
function list(res: ServerResponse, query: URLSearchParams): void {
  const page = Number(query.get("page") ?? 1);
  const limit = Math.min(Number(query.get("limit") ?? 10), 100);
  const search = query.get("search") || undefined;
  const sortBy = query.get("sortBy") || "createdAt";
  const sortOrder = (query.get("sortOrder") ?? "desc").toLowerCase();
  const count = query.get("count") ?? "exact";
  const cursorText = query.get("cursor");
  const cursor = cursorText ? decodeCursor(cursorText) : undefined;
  if (!(page >= 1) || !Number.isInteger(page) || !(limit >= 1) || !Number.isInteger(limit)) {
    fail(res, 400, "BAD_REQUEST", "page/limit");
    return;
  }
  if (!SORTABLE.has(sortBy) || (sortOrder !== "asc" && sortOrder !== "desc")) {
    fail(res, 400, "BAD_REQUEST", "sort");
    return;
  }
  if ((count !== "exact" && count !== "estimated" && count !== "none") || (cursorText && !cursor)) {
    fail(res, 400, "BAD_REQUEST", "count/cursor");
    return;
  }
  const filter = productFilter(query);
  if (!filter) {
    fail(res, 400, "BAD_REQUEST", "filter");
    return;
  }
  const indexed = search !== undefined && [...search].length >= 3;
  const conditions = [
    ...(indexed ? [`rowid in (select rowid from "product_fts" where "product_fts" match ?)`] : []),
    ...(search ? [`"name" like ? escape '\\'`] : []),
    ...filter.sql,
  ];
  const past = sortOrder === "asc" ? ">" : "<";
  const key = `${sortBy}:${sortOrder}:${conditions.join(" and ")}:${cursor ? "c" : ""}`;
  let statements = lists.get(key);
  if (!statements) {
    const where = conditions.length ? `where ${conditions.join(" and ")}` : "";
    const keyset = cursor ? `${where ? " and" : "where"} ("${sortBy}", "id") ${past} (?, ?)` : "";
    statements = {
      page: db.prepare(
        `select * from "product" ${where}${keyset} order by "${sortBy}" ${sortOrder}, "id" ${sortOrder} limit ?${cursor ? "" : " offset ?"}`,
      ),
      count: db.prepare(`select count(*) as total from "product" ${where}`),
      capped: db.prepare(`select count(*) as total from (select 1 from "product" ${where} limit 10001)`),
    };
    lists.set(key, statements);
  }
  const args = [
    ...(indexed ? [`"${search.replaceAll('"', '""')}"`] : []),
    ...(search ? [`%${search.replace(/[\\%_]/g, "\\$&")}%`] : []),
    ...filter.args,
  ];
  let total: number | null = null;
  if (count === "exact") total = (statements.count.get(...args) as { total: number }).total;
  else if (count === "estimated" && conditions.length === 0) {
    const last = (lastRowid.get() as { last: number | null }).last ?? 0;
    total = last > 10_000 ? last : (statements.count.get(...args) as { total: number }).total;
  } else if (count === "estimated") {
    total = (statements.capped.get(...args) as { total: number }).total;
    if (total > 10_000) total = (statements.count.get(...args) as { total: number }).total;
  }
  const readMore = total === null || cursor;
  const rows = (
    cursor
      ? statements.page.all(...args, cursor[0], cursor[1], limit + 1)
      : statements.page.all(...args, readMore ? limit + 1 : limit, (page - 1) * limit)
  ) as Record<string, unknown>[];
  send(res, 200, pageBody(rows, { page, limit, total, cursor, sortBy }));
}

/** POST /api/order: the owner is the caller (an admin may name another), `cost` admins only. */
async function createOrder(req: IncomingMessage, res: ServerResponse, caller: Caller): Promise<void> {
  const body = (await readBody(req)) as Record<string, unknown>;
  if (typeof body !== "object" || body === null || Array.isArray(body))
    return fail(res, 400, "VALIDATION_ERROR", "Expected an object.");
  for (const key of Object.keys(body))
    if (!ORDER_FIELDS.has(key)) return fail(res, 400, "VALIDATION_ERROR", key);
  if ("cost" in body && !caller.admin) return fail(res, 403, "FORBIDDEN", "cost");
  const ownerId = body.ownerId ?? caller.user;
  if (ownerId !== caller.user && !caller.admin) return fail(res, 403, "FORBIDDEN", "ownerId");
  if (typeof body.item !== "string" || body.item.length < 1 || body.item.length > 200)
    return fail(res, 400, "VALIDATION_ERROR", "item");
  if (!Number.isInteger(body.quantity) || (body.quantity as number) < 1)
    return fail(res, 400, "VALIDATION_ERROR", "quantity");
  if ("status" in body && !ORDER_STATUSES.has(body.status as string))
    return fail(res, 400, "VALIDATION_ERROR", "status");
  const now = new Date().toISOString();
  const order = {
    id: (body.id as string) ?? uuidv7(),
    ownerId,
    item: body.item,
    quantity: body.quantity,
    status: (body.status as string) ?? "open",
    ...("cost" in body ? { cost: body.cost } : {}),
    createdAt: now,
    updatedAt: now,
  };
  db.transaction(() => {
    insertOrder.run(
      order.id,
      ownerId,
      order.item,
      order.quantity,
      order.status,
      order.cost ?? null,
      now,
      now,
    );
    audit(req, "order", "create", order.id, null, order);
  })();
  send(res, 201, caller.admin ? order : withoutCost(order));
}

const ownOrders = {
  page: db.prepare(
    `select * from "order" where "ownerId" = ? order by "createdAt" desc, "id" desc limit ? offset ?`,
  ),
  count: db.prepare(`select count(*) as total from "order" where "ownerId" = ?`),
};
const allOrders = {
  page: db.prepare(`select * from "order" order by "createdAt" desc, "id" desc limit ? offset ?`),
  count: db.prepare(`select count(*) as total from "order"`),
};

/** GET /api/orders: a user's own orders without `cost`; an admin's, every order. */
function listOrders(res: ServerResponse, query: URLSearchParams, caller: Caller): void {
  const page = Number(query.get("page") ?? 1);
  const limit = Math.min(Number(query.get("limit") ?? 10), 100);
  if (!(page >= 1) || !Number.isInteger(page) || !(limit >= 1) || !Number.isInteger(limit)) {
    fail(res, 400, "BAD_REQUEST", "page/limit");
    return;
  }
  const owner = caller.admin ? [] : [caller.user];
  const statements = caller.admin ? allOrders : ownOrders;
  const { total } = statements.count.get(...owner) as { total: number };
  const rows = statements.page.all(...owner, limit, (page - 1) * limit) as Record<string, unknown>[];
  const items = rows.map((row) => {
    const order: Record<string, unknown> = {};
    // As the API reads rows back: optional fields that are null are left out.
    for (const [key, value] of Object.entries(row)) if (value !== null) order[key] = value;
    return caller.admin ? order : withoutCost(order);
  });
  const totalPages = Math.ceil(total / limit);
  send(res, 200, {
    items,
    pagination: { page, limit, total, totalPages, hasNext: page < totalPages, hasPrev: page > 1 },
  });
}

function withoutCost<T extends { cost?: unknown }>(order: T): Omit<T, "cost"> {
  const { cost: _, ...rest } = order;
  return rest;
}

/** The upload a hand-written server would do: buffer the body, JSON.parse, decode, write, record. */
async function uploadFile(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const body = (await readBody(req, UPLOAD_LIMIT)) as {
    file?: unknown;
    filename?: unknown;
    mimeType?: unknown;
  };
  if (
    typeof body?.file !== "string" ||
    typeof body.filename !== "string" ||
    typeof body.mimeType !== "string"
  ) {
    return fail(res, 400, "VALIDATION_ERROR", "file, filename and mimeType are required.");
  }
  const bytes = Buffer.from(body.file, "base64");
  const id = uuidv7();
  const name = `${id}${extname(body.filename.replace(/[^\w.-]/g, "_"))}`;
  await writeFile(join(uploadDir, name), bytes);
  const record = {
    id,
    filename: name,
    originalName: body.filename,
    mimeType: body.mimeType,
    size: bytes.byteLength,
    url: `/uploads/${name}`,
    uploadedBy: "example-user",
    uploadedAt: new Date().toISOString(),
    metadata: null,
  };
  db.transaction(() => {
    insertFile.run(
      id,
      name,
      body.filename,
      body.mimeType,
      bytes.byteLength,
      name,
      record.url,
      record.uploadedBy,
      record.uploadedAt,
      null,
    );
    audit(req, "uploaded_file", "create", id, null, record);
  })();
  send(res, 201, record);
}

async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = req.url ?? "/";
  const q = url.indexOf("?");
  const path = q === -1 ? url : url.slice(0, q);
  if (path === "/api/reviews" && req.method === "GET") {
    if (authorized(req, res)) reviews.list(res, new URLSearchParams(q === -1 ? "" : url.slice(q + 1)));
  } else if (path === "/api/review" && req.method === "POST") {
    const caller = authorized(req, res);
    if (caller) await reviews.create(res, await readBody(req), caller.user);
  } else if (path === "/api/orders" && req.method === "GET") {
    const caller = authorized(req, res);
    if (caller) listOrders(res, new URLSearchParams(q === -1 ? "" : url.slice(q + 1)), caller);
  } else if (path === "/api/order" && req.method === "POST") {
    const caller = authorized(req, res);
    if (caller) await createOrder(req, res, caller);
  } else if (path === "/api/upload/file" && req.method === "POST") {
    if (authorized(req, res)) await uploadFile(req, res);
  } else if (path === "/api/products" && req.method === "GET") {
    if (authorized(req, res)) list(res, new URLSearchParams(q === -1 ? "" : url.slice(q + 1)));
  } else if (path === "/api/product" && req.method === "POST") {
    if (authorized(req, res)) await create(req, res);
  } else if (path.startsWith("/api/product/")) {
    const id = decodeURIComponent(path.slice("/api/product/".length));
    if (!authorized(req, res)) return;
    if (req.method === "GET" && url.slice(q + 1) === "expand=reviews") reviews.readProduct(res, id);
    else if (req.method === "GET") {
      const row = byId.get(id);
      row ? send(res, 200, row) : fail(res, 404, "NOT_FOUND", "No such product.");
    } else if (req.method === "PATCH") await update(req, res, id);
    else if (req.method === "DELETE") {
      const row = db.transaction(() => {
        const before = remove.get(id) as Product | undefined;
        if (before) audit(req, "product", "delete", id, before, null);
        return before;
      })();
      row ? send(res, 200, { success: true, id }) : fail(res, 404, "NOT_FOUND", "No such product.");
    } else fail(res, 405, "METHOD_NOT_ALLOWED", "Method not allowed.");
  } else fail(res, 404, "NOT_FOUND", "No route.");
}

const coalesced = process.env.COALESCE_REFERENCE === "on" ? { ServerResponse: coalescingResponse() } : {};
createServer(coalesced, (req, res) => {
  route(req, res).catch(() => fail(res, 400, "BAD_REQUEST", "The request body is not valid JSON."));
}).listen(port, "127.0.0.1", () => console.log(`reference server on http://127.0.0.1:${port}`));
