// Options of the upload plugin, with the spec's defaults.

import type { Kysely } from "kysely";
import type { MaybePromise, User } from "../../core/identity.ts";
import type { RequestCache } from "../../core/request-cache.ts";
import type { PluginRowRule, PluginRule } from "../../kit/index.ts";
import type { StorageAdapter } from "../../storage/adapter.ts";
import type { FileNaming } from "./file-naming.ts";
import type { UploadedFileRecord } from "./uploaded-files-table.ts";

export type UploadOperation = "upload" | "read" | "download" | "delete" | "list";

export interface UploadAccessContext {
  user: User | null;
  headers: Headers;
  operation: UploadOperation;
  /** The file's id (read, download, delete). */
  id?: string;
  /** The database, with the server's authority. */
  db: Kysely<any>;
  /** This request's memo: a lookup made through it runs once however many rules ask. */
  cache: RequestCache;
}

export type UploadAccessRule = PluginRule<UploadAccessContext>;

/** A rule that may also answer with the files the caller may act on: `{ uploadedBy: user.id }`. */
export type UploadRowRule = PluginRowRule<UploadAccessContext, UploadedFileRecord>;

/** One rule per operation; read, download, delete and list may return a `Where` over file records. */
export interface UploadAccess {
  upload?: UploadAccessRule;
  read?: UploadRowRule;
  download?: UploadRowRule;
  delete?: UploadRowRule;
  list?: UploadRowRule;
}

/** What `validate` sees of a file: at least its size, name and type. */
export interface UploadedFileInfo {
  size: number;
  /** The name as uploaded. */
  filename: string;
  mimeType: string;
  metadata: Record<string, unknown> | null;
}

export interface UploadOptions {
  /** @default true */
  enabled?: boolean;
  /** Where files go. @default new LocalStorage(uploadDir, baseUrl) */
  storage?: StorageAdapter;
  /** Directory of the default local storage. @default "./uploads" */
  uploadDir?: string;
  /** Base URL under which the host serves stored files (for example `/uploads`). */
  baseUrl?: string;
  /** Largest file in bytes. @default 10485760 */
  maxFileSize?: number;
  /** Allowed MIME types; empty allows all. `image/*` allows a family. @default [] */
  allowedMimeTypes?: readonly string[];
  /** `uuid`, `original` (sanitized, never overwriting) or a function of the original name. @default "uuid" */
  fileNaming?: FileNaming;
  /**
   * Where a file whose name and type arrive after its content waits until they do. Created
   * (mode 0700) when missing; stale files there are swept at startup.
   * @default join(os.tmpdir(), "crudkit-spool")
   */
  spoolDir?: string;
  /** Keep a row per file in `uploaded_files`. @default true */
  trackInDatabase?: boolean;
  /** Custom check once the file is received: false or a throw rejects it (400). */
  validate?: (file: UploadedFileInfo) => MaybePromise<boolean>;
  /** One rule per operation; an operation without a rule is denied. @default {} */
  access?: UploadAccess;
  /**
   * Who may read and download a file a record owns (a `fileRef` field holds it): `"rule"`, the
   * read and download rules above; `"record"`, whoever may read the owning record, and no one else.
   * @default "rule"
   */
  ownedFileAccess?: "rule" | "record";
}
