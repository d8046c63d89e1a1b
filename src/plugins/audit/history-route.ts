// GET /<resource>/:id/history?cursor&limit → { items, pagination }: one record's changes from the
// audit log, newest first, for any caller who may read the record now (not only audit readers),
// with her field rules applied to every snapshot. Paged by an opaque cursor over (created_at, id).

import type { ExpressionBuilder } from "kysely";
import { z } from "zod";
import { defineEndpoint } from "../../core/define-endpoint.ts";
import type { EndpointContext } from "../../core/endpoint.ts";
import { APIError } from "../../core/errors.ts";
import { isoTime } from "../../core/iso-date.ts";
import type { PluginContext } from "../../core/plugin.ts";
import {
  dateToColumn,
  type ListResult,
  pageOf,
  paginate,
  parsePage,
  unknownParameter,
} from "../../kit/index.ts";
import type { EntrySource } from "./audit-entries.ts";
import { type AuditEntry, toEntry, withoutHiddenFields } from "./audit-table.ts";

/** One change of a record as its history shows it. */
export interface HistoryEntry {
  /** The audit entry's id. */
  id: string;
  /** ISO 8601. */
  createdAt: string;
  operation: "create" | "update" | "delete";
  userId: string | null;
  /** `http`, `server` (`app.api`), `override` (`overrideAccess`) or `cascade`. */
  source: AuditEntry["source"];
  /**
   * Fields an update changed, `{ price: { from: 10, to: 12 } }`. Fields hidden from the reader are
   * absent; redacted ones read "[redacted]". `before`, `after` and `changes` are all null when a
   * snapshot lies outside her read rule's rows (as in GET /audit/logs).
   */
  changes: AuditEntry["changes"];
  before: AuditEntry["before"];
  after: AuditEntry["after"];
}

/** The changes a history lists: reads and lists, when recorded, are not changes. */
const CHANGES = ["create", "update", "delete"];
const PARAMETERS = ["cursor", "limit"];
const CURSOR_PREFIX = "h1.";
const MAX_CURSOR_LENGTH = 2048;

const historyQuery = z.object({
  /** A `nextCursor` or `prevCursor` from a page before. */
  cursor: z.string().optional(),
  // Typed for the client, checked by the page parser every list uses (the app's maxLimit).
  limit: z.custom<number>().optional(),
});

/** The history route of every resource of the app, beside its item route (`/product/:id`). */
/** @param entries Where entries are read from: the log, and on PostgreSQL its queue (audit-entries.ts). */
export function historyRoutes(app: PluginContext, entries: EntrySource) {
  return app.resources.map(({ name }) => historyRoute(app, name, entries));
}

function historyRoute(app: PluginContext, resource: string, entries: EntrySource) {
  return defineEndpoint({
    method: "GET",
    path: `/${resource}/:id/history` as `/${string}/:id/history`,
    lists: true,
    operationName: `read${resource.charAt(0).toUpperCase()}${resource.slice(1)}History`,
    doc: {
      summary: `Changes of a ${resource}, newest first`,
      tags: [resource],
      query: { cursor: { type: "string" }, limit: { type: "integer", minimum: 1 } },
      response: pageOf({
        type: "object",
        required: ["id", "createdAt", "operation", "userId", "source", "changes", "before", "after"],
      }),
    },
    query: historyQuery,
    async handler(ctx): Promise<ListResult<HistoryEntry>> {
      // Access first: whoever may not read the record learns nothing else, not even a 400.
      const id = ctx.params.id!;
      await admitReader(app, resource, id, ctx);
      for (const key of Object.keys(ctx.query))
        if (!PARAMETERS.includes(key)) throw unknownParameter(key, PARAMETERS, false);
      const { limit } = parsePage({ limit: ctx.query.limit }, app.listLimits);
      const cursor = ctx.query.cursor ? decodeCursor(ctx.query.cursor, resource, app) : undefined;
      return historyPage(app, resource, id, { limit, cursor }, ctx, entries);
    },
  });
}

/**
 * Whoever may read the record reads its history: her read rule, row rule included. Without read
 * rights she gets the read's 403; a record outside her rows, or none, the read's 404, word for word.
 */
async function admitReader(app: PluginContext, resource: string, id: string, ctx: EndpointContext) {
  if (await app.canReadRecord(resource, id, ctx)) return;
  if (!ctx.overrideAccess) {
    const verdict = await app.can("read", resource, ctx);
    if (!verdict.allowed) throw new APIError("FORBIDDEN", verdict.reason ?? "Access denied.");
  }
  const shown = id.length > 80 ? `${id.slice(0, 80)}…` : id;
  throw new APIError("NOT_FOUND", `No ${resource} with id "${shown.replace(/[^\x20-\x7e]/g, "?")}" exists.`);
}

interface HistoryCursor {
  direction: "after" | "before";
  /** The entry's created_at as the column holds it. */
  at: unknown;
  id: string;
}

/**
 * One page, newest first, through the (record_id, created_at) index:
 *
 *   SELECT * FROM audit_logs WHERE record_id = ? AND resource = ? AND operation IN (…)
 *     [AND (created_at < ? OR (created_at = ? AND id < ?))]
 *   ORDER BY created_at DESC, id DESC LIMIT <limit + 1>
 *
 * (ascending, and reversed, for the page before a cursor).
 */
