// Reads an upload body, `{ "file": "<base64>", "filename", "mimeType", "metadata"? }` in any key
// order, as it arrives: `file` is base64-decoded chunk by chunk and handed on, so memory does not
// grow with the file; the size limit is enforced on the base64 length before decoding.

import { APIError } from "../../core/errors.ts";

export type UploadEvent =
  | { kind: "field"; name: "filename" | "mimeType" | "metadata"; value: unknown }
  | { kind: "file-start" }
  | { kind: "file-bytes"; bytes: Uint8Array }
  | { kind: "file-end"; size: number };

export interface UploadBodyLimits {
  /** Largest decoded file, in bytes. */
  maxFileSize: number;
  /** Largest other field (raw JSON text), in bytes. @default 65536 */
  maxFieldBytes?: number;
  /** How deep the body may nest; `metadata` is one level below it. @default 32 */
  maxDepth?: number;
}

const FIELDS = new Set(["file", "filename", "mimeType", "metadata"]);
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

const bad = (message: string) => new APIError("BAD_REQUEST", message);
const malformed = () => bad("The request body is not valid JSON.");

export async function* parseUploadBody(
  body: AsyncIterable<Uint8Array>,
  limits: UploadBodyLimits,
): AsyncGenerator<UploadEvent> {
  const maxFieldBytes = limits.maxFieldBytes ?? 64 * 1024;
  const maxDepth = limits.maxDepth ?? 32;
  // The most base64 characters a file within the limit can take.
  const maxChars = 4 * Math.ceil(limits.maxFileSize / 3);
  type State =
    | "start"
    | "key-or-end"
    | "key"
    | "colon"
    | "value"
    | "string"
    | "file"
    | "raw"
    | "comma-or-end"
    | "done";
  let state: State = "start";
  let key = "";
  let raw: number[] = [];
  let escaped = false;
  const seen = new Set<string>();
  // file state
  let chars = 0;
  let pending = ""; // base64 characters not yet decoded (fewer than 4)
  let padCount = 0;
  let head = "";
  let decoded = 0;
  // raw (metadata) state
  let depth = 0;
  let inString = false;

  const finishString = (): string => {
    try {
      return JSON.parse(`"${Buffer.from(raw).toString("utf8")}"`) as string;
    } catch {
      throw malformed();
    }
  };

  const takeBase64 = function* (segment: string): Generator<UploadEvent> {
    // The first characters, however the chunks fell, tell a data URL from broken base64.
    if (head.length < 5) head += segment.slice(0, 5 - head.length);
    if (head.startsWith("data:")) {
      throw bad(
        'The file must be plain base64 without a data-URL prefix: strip "data:…;base64," before sending.',
      );
    }
    const pad = segment.indexOf("=");
    const padding = pad === -1 ? 0 : segment.length - pad;
    const data = segment.length - padding;
    // "=" may only end the string, at most twice (possibly split across chunks).
    if (
      (padCount > 0 && data > 0) ||
      (pad !== -1 && !/^=+$/.test(segment.slice(pad))) ||
      padCount + padding > 2
    ) {
      throw bad("The file is not valid base64: padding may only end it.");
    }
    // Node's decoder also takes base64url; strict base64 does not.
    if (segment.indexOf("-") !== -1 || segment.indexOf("_") !== -1)
      throw bad("The file is not valid base64.");
    padCount += padding;
    chars += segment.length;
    if (chars > maxChars) {
      throw new APIError(
        "PAYLOAD_TOO_LARGE",
        `The file is larger than the limit of ${limits.maxFileSize} bytes.`,
      );
    }
    yield* decode(segment);
  };

  /**
   * Decodes the whole quartets of what arrived (at most 3 characters wait for the next chunk). Node
   * skips characters outside base64 while decoding, so any such character shows as missing bytes.
   */
  const decode = function* (segment: string): Generator<UploadEvent> {
    const text = pending + segment;
    const whole = text.length - (text.length % 4);
    pending = text.slice(whole);
    if (whole === 0) return;
    const quartets = whole === text.length ? text : text.slice(0, whole);
    const bytes = Buffer.from(quartets, "base64");
    // Padding ends the string, so only the last quartet can hold it.
    const padded = quartets.endsWith("==") ? 2 : quartets.endsWith("=") ? 1 : 0;
    if (bytes.byteLength !== (whole / 4) * 3 - padded) throw bad("The file is not valid base64.");
    decoded += bytes.byteLength;
    yield { kind: "file-bytes", bytes };
  };

  for await (const chunk of body) {
    let i = 0;
    while (i < chunk.length) {
      const c = chunk[i]!;
      switch (state) {
        case "start":
        case "key-or-end":
        case "colon":
        case "value":
        case "comma-or-end":
        case "done": {
          if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) {
            i++;
            continue;
          }
          if (state === "start") {
            if (c !== 0x7b)
              throw bad("The upload must be a JSON object: { file, filename, mimeType, metadata? }.");
            state = "key-or-end";
          } else if (state === "key-or-end") {
            if (c === 0x7d && seen.size === 0) state = "done";
            else if (c === QUOTE) {
              state = "key";
              raw = [];
            } else throw malformed();
          } else if (state === "colon") {
            if (c !== 0x3a) throw malformed();
            state = "value";
          } else if (state === "value") {
            if (key === "file") {
              if (c !== QUOTE)
                throw new APIError("VALIDATION_ERROR", "file must be a base64 string.", {
                  details: [{ path: "file", message: "Expected a base64 string." }],
                });
              state = "file";
              yield { kind: "file-start" };
            } else if (key === "metadata") {
              state = "raw";
              raw = [];
              depth = 0;
              inString = false;
              continue; // the raw scanner reads this byte
            } else {
              if (c !== QUOTE)
                throw new APIError("VALIDATION_ERROR", `${key} must be a string.`, {
                  details: [{ path: key, message: "Expected a string." }],
                });
              state = "string";
              raw = [];
            }
          } else if (state === "comma-or-end") {
            if (c === 0x2c) state = "key-or-end";
            else if (c === 0x7d) state = "done";
            else throw malformed();
          } else {
            throw malformed(); // content after the closing brace
          }
          i++;
          continue;
        }
        case "key":
        case "string": {
          if (escaped) escaped = false;
          else if (c === BACKSLASH) escaped = true;
          else if (c === QUOTE) {
            const text = finishString();
            if (state === "key") {
              if (!FIELDS.has(text)) {
                throw new APIError(
                  "VALIDATION_ERROR",
                  `Unknown field "${/^\w{1,40}$/.test(text) ? text : "?"}".`,
                  {
                    details: [{ path: text.slice(0, 40), message: "Unknown field." }],
                  },
                );
              }
              if (seen.has(text)) throw bad(`The field "${text}" appears twice.`);
              seen.add(text);
              key = text;
              state = "colon";
            } else {
              yield { kind: "field", name: key as "filename" | "mimeType", value: text };
              state = "comma-or-end";
            }
            i++;
            continue;
          }
          if (raw.length >= maxFieldBytes)
            throw bad(`The field "${state === "key" ? "name" : key}" is too long.`);
          raw.push(c);
          i++;
          continue;
        }
        case "file": {
          // Fast path: everything up to the closing quote (or the chunk's end) at once.
          let end = chunk.indexOf(QUOTE, i);
          if (end === -1) end = chunk.length;
          let segment = Buffer.from(chunk.buffer, chunk.byteOffset + i, end - i).toString("latin1");
          if (escaped || segment.includes("\\")) {
            // JSON may escape "/" as "\/"; no other escape can occur in base64.
            segment = (escaped ? "\\" : "") + segment;
            escaped = segment.endsWith("\\") && !segment.endsWith("\\\\");
            if (escaped) segment = segment.slice(0, -1);
            // `\"` escapes the quote: JSON reads on past it, so it must not end the string here
            // (a parser that disagrees with JSON.parse is one a WAF can be fooled by). A quote
            // cannot be in base64 anyway.
            if (escaped && end < chunk.length) throw bad("The file is not valid base64.");
            if (/\\[^/]|\\$/.test(segment)) throw bad("The file is not valid base64.");
            segment = segment.replace(/\\\//g, "/");
          }
          yield* takeBase64(segment);
          i = end;
          if (end < chunk.length) {
            if (pending.length > 0)
              throw bad("The file is not valid base64: its length must be a multiple of 4.");
            if (decoded > limits.maxFileSize) {
              throw new APIError(
                "PAYLOAD_TOO_LARGE",
                `The file is larger than the limit of ${limits.maxFileSize} bytes.`,
              );
            }
            yield { kind: "file-end", size: decoded };
            state = "comma-or-end";
            i++;
          }
          continue;
        }
        case "raw": {
          if (raw.length >= maxFieldBytes) throw bad(`The field "${key}" is too long.`);
          if (inString) {
            if (escaped) escaped = false;
            else if (c === BACKSLASH) escaped = true;
            else if (c === QUOTE) inString = false;
          } else if (c === QUOTE) inString = true;
          else if (c === 0x7b || c === 0x5b) {
            // Counted as it arrives, so a deep value is refused before it is parsed; the body is one level.
            if (++depth + 1 > maxDepth)
              throw bad(`The JSON body is nested deeper than the limit of ${maxDepth} levels.`);
          } else if (c === 0x7d || c === 0x5d) {
            if (depth === 0) {
              // The closing brace of the whole body ends a primitive value.
              yield { kind: "field", name: "metadata", value: parseRaw(raw) };
              state = "comma-or-end";
              continue;
            }
            depth--;
          } else if (c === 0x2c && depth === 0) {
            yield { kind: "field", name: "metadata", value: parseRaw(raw) };
            state = "comma-or-end";
            continue;
          }
          raw.push(c);
          i++;
          continue;
        }
      }
    }
  }
  if (state !== "done") throw malformed();
}

function parseRaw(raw: number[]): unknown {
  try {
    return JSON.parse(Buffer.from(raw).toString("utf8"));
  } catch {
    throw malformed();
  }
}
