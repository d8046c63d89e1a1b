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
const tooLarge = (limit: number) =>
  new APIError("PAYLOAD_TOO_LARGE", `The file is larger than the limit of ${limit} bytes.`);

/** The body's events (fields, then the file's bytes as they decode), in the order they arrive. */
export async function* parseUploadBody(
  body: AsyncIterable<Uint8Array>,
  limits: UploadBodyLimits,
): AsyncGenerator<UploadEvent> {
  const parser = new UploadBodyParser(limits);
  for await (const chunk of body) yield* parser.chunk(chunk);
  if (parser.state !== "done") throw malformed();
}

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

/** A JSON object read byte by byte: a state per place in it, the file's string read in segments. */
class UploadBodyParser {
  state: State = "start";
  private key = "";
  private raw: number[] = [];
  private escaped = false;
  private readonly seen = new Set<string>();
  private readonly file: Base64Decoder;
  // `metadata`, kept raw and parsed once whole: how deep it is so far, and whether in a string.
  private depth = 0;
  private inString = false;
  private readonly maxFieldBytes: number;
  private readonly maxDepth: number;

  constructor(limits: UploadBodyLimits) {
    this.maxFieldBytes = limits.maxFieldBytes ?? 64 * 1024;
    this.maxDepth = limits.maxDepth ?? 32;
    this.file = new Base64Decoder(limits.maxFileSize);
  }

  *chunk(chunk: Uint8Array): Generator<UploadEvent> {
    let i = 0;
    while (i < chunk.length) {
      const c = chunk[i]!;
      switch (this.state) {
        case "key":
        case "string": {
          const event = this.text(c);
          if (event) yield event;
          i++;
          break;
        }
        case "file":
          i = yield* this.fileSegment(chunk, i);
          break;
        case "raw": {
          const event = this.rawByte(c);
          // The byte that ends `metadata` is read again as punctuation.
          if (event) yield event;
          else i++;
          break;
        }
        default: {
          const event = this.punctuation(c);
          if (event) yield event;
          // The first byte of `metadata` is read again as part of it (`punctuation` moved on to it).
          if ((this.state as State) !== "raw") i++;
        }
      }
    }
  }

  /** Whitespace, braces, colons and commas, and the first byte of a value. */
  private punctuation(c: number): UploadEvent | undefined {
    if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) return;
    switch (this.state) {
      case "start":
        if (c !== 0x7b)
          throw bad("The upload must be a JSON object: { file, filename, mimeType, metadata? }.");
        this.state = "key-or-end";
        return;
      case "key-or-end":
        if (c === 0x7d && this.seen.size === 0) this.state = "done";
        else if (c === QUOTE) {
          this.state = "key";
          this.raw = [];
        } else throw malformed();
        return;
      case "colon":
        if (c !== 0x3a) throw malformed();
        this.state = "value";
        return;
      case "value":
        return this.valueStart(c);
      case "comma-or-end":
        if (c === 0x2c) this.state = "key-or-end";
        else if (c === 0x7d) this.state = "done";
        else throw malformed();
        return;
      default:
        throw malformed(); // content after the closing brace
    }
  }

  /** The first byte of the value of `key`: each field has its kind. */
  private valueStart(c: number): UploadEvent | undefined {
    const { key } = this;
    if (key === "file") {
      if (c !== QUOTE)
        throw new APIError("VALIDATION_ERROR", "file must be a base64 string.", {
          details: [{ path: "file", message: "Expected a base64 string." }],
        });
      this.state = "file";
      return { kind: "file-start" };
    }
    if (key === "metadata") {
      this.state = "raw";
      this.raw = [];
      this.depth = 0;
      this.inString = false;
      return;
    }
    if (c !== QUOTE)
      throw new APIError("VALIDATION_ERROR", `${key} must be a string.`, {
        details: [{ path: key, message: "Expected a string." }],
      });
    this.state = "string";
    this.raw = [];
  }

  /** A byte of a key or of a string field; its closing quote names the key or gives the value. */
  private text(c: number): UploadEvent | undefined {
    if (this.escaped) this.escaped = false;
    else if (c === BACKSLASH) this.escaped = true;
    else if (c === QUOTE) return this.textEnd();
    if (this.raw.length >= this.maxFieldBytes)
      throw bad(`The field "${this.state === "key" ? "name" : this.key}" is too long.`);
    this.raw.push(c);
  }

  private textEnd(): UploadEvent | undefined {
    let text: string;
    try {
      text = JSON.parse(`"${Buffer.from(this.raw).toString("utf8")}"`) as string;
    } catch {
      throw malformed();
    }
    if (this.state === "string") {
      this.state = "comma-or-end";
      return { kind: "field", name: this.key as "filename" | "mimeType", value: text };
    }
    if (!FIELDS.has(text)) {
      throw new APIError("VALIDATION_ERROR", `Unknown field "${/^\w{1,40}$/.test(text) ? text : "?"}".`, {
        details: [{ path: text.slice(0, 40), message: "Unknown field." }],
      });
    }
    if (this.seen.has(text)) throw bad(`The field "${text}" appears twice.`);
    this.seen.add(text);
    this.key = text;
    this.state = "colon";
  }

  /**
   * The file's characters up to its closing quote or the chunk's end, at once; returns where the
   * chunk goes on.
   */
  private *fileSegment(chunk: Uint8Array, i: number): Generator<UploadEvent, number> {
    let end = chunk.indexOf(QUOTE, i);
    if (end === -1) end = chunk.length;
    let segment = Buffer.from(chunk.buffer, chunk.byteOffset + i, end - i).toString("latin1");
    if (this.escaped || segment.includes("\\")) {
      // JSON may escape "/" as "\/"; no other escape can occur in base64.
      segment = (this.escaped ? "\\" : "") + segment;
      this.escaped = segment.endsWith("\\") && !segment.endsWith("\\\\");
      if (this.escaped) segment = segment.slice(0, -1);
      // `\"` escapes the quote: JSON reads on past it, so it must not end the string here
      // (a parser that disagrees with JSON.parse is one a WAF can be fooled by). A quote
      // cannot be in base64 anyway.
      if (this.escaped && end < chunk.length) throw bad("The file is not valid base64.");
      if (/\\[^/]|\\$/.test(segment)) throw bad("The file is not valid base64.");
      segment = segment.replace(/\\\//g, "/");
    }
    const bytes = this.file.take(segment);
    if (bytes) yield { kind: "file-bytes", bytes };
    if (end === chunk.length) return end;
    yield { kind: "file-end", size: this.file.end() };
    this.state = "comma-or-end";
    return end + 1;
  }

  /** A byte of `metadata`, counted for depth as it arrives; its end gives the parsed value. */
  private rawByte(c: number): UploadEvent | undefined {
    if (this.raw.length >= this.maxFieldBytes) throw bad(`The field "${this.key}" is too long.`);
    if (this.inString) {
      if (this.escaped) this.escaped = false;
      else if (c === BACKSLASH) this.escaped = true;
      else if (c === QUOTE) this.inString = false;
    } else if (c === QUOTE) this.inString = true;
    else if (c === 0x7b || c === 0x5b) {
      // Counted as it arrives, so a deep value is refused before it is parsed; the body is one level.
      if (++this.depth + 1 > this.maxDepth)
        throw bad(`The JSON body is nested deeper than the limit of ${this.maxDepth} levels.`);
    } else if (c === 0x7d || c === 0x5d) {
      // The closing brace of the whole body ends a primitive value.
      if (this.depth === 0) return this.rawEnd();
      this.depth--;
    } else if (c === 0x2c && this.depth === 0) return this.rawEnd();
    this.raw.push(c);
  }

  private rawEnd(): UploadEvent {
    this.state = "comma-or-end";
    try {
      return { kind: "field", name: "metadata", value: JSON.parse(Buffer.from(this.raw).toString("utf8")) };
    } catch {
      throw malformed();
    }
  }
}

