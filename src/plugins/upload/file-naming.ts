// Stored file names: `uuid` (a fresh UUIDv7 plus the sanitized extension), `original` (the
// sanitized base name), or a function whose result is sanitized the same way. Whatever the
// uploader sends, the result is a plain name that cannot leave the upload directory or prefix.

import { createHash } from "node:crypto";
import { uuidv7 } from "../../core/id.ts";

export type FileNaming = "uuid" | "original" | ((originalName: string) => string);

const MAX_LENGTH = 200;
const MAX_EXTENSION = 16;
const WINDOWS_RESERVED = /^(con|prn|aux|nul|com\d|lpt\d)(\.|$)/i;

/**
 * The extension a stored file gets, from its validated MIME type: only types a static server
 * (nginx, serve-static) serves as something inert. HTML, SVG, XML and scripts get none, so a file
 * named `promo.html` but declared `image/gif` can never be served as a page (stored XSS).
 */
const EXTENSIONS: ReadonlyMap<string, readonly string[]> = new Map([
  ["image/png", [".png"]],
  ["image/jpeg", [".jpg", ".jpeg"]],
  ["image/gif", [".gif"]],
  ["image/webp", [".webp"]],
  ["image/avif", [".avif"]],
  ["image/bmp", [".bmp"]],
  ["application/pdf", [".pdf"]],
  ["text/plain", [".txt"]],
  ["text/csv", [".csv"]],
  ["application/json", [".json"]],
  ["audio/mpeg", [".mp3"]],
  ["audio/ogg", [".ogg", ".oga"]],
  ["audio/wav", [".wav"]],
  ["video/mp4", [".mp4"]],
  ["video/webm", [".webm"]],
  ["video/ogg", [".ogv"]],
  ["application/zip", [".zip"]],
  ["application/gzip", [".gz"]],
]);

/** The extensions a MIME type may be stored with (the first is the one given); none when unlisted. */
export function extensionsFor(mimeType: string): readonly string[] {
  return EXTENSIONS.get(mimeType.split(";", 1)[0]!.trim().toLowerCase()) ?? [];
}

/**
 * The name a file is stored under. Its extension comes from the MIME type, never the uploader:
 * `uuid` is a fresh UUIDv7 with the type's extension; `original` keeps the sanitized name when its
 * extension agrees with the type and replaces it otherwise, and puts it in the uploader's own
 * namespace (a prefix from her id), so a name taken by another user is never revealed; a function
 * is sanitized and corrected the same way.
 */
export function storedName(
  naming: FileNaming,
  originalName: string,
  mimeType = "application/octet-stream",
  owner: string | null = null,
): string {
  const allowed = extensionsFor(mimeType);
  if (naming === "uuid") return `${uuidv7()}${allowed[0] ?? ""}`;
  const name = sanitizeFilename(naming === "original" ? originalName : naming(originalName));
  const own = extensionOf(name);
  // Inner dots go too: a server that acts on any extension (Apache's) must not see `x.php.png` as PHP.
  const base = (own ? name.slice(0, -own.length) : name).replace(/\./g, "_");
  const typed = `${base}${allowed.includes(own) ? own : (allowed[0] ?? "")}`;
  return naming === "original" ? sanitizeFilename(`${namespaceOf(owner)}_${typed}`) : typed;
}

/** A short, stable prefix per uploader; anonymous uploads share one. */
function namespaceOf(owner: string | null): string {
  return owner === null ? "anonymous" : `u${createHash("sha256").update(owner).digest("hex").slice(0, 12)}`;
}

/**
 * A safe base name: only the part after the last `/` or `\`; accents folded; anything but letters,
 * digits, `.`, `-` and `_` replaced; no leading dots (no `..`, no hidden files); at most 200
 * characters, keeping the extension; never empty.
 */
export function sanitizeFilename(name: string): string {
  const base = String(name).split(/[/\\]/).pop() ?? "";
  let safe = base
    .normalize("NFKD")
    .replace(/\p{M}/gu, "")
    .replace(/[^A-Za-z0-9._-]+/g, "_")
    .replace(/_+/g, "_")
    .replace(/^[._-]+/, "")
    .replace(/[._]+$/, "");
  if (WINDOWS_RESERVED.test(safe)) safe = `_${safe}`;
  if (safe.length > MAX_LENGTH) {
    const extension = extensionOf(safe);
    safe = safe.slice(0, MAX_LENGTH - extension.length) + extension;
  }
  return safe === "" ? "file" : safe;
}

/** `.png` for `Photo.PNG`: lower case, letters and digits only, or nothing. */
export function extensionOf(name: string): string {
  const base = String(name).split(/[/\\]/).pop() ?? "";
  const dot = base.lastIndexOf(".");
  if (dot <= 0) return "";
  const extension = base.slice(dot + 1).toLowerCase();
  return /^[a-z0-9]{1,16}$/.test(extension) && extension.length <= MAX_EXTENSION ? `.${extension}` : "";
}
