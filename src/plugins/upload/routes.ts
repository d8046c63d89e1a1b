// The upload plugin's five routes: upload, file record, download, delete, list.

import type { Expression, Kysely, SqlBool } from "kysely";
import type { Endpoint, EndpointContext } from "../../core/endpoint.ts";
import { APIError } from "../../core/errors.ts";
import { uuidv7 } from "../../core/id.ts";
import type { User } from "../../core/identity.ts";
import type { PluginContext } from "../../core/plugin.ts";
import { assertJsonBody, interrupted } from "../../core/request-body.ts";
import {
  compileWhere,
  dateToColumn,
  hookContextOf,
  newestFirstPage,
  PAGE_QUERY,
  pageOf,
  type paginate,
  parseListQuery,
  runWrite,
  type Where,
} from "../../kit/index.ts";
import { chunksOf } from "../../storage/adapter.ts";
import { downloadResponse } from "./download.ts";
import type { UploadAccess } from "./options.ts";
import { type ReceivedUpload, receiveUpload, type UploadRules } from "./receive-upload.ts";
import { type StoringNote, storingNote } from "./storing-notes.ts";
import { admitUploadRows, authorizeUpload } from "./upload-access.ts";
import {
  toRecord,
  UPLOADED_FILES,
  type UploadedFileRecord,
  uploadFilterFields,
} from "./uploaded-files-table.ts";

export interface UploadState {
  rules: UploadRules;
  access: UploadAccess;
  ownedFileAccess: "rule" | "record";
  track: boolean;
  app: PluginContext;
}

export interface UploadFileInput {
  /** The content, base64 without a data-URL prefix. */
  file: string;
  filename: string;
  mimeType: string;
  metadata?: Record<string, unknown>;
}

export interface ListFilesInput {
  page?: number;
  limit?: number;
  /** `filter[…]` over file records: `{ size: { gt: 1000 }, uploadedBy: "u1" }`. */
  where?: Where<UploadedFileRecord>;
  /** Exact (`image/png`) or a family (`image/*`). */
  mimeType?: string;
}

const RESOURCE = "uploaded_file";
const FILE_SCHEMA = { $ref: "#/components/schemas/UploadedFile" };

/** Newest first, filterable on the file record's fields, never sorted or searched otherwise. */
const LIST_RULES = {
  resource: "uploaded files",
  sortable: new Set<string>(),
  searchable: [],
  filterable: uploadFilterFields,
};

export function uploadRoutes(state: UploadState) {
  return [
    uploadFile(state),
    getFile(state),
    downloadFile(state),
    deleteFile(state),
    listFiles(state),
  ] as const;
}

function uploadFile(state: UploadState) {
  return {
    method: "POST",
    path: "/upload/file",
    status: 201,
    doc: {
      summary: "Upload a file (base64 in JSON, streamed)",
      tags: ["uploads"],
      body: {
        type: "object",
        properties: {
          file: { type: "string", contentEncoding: "base64" },
          filename: { type: "string" },
          mimeType: { type: "string" },
          metadata: { type: "object" },
        },
        required: ["file", "filename", "mimeType"],
      },
      response: FILE_SCHEMA,
    },
    clientMethod: "uploadFile",
    rawBody: true,
    idempotent: true,
    async handler(ctx: EndpointContext) {
      const user = await authorizeUpload(state.access, ctx);
      // Until the record commits, a note names the stored file: a restart after a kill removes it.
      const note = state.track ? storingNote(state.rules.spoolDir) : undefined;
      try {
        return await storeAndRecord(state, ctx, user, note);
      } finally {
        await note?.end();
      }
    },
  } satisfies Endpoint as Endpoint<"uploadFile", UploadFileInput, UploadedFileRecord, "/upload/file">;
}

async function storeAndRecord(
  state: UploadState,
  ctx: EndpointContext,
  user: User | null,
  note: StoringNote | undefined,
): Promise<UploadedFileRecord> {
  const received = await receiveUpload(
    await bodyOf(ctx, state.rules.maxFileSize),
    state.rules,
    user?.id ?? null,
    note,
  );
  const { stored, info } = received;
  const record: UploadedFileRecord = {
    id: uuidv7(),
    filename: stored.path,
    originalName: info.filename,
    mimeType: info.mimeType,
    size: info.size,
    url: stored.url ?? null,
    uploadedBy: user?.id ?? null,
    uploadedAt: new Date().toISOString(),
    metadata: info.metadata,
  };
  const hookCtx = hookContextOf(ctx, RESOURCE, "create", user);
  try {
    await runWrite(ctx.db, true, async (write) => {
      if (state.track)
        await write.db
          .insertInto(UPLOADED_FILES)
          .values(toRow(state, record, received))
          .execute();
      await write.changed(state.app, hookCtx, { record });
    });
  } catch (error) {
    // The row (or an atomic hook) failed: the stored object goes too, so neither exists.
    await state.rules.storage
      .delete(stored.path)
      .catch((e) => state.app.log("crudkit: could not remove an uploaded file", e));
    throw error;
  }
  return record;
}

