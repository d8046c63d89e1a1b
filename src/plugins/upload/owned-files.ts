// Files owned by records (`fileRef` fields), kept in `uploaded_files`: a record claims a file in
// its write's transaction; a record that lets go of one (replaced, deleted) marks it released in
// that transaction, and the bytes, then the row, go after the commit. Whatever fails on the way
// stays marked in the table, so `crudkit gc` finishes it: no object is left without a row, and
// no row of an owned file points at removed bytes.

import type { Kysely } from "kysely";
import type { EndpointContext } from "../../core/endpoint.ts";
import { APIError, unlessForbidden } from "../../core/errors.ts";
import type { FileOwner, GarbageReport, OwnedFiles, PluginContext } from "../../core/plugin.ts";
import { dateToColumn, type FileRecord } from "../../kit/index.ts";
import type { StorageAdapter } from "../../storage/adapter.ts";
import type { UploadAccess } from "./options.ts";
import { admitUploadRows } from "./upload-access.ts";
import { toRecord, UPLOADED_FILES } from "./uploaded-files-table.ts";

export interface OwnedFilesState {
  /** Set once the app is assembled. */
  app: PluginContext | undefined;
  access: UploadAccess;
  storage: StorageAdapter;
  track: boolean;
  /** Who reads an owned file: the rules, or whoever may read the owning record (upload's option). */
  ownedFileAccess: "rule" | "record";
}

export function ownedFiles(state: OwnedFilesState): OwnedFiles {
  const app = () => {
    if (!state.app) throw new Error("crudkit: the upload plugin is not part of an app yet.");
    if (!state.track)
      throw new Error("crudkit: fileRef fields need upload({ trackInDatabase: true }), the default.");
    return state.app;
  };
  /** Removes a released file: the bytes first, then the row, so a failure leaves the row for gc. */
  const remove = async (db: Kysely<any>, row: Record<string, unknown>): Promise<boolean> => {
    try {
      await state.storage.delete(String(row.path));
    } catch (error) {
      app().log("crudkit: could not remove a released file; crudkit gc will retry", error);
      return false;
    }
    await db
      .deleteFrom(UPLOADED_FILES)
      .where("id", "=", row.id as string)
      .execute();
    return true;
  };

  return {
    async claim(db, ctx, fileId, owner, rules) {
      const { profile } = app();
      const scope = await readScope(state.access, ctx, profile, fileId);
      let query = db.selectFrom(UPLOADED_FILES).selectAll().where(profile.equalsExactly("id", fileId));
      if (scope) query = query.where(scope);
      const row =
        scope === false ? undefined : await (profile.rowLocks ? query.forUpdate() : query).executeTakeFirst();
      if (!row) throw unusable(owner.field, "No uploaded file with this id exists.");
      if (heldAlready(row, owner, rules)) return;
      await db
        .updateTable(UPLOADED_FILES)
        .set({ owner_resource: owner.resource, owner_id: owner.id, owner_field: owner.field })
        .where("id", "=", row.id as string)
        .execute();
    },

    async release(db, fileId, owner) {
      await db
        .updateTable(UPLOADED_FILES)
        .set({
          owner_resource: null,
          owner_id: null,
          owner_field: null,
          released_at: dateToColumn(new Date(), app().profile),
        })
        .where("id", "=", fileId)
        .where("owner_resource", "=", owner.resource)
        .where("owner_id", "=", owner.id)
        .execute();
    },

    async collect(fileIds) {
      if (fileIds.length === 0) return;
      const { db } = app();
      const rows = await db
        .selectFrom(UPLOADED_FILES)
        .selectAll()
        .where("id", "in", [...fileIds])
        .where("released_at", "is not", null)
        .execute();
      for (const row of rows) await remove(db, row);
    },

    read: async (ctx, ids) => readFiles(state, app(), ctx, ids),

    async collectGarbage({ olderThan, dryRun }) {
      const { db, profile } = app();
      const rows = await db
        .selectFrom(UPLOADED_FILES)
        .selectAll()
        .where("owner_id", "is", null)
        .where((eb) =>
          eb.or([
            eb("released_at", "is not", null),
            eb("uploaded_at", "<", dateToColumn(olderThan, profile)),
          ]),
        )
        .orderBy("uploaded_at")
        .execute();
      const report: GarbageReport = { files: [] };
      for (const row of rows) {
        const entry = {
          id: String(row.id),
          originalName: String(row.original_name),
          size: Number(row.size),
          reason: row.released_at === null ? ("never attached" as const) : ("released" as const),
        };
        if (!dryRun) {
          // Marked first, so a record cannot claim the file while its bytes go.
          if (entry.reason === "never attached" && !(await markReleased(db, entry.id, profile))) continue;
          if (!(await remove(db, row))) continue;
        }
        report.files.push(entry);
      }
      return report;
    },
  };
}

/**
 * Whether the file `row` may be claimed by `owner` under its field's rules: false when it is free,
 * true when the owner holds it already (nothing to do); otherwise a 400 naming the field.
 */
