// Which request headers can name the caller. An answer to an anonymous caller depends on their
// absence, so a shared cache must key on them (`Vary`): otherwise it could hand the anonymous
// page to a signed-in user, or keep one for the next anonymous caller.

import type { CrudkitPlugin } from "./plugin.ts";

/**
 * The `Vary` value for answers to anonymous callers: the headers the identity plugins read (from
 * their OpenAPI security schemes), and Authorization and Cookie for an app's own `identify`
 * function, which may read either. Undefined when nothing identifies callers.
 */
export function credentialVary(plugins: readonly CrudkitPlugin[], ownIdentify: boolean): string | undefined {
  const names = new Map<string, string>();
  const add = (name: string) => names.set(name.toLowerCase(), name);
  if (ownIdentify) {
    add("Authorization");
    add("Cookie");
  }
  for (const plugin of plugins) {
    if (!plugin.identify) continue;
    const schemes = Object.values(plugin.securitySchemes ?? {});
    if (schemes.length === 0) {
      add("Authorization");
      add("Cookie");
    }
    for (const scheme of schemes) {
      if (scheme.type === "apiKey" && scheme.in === "header" && typeof scheme.name === "string")
        add(scheme.name);
      else if (scheme.type === "apiKey" && scheme.in === "cookie") add("Cookie");
      else add("Authorization");
    }
  }
  return names.size > 0 ? [...names.values()].join(", ") : undefined;
}
