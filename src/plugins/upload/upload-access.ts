// Access to uploads: one rule per operation, denied when unset, decided before any lookup.

import type { EndpointContext } from "../../core/endpoint.ts";
import type { User } from "../../core/identity.ts";
import { authorizePluginRoute } from "../../core/plugin-access.ts";
import type { UploadAccessContext, UploadAccessRule, UploadOperation } from "./options.ts";

export function authorizeUpload(
  rules: Partial<Record<UploadOperation, UploadAccessRule>>,
  operation: UploadOperation,
  ctx: EndpointContext,
  id?: string,
): Promise<User | null> {
  return authorizePluginRoute<UploadAccessContext>(
    rules[operation],
    ctx,
    { plugin: "upload", subject: "uploads", operation },
    { operation, ...(id ? { id } : {}) },
  );
}
