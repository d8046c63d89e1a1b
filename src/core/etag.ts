// Entity tags: the version of a record as one caller sees it, and the If-Match / If-None-Match
// checks that use it (RFC 9110 §8.8.3, §13.1).
//
// The tag is a hash of the record's visible fields in a canonical form (keys sorted at every
// level), so it needs no column, agrees across instances and databases, and says nothing about
// fields hidden from the caller: two callers with different field rules see different tags.

import { canonicalHash } from "./canonical-json.ts";
import { APIError } from "./errors.ts";

/**
 * The entity tag of a record as the caller received it: what `ETag` carries on read, create and
 * update, and what `If-Match` must name. Computed from the record as stored (before `afterRead`
 * hooks change it).
 *
 * @example
 * const hat = await app.api.readProduct({ params: { id } });
 * await app.api.updateProduct({ params: { id }, body: { price: 6 }, ifMatch: etagOf(hat) });
 */
export function etagOf(record: object): string {
  return `"${canonicalHash(record)}"`;
}

/** A record answered with its entity tag: the HTTP layer sends `ETag`, and 304 when it may. */
export class Versioned {
  #etag: string | undefined;
  constructor(
    readonly data: object,
    /** The visible record the tag is taken from (before afterRead hooks and expansions), or its tag. */
    private readonly stored: object | string,
    /** A GET may answer 304 to a matching `If-None-Match` (not with expansions: they change alone). */
    readonly revalidates: boolean,
    /** The answer's status when it is not the endpoint's (a PUT that created its record: 201). */
    readonly status?: number,
  ) {}

  get etag(): string {
    this.#etag ??= typeof this.stored === "string" ? this.stored : etagOf(this.stored);
    return this.#etag;
  }
}

const MAX_TAGS = 64;
// One entity tag: an optional weak prefix, then a quoted string of the allowed characters.
const TAG = /^(W\/)?"([\x21\x23-\x7e\x80-\xff]*)"$/;

interface EntityTag {
  weak: boolean;
  tag: string;
}

/** `*`, or the tags of a comma-separated list; a malformed header is the caller's mistake (400). */
function parseTags(header: string, name: string): "*" | EntityTag[] {
  const trimmed = header.trim();
  if (trimmed === "*") return "*";
  // Empty elements (`"a", ,"b",`) are ignored, as RFC 9110 §5.6.1 asks of list headers.
  const parts = trimmed.split(",").filter((part) => part.trim() !== "");
  if (parts.length > MAX_TAGS)
    throw new APIError("BAD_REQUEST", `${name} lists more than ${MAX_TAGS} entity tags.`);
  const tags: EntityTag[] = [];
  for (const part of parts) {
    const match = TAG.exec(part.trim());
    if (!match)
      throw new APIError(
        "BAD_REQUEST",
        `${name} must be "*" or a list of quoted entity tags, as the ETag header gives them.`,
      );
    tags.push({ weak: match[1] !== undefined, tag: `"${match[2]}"` });
  }
  return tags;
}

/** A request's `If-Match`, checked before any lookup (a malformed one is a 400 either way). */
export type IfMatch = "*" | EntityTag[] | undefined;

export function readIfMatch(headers: Headers): IfMatch {
  const header = headers.get("if-match");
  return header === null ? undefined : parseTags(header, "If-Match");
}

/** Strong comparison: a weak tag never matches. Throws 412 when the record moved on. */
export function checkIfMatch(ifMatch: IfMatch, current: object, resource: string): void {
  if (ifMatch === undefined || ifMatch === "*") return;
  const etag = etagOf(current);
  if (ifMatch.some((t) => !t.weak && t.tag === etag)) return;
  throw new APIError(
    "PRECONDITION_FAILED",
    `This ${resource} changed since you read it (If-Match names an older version); read it again, then retry. Nothing was changed.`,
    { headers: { etag } },
  );
}

/** Weak comparison, for `If-None-Match` on a GET: true when the caller's copy is current. */
export function noneMatchHolds(header: string, etag: string): boolean {
  let tags: "*" | EntityTag[];
  try {
    tags = parseTags(header, "If-None-Match");
  } catch {
    // A cache revalidation that cannot be read is answered in full, never refused.
    return false;
  }
  // Weak comparison: the opaque tags alone, whether either side is marked weak (a page's `W/"…"`).
  const opaque = etag.startsWith("W/") ? etag.slice(2) : etag;
  return tags === "*" || tags.some((t) => t.tag === opaque);
}