async function historyPage(
  app: PluginContext,
  resource: string,
  id: string,
  page: { limit: number; cursor: HistoryCursor | undefined },
  ctx: EndpointContext,
  source: EntrySource,
): Promise<ListResult<HistoryEntry>> {
  const { cursor, limit } = page;
  const newestFirst = cursor?.direction !== "before";
  const order = newestFirst ? "desc" : "asc";
  let query = source(ctx.readDb ?? ctx.db)
    .selectAll()
    .where("record_id", "=", id)
    .where("resource", "=", resource)
    .where("operation", "in", CHANGES);
  if (cursor) query = query.where((eb) => pastCursor(eb, cursor, newestFirst ? "<" : ">"));
  const rows = await query
    .orderBy("created_at", order)
    .orderBy("id", order)
    .limit(limit + 1)
    .execute();
  const more = rows.length > limit;
  const shown = more ? rows.slice(0, limit) : rows;
  if (!newestFirst) shown.reverse();
  const entries = shown.map((row) => toEntry(row, app.log));
  const items = await readerView(app, resource, entries, ctx);
  const hasNext = cursor ? cursor.direction === "before" || more : more;
  const hasPrev = cursor ? cursor.direction === "after" || more : false;
  const edge = (direction: HistoryCursor["direction"], entry: AuditEntry | undefined) =>
    entry ? encodeCursor(resource, direction, entry) : null;
  return paginate(items, null, { page: 1, limit }, more, {
    hasNext,
    hasPrev,
    nextCursor: hasNext ? edge("after", entries.at(-1)) : null,
    prevCursor: hasPrev ? edge("before", entries[0]) : null,
  });
}

function pastCursor(eb: ExpressionBuilder<any, any>, cursor: HistoryCursor, past: "<" | ">") {
  return eb.or([
    eb("created_at", past, cursor.at),
    eb.and([eb("created_at", "=", cursor.at), eb("id", past, cursor.id)]),
  ]);
}

/**
 * The entries as the reader may see them, judged as GET /audit/logs judges them: a snapshot outside
 * her read rule's rows (before the record moved into them, say) leaves the entry without content,
 * and the fields her field rules hide are absent from what remains.
 */
async function readerView(
  app: PluginContext,
  resource: string,
  entries: readonly AuditEntry[],
  ctx: EndpointContext,
): Promise<HistoryEntry[]> {
  const full = ctx.overrideAccess;
  const user = full ? null : await ctx.getUser();
  const hidden = full ? new Set<string>() : await app.hiddenFields(resource, { user, headers: ctx.headers });
  const reads = full ? async () => true : await app.snapshotJudge(resource, ctx);
  const readable = async (record: Record<string, unknown> | null) => record === null || (await reads(record));
  // One at a time: a snapshot's referenced record is asked once (the judge remembers it), and a page
  // of entries never holds every connection of the pool at once.
  const view: HistoryEntry[] = [];
  for (const entry of entries) {
    const shown =
      (await readable(entry.before)) && (await readable(entry.after))
        ? entry
        : { ...entry, before: null, after: null, changes: null };
    const { before, after, changes } = withoutHiddenFields(shown, hidden);
    view.push({
      id: entry.id,
      createdAt: entry.createdAt,
      operation: entry.operation as HistoryEntry["operation"],
      userId: entry.userId,
      source: entry.source,
      changes,
      before,
      after,
    });
  }
  return view;
}

/** `h1.` and base64url JSON of the resource, the direction and the entry's (createdAt, id). */
function encodeCursor(resource: string, direction: HistoryCursor["direction"], entry: AuditEntry): string {
  const payload = [resource, direction === "after" ? "a" : "b", entry.createdAt, entry.id];
  return CURSOR_PREFIX + Buffer.from(JSON.stringify(payload)).toString("base64url");
}

/** A cursor of this resource's history; anything else is the 400 a list gives a bad cursor. */
function decodeCursor(text: string, resource: string, app: PluginContext): HistoryCursor {
  const bad = (why: string) =>
    new APIError(
      "BAD_REQUEST",
      `cursor is not valid here: ${why}. Use a cursor from this list's pagination.`,
    );
  if (text.length > MAX_CURSOR_LENGTH || !text.startsWith(CURSOR_PREFIX))
    throw bad("it is not a crudkit cursor");
  let payload: unknown;
  try {
    payload = JSON.parse(Buffer.from(text.slice(CURSOR_PREFIX.length), "base64url").toString("utf8"));
  } catch {
    throw bad("it is malformed");
  }
  if (!Array.isArray(payload) || payload.length !== 4) throw bad("it is malformed");
  const [owner, direction, at, id] = payload as unknown[];
  if (owner !== resource) throw bad("it belongs to another list");
  const time = typeof at === "string" && at.length <= 40 ? isoTime(at) : Number.NaN;
  if (
    (direction !== "a" && direction !== "b") ||
    Number.isNaN(time) ||
    typeof id !== "string" ||
    id === "" ||
    id.length > 255
  )
    throw bad("it is malformed");
  return {
    direction: direction === "a" ? "after" : "before",
    at: dateToColumn(new Date(time), app.profile),
    id,
  };
}
