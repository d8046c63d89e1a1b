// The reference's reviews, as a hand-written server would serve `expand`: a review page with its
// product by one LEFT JOIN, and a product with its newest reviews by one more indexed query.

import type { ServerResponse } from "node:http";
import type Database from "better-sqlite3";
import { uuidv7 } from "../src/core/id.ts";
import { fail, send } from "./reference-shared.ts";

type Row = Record<string, unknown>;

const REVIEW_FIELDS = new Set(["id", "productId", "authorId", "rating", "body"]);
const PRODUCT_COLUMNS = ["id", "name", "price", "status", "createdAt", "updatedAt"];
const REVIEWS_PER_PRODUCT = 10;

export function reviewRoutes(db: Database.Database) {
  db.exec(`create table if not exists "review" ("id" text primary key,
    "productId" text not null references "product" ("id") on delete cascade,
    "authorId" text, "rating" integer not null, "body" text, "createdAt" text not null, "updatedAt" text not null);
    create index if not exists "review_createdAt_id_idx" on "review" ("createdAt", "id");
    create index if not exists "review_productId_createdAt_id_idx" on "review" ("productId", "createdAt", "id");
    create index if not exists "review_authorId_createdAt_id_idx" on "review" ("authorId", "createdAt", "id")`);
  const insert = db.prepare(`insert into "review" values (?,?,?,?,?,?,?)`);
  const page = db.prepare(
    `select r.*, ${PRODUCT_COLUMNS.map((c) => `p."${c}" as "p_${c}"`).join(", ")}
     from "review" r left join "product" p on p."id" = r."productId"
     order by r."createdAt" desc, r."id" desc limit ? offset ?`,
  );
  const count = db.prepare(`select count(*) as total from "review"`);
  const product = db.prepare(`select * from "product" where "id" = ?`);
  const newest = db.prepare(
    `select * from "review" where "productId" = ? order by "createdAt" desc, "id" desc limit ${REVIEWS_PER_PRODUCT}`,
  );

  /** A review as the API answers it: optional fields that are null are left out. */
  const reviewOf = (row: Row): Row => {
    const review: Row = {};
    for (const key of ["id", "productId", "authorId", "rating", "body", "createdAt", "updatedAt"])
      if (row[key] !== null) review[key] = row[key];
    return review;
  };

  return {
    /** POST /api/review */
    async create(res: ServerResponse, body: unknown, user: string): Promise<void> {
      if (typeof body !== "object" || body === null || Array.isArray(body))
        return fail(res, 400, "VALIDATION_ERROR", "Expected an object.");
      const input = body as Row;
      for (const key of Object.keys(input))
        if (!REVIEW_FIELDS.has(key)) return fail(res, 400, "VALIDATION_ERROR", key);
      if (typeof input.productId !== "string") return fail(res, 400, "VALIDATION_ERROR", "productId");
      if (!Number.isInteger(input.rating) || (input.rating as number) < 1 || (input.rating as number) > 5)
        return fail(res, 400, "VALIDATION_ERROR", "rating");
      const now = new Date().toISOString();
      const review = {
        id: (input.id as string) ?? uuidv7(),
        productId: input.productId,
        authorId: (input.authorId as string) ?? user,
        rating: input.rating,
        ...(typeof input.body === "string" ? { body: input.body } : {}),
        createdAt: now,
        updatedAt: now,
      };
      try {
        insert.run(
          review.id,
          review.productId,
          review.authorId,
          review.rating,
          review.body ?? null,
          now,
          now,
        );
      } catch {
        return fail(res, 400, "VALIDATION_ERROR", "productId");
      }
      send(res, 201, review);
    },

    /** GET /api/reviews?expand=product: a page of reviews, each with its product. */
    list(res: ServerResponse, query: URLSearchParams): void {
      const pageNumber = Number(query.get("page") ?? 1);
      const limit = Math.min(Number(query.get("limit") ?? 10), 100);
      if (!(pageNumber >= 1) || !Number.isInteger(pageNumber) || !(limit >= 1) || !Number.isInteger(limit)) {
        fail(res, 400, "BAD_REQUEST", "page/limit");
        return;
      }
      const expand = query.get("expand") === "product";
      const { total } = count.get() as { total: number };
      const rows = page.all(limit, (pageNumber - 1) * limit) as Row[];
      const items = rows.map((row) => {
        const review = reviewOf(row);
        if (expand) {
          const related: Row = {};
          for (const column of PRODUCT_COLUMNS) related[column] = row[`p_${column}`];
          review.product = related.id === null ? null : related;
        }
        return review;
      });
      const totalPages = Math.ceil(total / limit);
      send(res, 200, {
        items,
        pagination: {
          page: pageNumber,
          limit,
          total,
          totalPages,
          hasNext: pageNumber < totalPages,
          hasPrev: pageNumber > 1,
        },
      });
    },

    /** GET /api/product/:id?expand=reviews: the product and its newest reviews. */
    readProduct(res: ServerResponse, id: string): void {
      const row = product.get(id) as Row | undefined;
      if (!row) {
        fail(res, 404, "NOT_FOUND", "No such product.");
        return;
      }
      row.reviews = (newest.all(id) as Row[]).map(reviewOf);
      send(res, 200, row);
    },
  };
}
