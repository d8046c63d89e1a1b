// crudkit/plugins: the server plugins.

export { type ApiKeyOptions, apiKey } from "./api-key/api-key.ts";
export { extensionOf, type FileNaming, sanitizeFilename } from "./upload/file-naming.ts";
export type {
  UploadAccessContext,
  UploadAccessRule,
  UploadedFileInfo,
  UploadOperation,
  UploadOptions,
} from "./upload/options.ts";
export type { ListFilesInput, UploadFileInput } from "./upload/routes.ts";
export { upload } from "./upload/upload.ts";
export type { UploadedFileRecord } from "./upload/uploaded-files-table.ts";