/** The file's base64, decoded as it arrives, strictly (no data URL, no base64url, padding only at the end). */
class Base64Decoder {
  private chars = 0;
  /** Base64 characters not yet decoded (fewer than 4). */
  private pending = "";
  private padCount = 0;
  private head = "";
  private decoded = 0;
  /** The most base64 characters a file within the limit can take. */
  private readonly maxChars: number;

  constructor(private readonly maxFileSize: number) {
    this.maxChars = 4 * Math.ceil(maxFileSize / 3);
  }

  /** The bytes of the whole quartets so far, if any. */
  take(segment: string): Uint8Array | undefined {
    // The first characters, however the chunks fell, tell a data URL from broken base64.
    if (this.head.length < 5) this.head += segment.slice(0, 5 - this.head.length);
    if (this.head.startsWith("data:")) {
      throw bad(
        'The file must be plain base64 without a data-URL prefix: strip "data:…;base64," before sending.',
      );
    }
    const pad = segment.indexOf("=");
    const padding = pad === -1 ? 0 : segment.length - pad;
    const data = segment.length - padding;
    // "=" may only end the string, at most twice (possibly split across chunks).
    if (
      (this.padCount > 0 && data > 0) ||
      (pad !== -1 && !/^=+$/.test(segment.slice(pad))) ||
      this.padCount + padding > 2
    ) {
      throw bad("The file is not valid base64: padding may only end it.");
    }
    // Node's decoder also takes base64url; strict base64 does not.
    if (segment.indexOf("-") !== -1 || segment.indexOf("_") !== -1)
      throw bad("The file is not valid base64.");
    this.padCount += padding;
    this.chars += segment.length;
    if (this.chars > this.maxChars) throw tooLarge(this.maxFileSize);
    return this.decode(segment);
  }

  /** The file's size, once its string ended: it must have been whole quartets, within the limit. */
  end(): number {
    if (this.pending.length > 0)
      throw bad("The file is not valid base64: its length must be a multiple of 4.");
    if (this.decoded > this.maxFileSize) throw tooLarge(this.maxFileSize);
    return this.decoded;
  }

  /**
   * Decodes the whole quartets of what arrived (at most 3 characters wait for the next chunk). Node
   * skips characters outside base64 while decoding, so any such character shows as missing bytes.
   */
  private decode(segment: string): Uint8Array | undefined {
    const text = this.pending + segment;
    const whole = text.length - (text.length % 4);
    this.pending = text.slice(whole);
    if (whole === 0) return;
    const quartets = whole === text.length ? text : text.slice(0, whole);
    const bytes = Buffer.from(quartets, "base64");
    // Padding ends the string, so only the last quartet can hold it.
    const padded = quartets.endsWith("==") ? 2 : quartets.endsWith("=") ? 1 : 0;
    if (bytes.byteLength !== (whole / 4) * 3 - padded) throw bad("The file is not valid base64.");
    this.decoded += bytes.byteLength;
    return bytes;
  }
}
