// Optimistic concurrency for updates and deletes: the version a caller names in `If-Match` is
// compared with the record's under its row lock, in the write's transaction, so of many writers
// holding the same version exactly one wins and the others get 412.

import type { EndpointContext } from "../core/endpoint.ts";
import { APIError } from "../core/errors.ts";
import { type IfMatch, readIfMatch } from "../core/etag.ts";
import type { ResourceRuntime } from "./runtime.ts";

/** The request's `If-Match` (400 when malformed); 428 when the resource requires one and none came. */
export function ifMatchOf(rt: ResourceRuntime, ctx: EndpointContext): IfMatch {
  const ifMatch = readIfMatch(ctx.headers);
  if (ifMatch === undefined && rt.resource.requireIfMatch && !ctx.overrideAccess)
    throw new APIError(
      "PRECONDITION_REQUIRED",
      `Changing a ${rt.resource.name} requires If-Match with the ETag of the version you read; read it, then send its ETag.`,
    );
  return ifMatch;
}
