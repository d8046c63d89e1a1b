// Access to uploads: one rule per operation, denied when unset, decided before any lookup.

import type { EndpointContext } from "../../core/endpoint.ts";
import { APIError } from "../../core/errors.ts";
import type { User } from "../../core/identity.ts";
import type { UploadAccessRule, UploadOperation } from "./options.ts";

export async function authorizeUpload(
  rules: Partial<Record<UploadOperation, UploadAccessRule>>,
  operation: UploadOperation,
  ctx: EndpointContext,
  id?: string,
): Promise<User | null> {
  const user = await ctx.getUser();
  if (ctx.overrideAccess) return user;
  const rule = rules[operation];
  if (rule === undefined) {
    throw new APIError(
      "FORBIDDEN",
      `Access denied: no access rule is set for ${operation} on uploads. Set access.${operation} in upload() to allow it.`,
    );
  }
  const allowed =
    typeof rule === "function"
      ? await rule({ user, headers: ctx.headers, operation, ...(id ? { id } : {}) })
      : rule;
  if (allowed !== true)
    throw new APIError("FORBIDDEN", `Access denied: the ${operation} rule of uploads refused this request.`);
  return user;
}