function heldAlready(
  row: Record<string, unknown>,
  owner: FileOwner,
  rules: { mimeTypes?: readonly string[]; maxSize?: number },
): boolean {
  const heldBy =
    row.owner_id === null
      ? undefined
      : { resource: row.owner_resource, id: row.owner_id, field: row.owner_field };
  const same =
    heldBy !== undefined &&
    heldBy.resource === owner.resource &&
    heldBy.id === owner.id &&
    heldBy.field === owner.field;
  if (row.released_at !== null || (heldBy && !same))
    throw unusable(owner.field, "This file is already attached to another record.");
  const mimeType = String(row.mime_type);
  if (rules.mimeTypes && !rules.mimeTypes.some((allowed) => typeMatches(allowed, mimeType)))
    throw unusable(
      owner.field,
      `Must be a file of type ${rules.mimeTypes.join(", ")}; this one is ${mimeType}.`,
    );
  if (rules.maxSize !== undefined && Number(row.size) > rules.maxSize)
    throw unusable(
      owner.field,
      `Must be a file of at most ${rules.maxSize} bytes; this one has ${Number(row.size)}.`,
    );
  return same;
}

/** Marks a never-attached file released, unless a record claimed it meanwhile: whether it did. */
async function markReleased(
  db: Kysely<any>,
  id: string,
  profile: PluginContext["profile"],
): Promise<boolean> {
  const marked = await db
    .updateTable(UPLOADED_FILES)
    .set({ released_at: dateToColumn(new Date(), profile) })
    .where("id", "=", id)
    .where("owner_id", "is", null)
    .where("released_at", "is", null)
    .executeTakeFirst();
  return marked.numUpdatedRows === 1n;
}

/**
 * The files of `ids` the caller may read, as the read route answers her: under the rules, or, with
 * `ownedFileAccess: "record"`, a file a record owns under that record's read rule.
 */
async function readFiles(
  state: OwnedFilesState,
  app: PluginContext,
  ctx: EndpointContext,
  ids: readonly string[],
): Promise<FileRecord[]> {
  if (ids.length === 0) return [];
  const scope = await readScope(state.access, ctx, app.profile);
  const byRecord = state.ownedFileAccess === "record";
  if (scope === false && !byRecord) return [];
  // Where the request reads (a replica for a GET with read replicas); inside a write's hooks
  // (`ctx.api`), its transaction, which sees its own files.
  let query = (ctx.readDb ?? ctx.db)
    .selectFrom(UPLOADED_FILES)
    .selectAll()
    .where("id", "in", [...ids]);
  // With ownedFileAccess "record", the rules decide only for files no record owns.
  if (byRecord && scope === false) query = query.where("owner_id", "is not", null);
  else if (byRecord && scope) query = query.where((eb) => eb.or([eb("owner_id", "is not", null), scope]));
  else if (scope) query = query.where(scope);
  const rows = await query.execute();
  const owners = byRecord ? await readableOwners(app, ctx, rows) : undefined;
  return rows
    .filter((row) => !owners || row.owner_id === null || owners.get(row.owner_resource)?.has(row.owner_id))
    .map((row) => toRecord(row, app.log) as FileRecord);
}

/**
 * Of the records owning `rows` (files), those the caller may read, by resource: one query per
 * owning resource, whatever the number of files.
 */
async function readableOwners(
  app: PluginContext,
  ctx: EndpointContext,
  rows: readonly Record<string, unknown>[],
): Promise<Map<unknown, ReadonlySet<unknown>>> {
  const owners = new Map<string, string[]>();
  for (const row of rows) {
    if (row.owner_id === null) continue;
    const resource = String(row.owner_resource);
    const ids = owners.get(resource);
    if (ids) ids.push(String(row.owner_id));
    else owners.set(resource, [String(row.owner_id)]);
  }
  const readable = new Map<unknown, ReadonlySet<unknown>>();
  for (const [resource, ids] of owners)
    readable.set(resource, await app.readableRecords(resource, [...new Set(ids)], ctx));
  return readable;
}

/** The caller's read rule on files as a condition; false when it refuses her. */
async function readScope(
  access: UploadAccess,
  ctx: EndpointContext,
  profile: PluginContext["profile"],
  id?: string,
) {
  const admission = await unlessForbidden(admitUploadRows(access, "read", ctx, profile, id), false as const);
  return admission === false ? false : admission.scope;
}

/** `image/*` matches a family; anything else one type exactly. */
function typeMatches(allowed: string, mimeType: string): boolean {
  const pattern = allowed.toLowerCase();
  const actual = mimeType.toLowerCase();
  return pattern.endsWith("/*") ? actual.startsWith(pattern.slice(0, -1)) : actual === pattern;
}

function unusable(field: string, message: string): APIError {
  return new APIError("VALIDATION_ERROR", `"${field}": ${message}`, { details: [{ path: field, message }] });
}