/** The row `id` as the upload rules let the caller `operation` it (she is identified first). */
async function ruledRow(
  state: UploadState,
  ctx: EndpointContext,
  id: string,
  operation: "read" | "download",
) {
  const { scope } = await admitUploadRows(state.access, operation, ctx, state.app.profile, id);
  // After the caller is known: a replica must hold her own writes.
  return findRow(state, ctx.readDb ?? ctx.db, id, operation, scope);
}

function getFile(state: UploadState) {
  return {
    method: "GET",
    path: "/upload/file/:id",
    clientMethod: "getFile",
    doc: { summary: "A file's record", tags: ["uploads"], response: FILE_SCHEMA },
    async handler(ctx: EndpointContext) {
      const id = ctx.params.id!;
      const owned = await ownedRow(state, ctx, id);
      if (owned) return toRecord(owned, state.app.log);
      return toRecord(await ruledRow(state, ctx, id, "read"), state.app.log);
    },
  } satisfies Endpoint as Endpoint<"getFile", { id: string }, UploadedFileRecord, "/upload/file/:id">;
}

function downloadFile(state: UploadState) {
  return {
    method: "GET",
    path: "/upload/download/:id",
    doc: { summary: "Download a file (Range supported)", tags: ["uploads"], response: "binary" },
    async handler(ctx: EndpointContext) {
      const id = ctx.params.id!;
      const row = (await ownedRow(state, ctx, id)) ?? (await ruledRow(state, ctx, id, "download"));
      const record = toRecord(row, state.app.log);
      return downloadResponse(
        state.rules.storage,
        { ...record, path: String(row.path) },
        ctx.headers,
        ctx.request?.method,
      );
    },
  } satisfies Endpoint;
}

const DELETE_DOC = {
  summary: "Delete a file",
  tags: ["uploads"],
  response: { $ref: "#/components/schemas/DeleteResult" },
};

function deleteFile(state: UploadState) {
  return {
    method: "DELETE",
    path: "/upload/file/:id",
    clientMethod: "deleteFile",
    doc: DELETE_DOC,
    async handler(ctx: EndpointContext) {
      const id = ctx.params.id!;
      const { user, scope } = await admitUploadRows(state.access, "delete", ctx, state.app.profile, id);
      const hookCtx = hookContextOf(ctx, RESOURCE, "delete", user, id);
      await runWrite(ctx.db, true, async (write) => {
        const { db } = write;
        // Locked, and the delete must remove it: of concurrent deletes exactly one gets past here.
        const row = await findRow(state, db, id, "delete", scope, true);
        if (row.owner_id !== null && row.owner_id !== undefined)
          throw new APIError(
            "CONFLICT",
            `This file belongs to a record of "${String(row.owner_resource)}" (field "${String(row.owner_field)}"); change or delete that record, and the file goes with it.`,
          );
        const { numDeletedRows } = await db
          .deleteFrom(UPLOADED_FILES)
          .where(state.app.profile.equalsExactly("id", id))
          .executeTakeFirst();
        if (numDeletedRows !== 1n) notFoundFile(id);
        // The row goes with the transaction; then the bytes. A failure then leaves an object no
        // record points to, logged.
        write.afterCommit(() =>
          state.rules.storage
            .delete(String(row.path))
            .catch((e) => state.app.log("crudkit: could not remove an uploaded file", e)),
        );
        await write.changed(state.app, hookCtx, { previous: toRecord(row, state.app.log) });
      });
      return { success: true as const, id };
    },
  } satisfies Endpoint as Endpoint<
    "deleteFile",
    { id: string },
    { success: true; id: string },
    "/upload/file/:id"
  >;
}

