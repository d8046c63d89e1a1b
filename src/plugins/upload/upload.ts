// upload(): base64 uploads streamed to storage (local disk by default, S3 or a custom adapter),
// tracked in `uploaded_files`, with download, list and delete. Every option as the spec lists it.

import { mkdir } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { checkOptionKeys, optionKeys } from "../../core/option-keys.ts";
import type { CrudkitPlugin, PluginContext } from "../../core/plugin.ts";
import { LocalStorage } from "../../storage/local/local-storage.ts";
import { removeLeftovers } from "../../storage/local/new-file.ts";
import type { UploadOptions } from "./options.ts";
import { type OwnedFilesState, ownedFiles } from "./owned-files.ts";
import { SPOOL_PREFIX } from "./receive-upload.ts";
import { uploadRoutes } from "./routes.ts";
import { NOTE_PREFIX, removeUnrecorded } from "./storing-notes.ts";
import { tracedStorage } from "./traced-storage.ts";
import { UPLOADED_FILES, uploadedFilesTable } from "./uploaded-files-table.ts";

const STALE_AFTER_MS = 60 * 60 * 1000;

/** Whether a record of `uploaded_files` holds the stored name. */
function recordedIn(app: PluginContext) {
  return async (name: string) =>
    (await app.db
      .selectFrom(UPLOADED_FILES)
      .select("id")
      .where("filename", "=", name)
      .limit(1)
      .executeTakeFirst()) !== undefined;
}

const UPLOAD_OPTION_KEYS = optionKeys<UploadOptions>()(
  "enabled storage uploadDir baseUrl maxFileSize allowedMimeTypes fileNaming spoolDir trackInDatabase validate access ownedFileAccess",
);

/**
 * File uploads: base64 JSON streamed to storage (local disk by default, S3, or your adapter),
 * tracked in `uploaded_files`, with download, list and delete, each behind its own rule.
 *
 * @example
 * upload({
 *   storage: new S3Storage({ client: new S3Client({}), bucket: "uploads" }),
 *   maxFileSize: 10 * 1024 * 1024,
 *   allowedMimeTypes: ["image/*", "application/pdf"],
 *   access: { upload: signedIn, read: signedIn, download: signedIn, delete: isAdmin, list: signedIn },
 * })
 */
export function upload(options: UploadOptions = {}) {
  checkOptionKeys(options, UPLOAD_OPTION_KEYS, "upload()");
  const track = options.trackInDatabase ?? true;
  const enabled = options.enabled ?? true;
  const given = options.storage ?? new LocalStorage(options.uploadDir ?? "./uploads", options.baseUrl);
  const storage = tracedStorage(given);
  const spoolDir = resolve(options.spoolDir ?? join(tmpdir(), "crudkit-spool"));
  const ownedFileAccess = options.ownedFileAccess ?? "rule";
  const owned: OwnedFilesState = {
    app: undefined,
    access: options.access ?? {},
    storage,
    track,
    ownedFileAccess,
  };
  return {
    id: "upload",
    tables: enabled && track ? [uploadedFilesTable] : [],
    files: enabled ? ownedFiles(owned) : undefined,
    endpoints: (app: PluginContext) => {
      owned.app = app;
      return enabled
        ? uploadRoutes({
            app,
            track,
            access: options.access ?? {},
            ownedFileAccess,
            rules: {
              storage,
              maxFileSize: options.maxFileSize ?? 10 * 1024 * 1024,
              allowedMimeTypes: options.allowedMimeTypes ?? [],
              fileNaming: options.fileNaming ?? "uuid",
              validate: options.validate,
              spoolDir,
              maxJsonDepth: app.jsonDepth,
            },
          })
        : ([] as unknown as ReturnType<typeof uploadRoutes>);
    },
    async init(app: PluginContext) {
      if (!enabled) return;
      await mkdir(spoolDir, { recursive: true, mode: 0o700 });
      // What a process killed mid-upload left: a process of this machine that has ended (the
      // names carry its tag), or older than an hour, so no live upload's file.
      await removeLeftovers(spoolDir, SPOOL_PREFIX, STALE_AFTER_MS);
      if (given instanceof LocalStorage) await given.removeStaleTemporaries(STALE_AFTER_MS);
      // Files stored whose record never committed: the notes that name them.
      if (track)
        await removeLeftovers(
          spoolDir,
          NOTE_PREFIX,
          STALE_AFTER_MS,
          removeUnrecorded(storage, recordedIn(app), app.log),
        );
    },
  } satisfies CrudkitPlugin;
}
