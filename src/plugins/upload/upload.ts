// upload(): base64 uploads streamed to storage (local disk by default, S3 or a custom adapter),
// tracked in `uploaded_files`, with download, list and delete. Every option as the spec lists it.

import type { CrudkitPlugin, PluginContext } from "../../core/plugin.ts";
import { LocalStorage } from "../../storage/local/local-storage.ts";
import type { UploadOptions } from "./options.ts";
import { uploadRoutes } from "./routes.ts";
import { uploadedFilesTable } from "./uploaded-files-table.ts";

export function upload(options: UploadOptions = {}) {
  const track = options.trackInDatabase ?? true;
  const enabled = options.enabled ?? true;
  const storage = options.storage ?? new LocalStorage(options.uploadDir ?? "./uploads", options.baseUrl);
  return {
    id: "upload",
    tables: enabled && track ? [uploadedFilesTable] : [],
    endpoints: (app: PluginContext) =>
      enabled
        ? uploadRoutes({
            app,
            track,
            access: options.access ?? {},
            rules: {
              storage,
              maxFileSize: options.maxFileSize ?? 10 * 1024 * 1024,
              allowedMimeTypes: options.allowedMimeTypes ?? [],
              fileNaming: options.fileNaming ?? "uuid",
              validate: options.validate,
            },
          })
        : ([] as unknown as ReturnType<typeof uploadRoutes>),
  } satisfies CrudkitPlugin;
}
