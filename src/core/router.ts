// Maps a path to the endpoints registered on it, one per method, so a known path with the wrong
// method can answer 405 with `Allow`. Matching is Hono's RegExpRouter.

import { RegExpRouter } from "hono/router/reg-exp-router";
import type { Endpoint } from "./endpoint.ts";
import { APIError, ConfigError } from "./errors.ts";

interface PathEntry {
  readonly pattern: string;
  readonly methods: Record<string, Endpoint>;
  allow: string;
}

export interface RouteMatch {
  endpoint: Endpoint;
  params: Record<string, string>;
}

const NO_PARAMS: Record<string, string> = Object.freeze({}) as Record<string, string>;

export class EndpointRouter {
  readonly #entries = new Map<string, PathEntry>();
  readonly #router = new RegExpRouter<PathEntry>();

  add(pattern: string, endpoint: Endpoint): void {
    let entry = this.#entries.get(pattern);
    if (!entry) {
      entry = { pattern, methods: {}, allow: "" };
      this.#entries.set(pattern, entry);
      this.#router.add("ALL", pattern, entry);
    }
    if (entry.methods[endpoint.method])
      throw new ConfigError(`Two endpoints answer ${endpoint.method} ${pattern}.`);
    entry.methods[endpoint.method] = endpoint;
    entry.allow = Object.keys(entry.methods).join(", ");
  }

  /** The endpoint for a method and a raw (still URL-encoded) path; throws 404 or 405. */
  match(method: string, path: string): RouteMatch {
    const [handlers, stash] = this.#router.match(method, path) as [
      [PathEntry, Record<string, number | string>][],
      string[]?,
    ];
    const first = handlers[0];
    if (!first) throw new APIError("NOT_FOUND", `No route answers ${method} ${clip(path)}.`);
    const found = handlers.find(([entry]) => entry.methods[method]) ?? first;
    const [entry, paramMap] = found;
    const endpoint = entry.methods[method];
    if (!endpoint) {
      throw new APIError(
        "METHOD_NOT_ALLOWED",
        `${method} is not allowed on ${entry.pattern}; use ${entry.allow}.`,
        {
          headers: { allow: entry.allow },
        },
      );
    }
    return { endpoint, params: decodeParams(paramMap, stash) };
  }
}

function decodeParams(
  map: Record<string, number | string>,
  stash: string[] | undefined,
): Record<string, string> {
  let params: Record<string, string> | undefined;
  for (const key in map) {
    const raw = stash ? stash[map[key] as number]! : (map[key] as string);
    params ??= {};
    params[key] = decode(raw);
  }
  return params ?? NO_PARAMS;
}

function decode(segment: string): string {
  if (!segment.includes("%")) return segment;
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new APIError("BAD_REQUEST", "The path holds invalid percent-encoding.");
  }
}

function clip(path: string): string {
  const printable = path.replace(/[^\x20-\x7e]/g, "?");
  return printable.length > 100 ? `${printable.slice(0, 100)}…` : printable;
}
