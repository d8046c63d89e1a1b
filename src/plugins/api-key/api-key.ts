// apiKey(): identifies callers by a key in a header. A known key → its user; an unknown key →
// 401; no key → anonymous. Keys are compared in constant time.

import { hash, timingSafeEqual } from "node:crypto";
import { APIError } from "../../core/errors.ts";
import type { User } from "../../core/identity.ts";
import type { CrudkitPlugin } from "../../core/plugin.ts";

export interface ApiKeyOptions {
  /** Each key and the user it stands for (the user may carry `roles`). */
  keys: Readonly<Record<string, User>>;
  /** Header holding the key. @default "x-api-key" */
  header?: string;
}

export function apiKey(options: ApiKeyOptions) {
  const header = (options.header ?? "x-api-key").toLowerCase();
  // Digests have one length, so each comparison takes the same time whatever the key sent.
  const known = Object.entries(options.keys).map(([key, user]) => ({ digest: digest(key), user }));
  if (known.some((_, i) => Object.keys(options.keys)[i] === ""))
    throw new Error("apiKey(): an API key cannot be empty.");
  return {
    id: "api-key",
    identify(request: Request): User | null {
      const key = request.headers.get(header);
      if (key === null) return null;
      const sent = digest(key);
      let match: User | null = null;
      // Every key is compared, so timing does not tell which one (or whether any) matched.
      for (const candidate of known) if (timingSafeEqual(sent, candidate.digest)) match = candidate.user;
      if (!match) throw new APIError("UNAUTHORIZED", `The API key in the ${header} header is not valid.`);
      return match;
    },
  } satisfies CrudkitPlugin;
}

function digest(key: string): Buffer {
  return hash("sha256", key, "buffer");
}
