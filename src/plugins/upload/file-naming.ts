// Stored file names: `uuid` (a fresh UUIDv7 plus the sanitized extension), `original` (the
// sanitized base name), or a function whose result is sanitized the same way. Whatever the
// uploader sends, the result is a plain name that cannot leave the upload directory or prefix.

import { uuidv7 } from "../../core/id.ts";

export type FileNaming = "uuid" | "original" | ((originalName: string) => string);

const MAX_LENGTH = 200;
const MAX_EXTENSION = 16;
const WINDOWS_RESERVED = /^(con|prn|aux|nul|com\d|lpt\d)(\.|$)/i;

export function storedName(naming: FileNaming, originalName: string): string {
  if (naming === "uuid") return `${uuidv7()}${extensionOf(originalName)}`;
  return sanitizeFilename(naming === "original" ? originalName : naming(originalName));
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
