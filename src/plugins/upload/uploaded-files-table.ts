// The `uploaded_files` table (columns exactly as the spec lists them) and its rows as API records.
// Records never carry `path`: it is the storage key, not for callers.

import {
  dateFromColumn,
  type FileRecord,
  jsonFromColumn,
  type TableDefinition,
  tableFilterFields,
} from "../../kit/index.ts";

export const UPLOADED_FILES = "uploaded_files";

export const uploadedFilesTable: TableDefinition = {
  name: UPLOADED_FILES,
  columns: {
    id: { type: "text", primaryKey: true, notNull: true },
    filename: { type: "text", notNull: true },
    original_name: { type: "text", notNull: true },
    mime_type: { type: "text", notNull: true },
    size: { type: "integer", notNull: true },
    path: { type: "text", notNull: true },
    url: { type: "text" },
    uploaded_by: { type: "text" },
    uploaded_at: { type: "date", defaultNow: true },
    metadata: { type: "json" },
    // The record whose `fileRef` field holds the file (none while it is not attached), and when a
    // record let go of it: such a file is collected (crudkit gc, or right after the change).
    owner_resource: { type: "text" },
    owner_id: { type: "text" },
    owner_field: { type: "text" },
    released_at: { type: "date" },
  },
  indexes: [
    { name: "uploaded_files_uploaded_at_id_idx", columns: ["uploaded_at", "id"] },
    { name: "uploaded_files_mime_type_idx", columns: ["mime_type"] },
    // Rules that scope files to their uploader (`{ uploadedBy: user.id }`) list through this one.
    { name: "uploaded_files_uploaded_by_idx", columns: ["uploaded_by", "uploaded_at"] },
    // `crudkit gc` looks for files no record owns.
    { name: "uploaded_files_owner_id_uploaded_at_idx", columns: ["owner_id", "uploaded_at"] },
  ],
};

/** What a rule's `Where` and `filter[…]` may name on file records, and the columns behind them. */
export const uploadFilterFields = tableFilterFields([
  ["id", "string", "id"],
  ["filename", "string", "filename"],
  ["originalName", "string", "original_name"],
  ["mimeType", "string", "mime_type"],
  ["size", "integer", "size"],
  ["url", "string", "url"],
  ["uploadedBy", "string", "uploaded_by"],
  ["uploadedAt", "date", "uploaded_at"],
]);

/** A file record, as the upload routes answer and `expand` gives it. */
export type UploadedFileRecord = FileRecord;

export type UploadedFileRow = Record<string, unknown>;

/** `log` hears of metadata that cannot be read back; the record still answers. */
export function toRecord(
  row: UploadedFileRow,
  log: (message: string, error: unknown) => void,
): UploadedFileRecord {
  const uploadedAt = row.uploaded_at;
  const metadata = row.metadata;
  return {
    id: String(row.id),
    filename: String(row.filename),
    originalName: String(row.original_name),
    mimeType: String(row.mime_type),
    size: Number(row.size),
    url: (row.url as string | null) ?? null,
    uploadedBy: (row.uploaded_by as string | null) ?? null,
    uploadedAt: dateFromColumn(uploadedAt),
    metadata: jsonFromColumn(metadata, log) ?? null,
  };
}
