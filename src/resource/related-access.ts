// What a caller may read of a resource she reaches through a relation (expand, relation filters,
// reference checks): that resource's read rule and field rules, asked once per request and
// resource: an operation makes one `Readers` map per request and hands it to each of them, so a
// request that filters on a relation and expands it asks once, and nothing is kept past it.

import type { EndpointContext } from "../core/endpoint.ts";
import { unlessForbidden } from "../core/errors.ts";
import { type Admission, decide } from "./admission.ts";
import { NO_FIELDS } from "./field-access.ts";
import type { ResourceRuntime } from "./runtime.ts";

/** Per resource name, the caller's read admission (null: the read rule refuses her). */
export type Readers = Map<string, Promise<Admission | null>>;

const EVERYTHING: Admission = { user: null, data: {}, scope: undefined, where: undefined, hidden: NO_FIELDS };

/** The caller's read admission on a resource, or null when its read rule refuses her. */
export function readerOf(
  rt: ResourceRuntime,
  ctx: EndpointContext,
  readers: Readers,
): Promise<Admission | null> {
  const name = rt.resource.name;
  let reader = readers.get(name);
  if (!reader) {
    reader = ctx.overrideAccess
      ? Promise.resolve(EVERYTHING)
      : ctx.getUser().then((user) =>
          unlessForbidden(
            decide(rt, {
              user,
              headers: ctx.headers,
              operation: "read",
              resource: name,
              db: ctx.db,
              cache: ctx.cache,
            }),
            null,
          ),
        );
    readers.set(name, reader);
  }
  return reader;
}
