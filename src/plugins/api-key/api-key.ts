// apiKey(): identifies callers by a key in a header. A known key → its user; an unknown key →
// 401; no key → anonymous. Keys are compared in constant time.

import { timingSafeEqual } from "node:crypto";
import { APIError } from "../../core/errors.ts";
import type { User } from "../../core/identity.ts";
import { checkOptionKeys, optionKeys } from "../../core/option-keys.ts";
import type { CrudkitPlugin } from "../../core/plugin.ts";

export interface ApiKeyOptions {
  /** Each key and the user it stands for (the user may carry `roles`). */
  keys: Readonly<Record<string, User>>;
  /** Header holding the key. @default "x-api-key" */
  header?: string;
}

const API_KEY_OPTION_KEYS = optionKeys<ApiKeyOptions>()("keys header");

/**
 * Identifies callers by an API key header. Keys are compared in constant time; an unknown key
 * answers 401, no key leaves the caller anonymous.
 *
 * @example
 * apiKey({ keys: { [process.env.ADMIN_KEY!]: { id: "admin", roles: ["admin"] } }, header: "x-api-key" })
 */
export function apiKey(options: ApiKeyOptions) {
  checkOptionKeys(options, API_KEY_OPTION_KEYS, "apiKey()");
  const header = (options.header ?? "x-api-key").toLowerCase();
  const entries = Object.entries(options.keys);
  if (entries.some(([key]) => key === "")) throw new Error("apiKey(): an API key cannot be empty.");
  // Every key is padded to one width, so each comparison reads the same number of bytes whatever
  // was sent; lengths are compared separately, as numbers. (Cheaper than hashing every request.)
  const width = Math.max(0, ...entries.map(([key]) => Buffer.byteLength(key)));
  const known = entries.map(([key, user]) => ({
    padded: padded(Buffer.from(key), width),
    length: Buffer.byteLength(key),
    user,
  }));
  const candidate = Buffer.alloc(width);
  return {
    id: "api-key",
    securitySchemes: { ApiKey: { type: "apiKey", in: "header", name: header } },
    identify(request: Request): User | null {
      const key = request.headers.get(header);
      if (key === null) return null;
      const length = Buffer.byteLength(key);
      let match: User | null = null;
      // Longer than every key: no key matches, and saying so reveals only that bound.
      if (length <= width) {
        // Written into one buffer kept for the purpose (identify runs start to end without
        // yielding), not two allocated per request.
        candidate.fill(0);
        candidate.write(key);
        // Every key is compared, so timing does not tell which one (or whether any) matched.
        for (const k of known)
          if (timingSafeEqual(candidate, k.padded) && length === k.length) match = k.user;
      }
      if (!match) throw new APIError("UNAUTHORIZED", `The API key in the ${header} header is not valid.`);
      return match;
    },
  } satisfies CrudkitPlugin;
}

function padded(bytes: Buffer, width: number): Buffer {
  const out = Buffer.alloc(width);
  bytes.copy(out);
  return out;
}