function listFiles(state: UploadState) {
  return {
    method: "GET",
    path: "/upload/files",
    lists: true,
    clientMethod: "listFiles",
    doc: {
      summary: "List files, newest first",
      tags: ["uploads"],
      query: { ...PAGE_QUERY, mimeType: { type: "string" } },
      response: pageOf(FILE_SCHEMA),
    },
    async handler(ctx: EndpointContext) {
      const { scope } = await admitUploadRows(state.access, "list", ctx, state.app.profile);
      requireTable(state, "list");
      const list = parseListQuery(
        ctx.query,
        { ...LIST_RULES, ...state.app.listLimits },
        ["mimeType"],
        ctx.where,
      );
      const mimeType = ctx.query.mimeType?.toLowerCase();
      if (
        mimeType !== undefined &&
        mimeType !== "" &&
        !/^[a-z0-9][\w.+-]*\/(\*|[a-z0-9][\w.+-]*)$/.test(mimeType)
      ) {
        throw new APIError(
          "BAD_REQUEST",
          "mimeType must be a type such as image/png, or a family such as image/*.",
        );
      }
      let query = (ctx.readDb ?? ctx.db).selectFrom(UPLOADED_FILES);
      if (scope) query = query.where(scope);
      if (list.where)
        query = query.where(compileWhere(list.where, uploadFilterFields, state.app.profile).expression());
      if (mimeType?.endsWith("/*"))
        query = query.where("mime_type", "like", `${mimeType.slice(0, -1).replace(/[\\%_]/g, "\\$&")}%`);
      else if (mimeType) query = query.where("mime_type", "=", mimeType);
      return newestFirstPage(query, "uploaded_at", list, (row) => toRecord(row, state.app.log));
    },
  } satisfies Endpoint as Endpoint<
    "listFiles",
    ListFilesInput,
    { items: UploadedFileRecord[]; pagination: ReturnType<typeof paginate>["pagination"] },
    "/upload/files"
  >;
}

/** The upload body as a byte stream: the request's, or for server calls the JSON of `body`. */
async function bodyOf(ctx: EndpointContext, maxFileSize: number): Promise<AsyncIterable<Uint8Array>> {
  const request = ctx.request;
  if (!request) return chunksOf(new TextEncoder().encode(JSON.stringify((await ctx.readBody()) ?? null)));
  assertJsonBody(request);
  // Refuse a declared length no upload within the limit can have, before reading anything.
  const declared = Number(request.headers.get("content-length") ?? Number.NaN);
  if (declared > 4 * Math.ceil(maxFileSize / 3) + 1024 * 1024) {
    throw new APIError("PAYLOAD_TOO_LARGE", `The file is larger than the limit of ${maxFileSize} bytes.`);
  }
  if (!request.body) throw new APIError("BAD_REQUEST", "The request body is empty; send the upload as JSON.");
  return guarded(chunksOf(request.body));
}

/** A client that goes away mid-upload is a 400 for the log, not a database or server failure. */
async function* guarded(chunks: AsyncIterable<Uint8Array>): AsyncIterable<Uint8Array> {
  try {
    yield* chunks;
  } catch (cause) {
    throw interrupted(cause);
  }
}

async function findRow(
  state: UploadState,
  db: Kysely<any>,
  id: string,
  operation: string,
  scope: Expression<SqlBool> | undefined,
  lock = false,
): Promise<Record<string, unknown>> {
  requireTable(state, operation);
  let query = db.selectFrom(UPLOADED_FILES).selectAll().where(state.app.profile.equalsExactly("id", id));
  // A file outside the caller's rule is a missing id.
  if (scope) query = query.where(scope);
  if (lock && state.app.profile.rowLocks) query = query.forUpdate();
  const row = await query.executeTakeFirst();
  if (!row) notFoundFile(id);
  return row;
}

/**
 * With `ownedFileAccess: "record"`, a file a record owns is read by whoever may read that record
 * (anyone else finds no such file); undefined for files no record owns, which the rules decide.
 */
async function ownedRow(
  state: UploadState,
  ctx: EndpointContext,
  id: string,
): Promise<Record<string, unknown> | undefined> {
  if (state.ownedFileAccess !== "record") return undefined;
  requireTable(state, "read");
  // The caller first (a 401 for bad credentials, as the rules would give): a replica must hold her writes.
  await ctx.getUser();
  const row = await (ctx.readDb ?? ctx.db)
    .selectFrom(UPLOADED_FILES)
    .selectAll()
    .where(state.app.profile.equalsExactly("id", id))
    .executeTakeFirst();
  if (!row || row.owner_id === null) return undefined;
  if (!(await state.app.canReadRecord(String(row.owner_resource), String(row.owner_id), ctx)))
    notFoundFile(id);
  return row;
}

function notFoundFile(id: string): never {
  throw new APIError(
    "NOT_FOUND",
    `No uploaded file with id "${id.slice(0, 80).replace(/[^\x20-\x7e]/g, "?")}" exists.`,
  );
}

function requireTable(state: UploadState, operation: string): void {
  if (!state.track) {
    throw new APIError(
      "NOT_FOUND",
      `Uploaded files are not tracked (upload({ trackInDatabase: false })), so there is no record to ${operation}.`,
    );
  }
}

function toRow(state: UploadState, record: UploadedFileRecord, received: ReceivedUpload) {
  return {
    id: record.id,
    filename: record.filename,
    original_name: record.originalName,
    mime_type: record.mimeType,
    size: record.size,
    path: received.stored.path,
    url: record.url,
    uploaded_by: record.uploadedBy,
    uploaded_at: dateToColumn(record.uploadedAt, state.app.profile),
    metadata: record.metadata === null ? null : JSON.stringify(record.metadata),
  };
}
