// What both reference servers (SQLite and PostgreSQL) share: JSON answers, the cursor format,
// and the `{ items, pagination }` body built from the rows a page query read.

import type { ServerResponse } from "node:http";

export function send(res: ServerResponse, status: number, body: unknown): void {
  const json = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(json) });
  res.end(json);
}

export const fail = (res: ServerResponse, status: number, code: string, message: string) =>
  send(res, status, { code, message });

/** A cursor: the sort value and id of a page's edge row, as base64url JSON. */
export const encodeCursor = (value: unknown, id: unknown) =>
  Buffer.from(JSON.stringify([value, id])).toString("base64url");

export function decodeCursor(text: string): [unknown, string] | undefined {
  try {
    const parsed = JSON.parse(Buffer.from(text, "base64url").toString("utf8"));
    return Array.isArray(parsed) && parsed.length === 2 && typeof parsed[1] === "string"
      ? (parsed as [unknown, string])
      : undefined;
  } catch {
    return undefined;
  }
}

/** The page body from `rows` (one more than `limit` when the query read ahead to learn `hasNext`). */
export function pageBody(
  rows: Record<string, unknown>[],
  {
    page,
    limit,
    total,
    cursor,
    sortBy,
  }: {
    page: number;
    limit: number;
    total: number | null;
    cursor: unknown;
    sortBy: string;
  },
) {
  const more = rows.length > limit;
  const items = more ? rows.slice(0, limit) : rows;
  const totalPages = total === null ? null : Math.ceil(total / limit);
  const hasNext = total === null || cursor ? more : page < totalPages!;
  const last = items.at(-1);
  return {
    items,
    pagination: {
      page,
      limit,
      total,
      totalPages,
      hasNext,
      hasPrev: cursor ? true : page > 1,
      nextCursor: hasNext && last ? encodeCursor(last[sortBy], last.id) : null,
    },
  };
}
