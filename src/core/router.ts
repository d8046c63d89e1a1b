// Maps a path to the endpoints registered on it, one per method, so a known path with the wrong
// method can answer 405 with `Allow`. Every GET route answers HEAD too. Matching is Hono's: RegExpRouter, or TrieRouter for route
// sets RegExpRouter cannot compile (a static segment beside a parameter, like /echo/stats and /echo/:room).

import { RegExpRouter } from "hono/router/reg-exp-router";
import { SmartRouter } from "hono/router/smart-router";
import { TrieRouter } from "hono/router/trie-router";
import type { Endpoint } from "./endpoint.ts";
import { APIError, ConfigError } from "./errors.ts";
import { checkParameter } from "./input-checks.ts";

interface PathEntry {
  readonly pattern: string;
  /** How many `:name` parameters the pattern has. */
  readonly params: number;
  readonly methods: Record<string, Endpoint>;
  /** HEAD is answered by the GET endpoint unless one was registered for it (RFC 9110 §9.3.2). */
  headFromGet: boolean;
  allow: string;
}

export interface RouteMatch {
  endpoint: Endpoint;
  params: Record<string, string>;
  /** The route's template, as added (`/api/product/:id`): what logs and metrics name it by. */
  pattern: string;
}

const NO_PARAMS: Record<string, string> = Object.freeze({}) as Record<string, string>;

export class EndpointRouter {
  /** The prefix every route of the app is under (`/api`), named in a 404 for a path outside it. */
  readonly #basePath: string;
  readonly #entries = new Map<string, PathEntry>();
  readonly #router = new SmartRouter<PathEntry>({ routers: [new RegExpRouter(), new TrieRouter()] });

  constructor(basePath = "") {
    this.#basePath = basePath;
  }

  add(pattern: string, endpoint: Endpoint): void {
    let entry = this.#entries.get(pattern);
    if (!entry) {
      entry = { pattern, params: pattern.split(":").length - 1, methods: {}, headFromGet: false, allow: "" };
      this.#entries.set(pattern, entry);
      this.#router.add("ALL", pattern, entry);
    }
    const method: string = endpoint.method;
    if (entry.methods[method] && !(method === "HEAD" && entry.headFromGet))
      throw new ConfigError(`Two endpoints answer ${endpoint.method} ${pattern}.`);
    entry.methods[method] = endpoint;
    if (method === "HEAD") entry.headFromGet = false;
    else if (method === "GET" && !entry.methods.HEAD) {
      entry.methods.HEAD = endpoint;
      entry.headFromGet = true;
    }
    entry.allow = Object.keys(entry.methods).join(", ");
  }

  /** The endpoint for a method and a raw (still URL-encoded) path; throws 404 or 405. */
  match(method: string, path: string): RouteMatch {
    const [handlers, stash] = this.#router.match(method, path) as [
      [PathEntry, Record<string, number | string>][],
      string[]?,
    ];
    // HEAD's answer is GET's without the body, error messages included.
    const named = method === "HEAD" ? "GET" : method;
    const first = handlers[0];
    if (!first) throw this.#notFound(named, path);
    // Of the paths that answer this method, the most specific (fewest parameters) wins.
    let found = first;
    let fewest = Number.POSITIVE_INFINITY;
    for (const candidate of handlers) {
      if (Object.hasOwn(candidate[0].methods, method) && candidate[0].params < fewest) {
        found = candidate;
        fewest = candidate[0].params;
      }
    }
    const [entry, paramMap] = found;
    // Own keys only: a method named `constructor` or `toString` is no route's.
    const endpoint = Object.hasOwn(entry.methods, method) ? entry.methods[method] : undefined;
    if (!endpoint) {
      throw new APIError(
        "METHOD_NOT_ALLOWED",
        `${named} is not allowed on ${entry.pattern}; use ${entry.allow}.`,
        {
          headers: { allow: entry.allow },
        },
      );
    }
    return { endpoint, params: decodeParams(paramMap, stash), pattern: entry.pattern };
  }

  #notFound(method: string, path: string): APIError {
    return (
      outsideBasePath(this.#basePath, method, path) ??
      new APIError("NOT_FOUND", `No route answers ${method} ${clip(path)}.`)
    );
  }
}

/**
 * A path outside basePath is most often an app mounted under a prefix it was not told about
 * (Express `app.use("/v1", handler)`): the 404 says what was received and how to set basePath.
 */
function outsideBasePath(basePath: string, method: string, path: string): APIError | undefined {
  if (basePath === "" || path === basePath || path.startsWith(`${basePath}/`)) return undefined;
  return new APIError(
    "NOT_FOUND",
    `No route answers ${method} ${clip(path)}: crudkit serves paths under basePath "${basePath}", and this one is outside it. ` +
      "If the app is mounted under a prefix, set crudkit({ basePath }) to the prefix of the paths the handler receives " +
      '(basePath: "/" when they arrive without one).',
  );
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
    checkParameter(params[key], "path", key);
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
