// Access to uploads: one rule per operation, denied when unset, decided before any lookup. The
// rules of read, download, delete and list may narrow the files to a `Where` over file records.

import type { EndpointContext } from "../../core/endpoint.ts";
import type { User } from "../../core/identity.ts";
import {
  admitPluginRows,
  authorizePluginRoute,
  type DialectProfile,
  type PluginAdmission,
} from "../../kit/index.ts";
import type { UploadAccess, UploadAccessContext } from "./options.ts";
import { uploadFilterFields } from "./uploaded-files-table.ts";

const site = (operation: string) => ({ plugin: "upload", subject: "uploads", operation });

export function authorizeUpload(access: UploadAccess, ctx: EndpointContext): Promise<User | null> {
  return authorizePluginRoute<UploadAccessContext>(access.upload, ctx, site("upload"), {
    operation: "upload",
  });
}

/** The caller and the files her rule lets her act on. */
export function admitUploadRows(
  access: UploadAccess,
  operation: "read" | "download" | "delete" | "list",
  ctx: EndpointContext,
  profile: DialectProfile,
  id?: string,
): Promise<PluginAdmission> {
  return admitPluginRows(
    access[operation],
    ctx,
    { ...site(operation), fields: uploadFilterFields, profile },
    { operation, ...(id ? { id } : {}) },
  );
}
