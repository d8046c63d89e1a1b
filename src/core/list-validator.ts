// Weak validators for pages of records (`crudkit({ listETags: true })`): a client or cache that
// has a page sends its tag back, and an unchanged page is a 304 with no body. The tag is taken
// from what the answer depends on: the caller (a page computed for alice never validates for bob,
// even when bob would see the same records), the query, and the page's bytes, which carry every
// record's fields and versions as this caller may see them.

import { createHash } from "node:crypto";
import type { User } from "./identity.ts";

/** `W/"…"` for a page's JSON as `user` asked for it with `search` (the URL's query). */
export function listTag(json: string, user: User | null, search: string): string {
  const hash = createHash("sha1");
  if (user) hash.update(user.roles?.length ? `${user.id}\0${[...user.roles].sort().join(",")}` : user.id);
  hash.update("\0");
  hash.update(search);
  hash.update("\0");
  hash.update(json);
  return `W/"${hash.digest("base64url").slice(0, 27)}"`;
}
