// Receives one upload: the body is parsed as it arrives and the file streamed into storage.
// Checks run in the documented order, as early as the fields they need are known; whatever fails
// after bytes were stored removes them, so a rejected upload leaves nothing behind.

import { randomUUID } from "node:crypto";
import { createReadStream } from "node:fs";
import { mkdir, open, unlink } from "node:fs/promises";
import { join } from "node:path";
import { APIError } from "../../core/errors.ts";
import { checkJsonValue, textProblem } from "../../core/input-checks.ts";
import type { StorageAdapter, StoredFile } from "../../storage/adapter.ts";
import { writeNewFile } from "../../storage/local/new-file.ts";
import { PROCESS_TAG } from "../../storage/local/process-tag.ts";
import { type FileNaming, storedName } from "./file-naming.ts";
import type { UploadedFileInfo } from "./options.ts";
import { contradictsDeclaredType, SNIFF_LENGTH } from "./sniff.ts";
import type { StoringNote } from "./storing-notes.ts";
import { parseUploadBody, type UploadEvent } from "./upload-body.ts";

export interface UploadRules {
  storage: StorageAdapter;
  maxFileSize: number;
  allowedMimeTypes: readonly string[];
  fileNaming: FileNaming;
  validate: ((file: UploadedFileInfo) => unknown) | undefined;
  /** Where a file sent before its name and type waits (created by the plugin, private to it). */
  spoolDir: string;
  /** How deep the upload body may nest (metadata included). */
  maxJsonDepth: number;
}

/** Spool files start with this; the plugin sweeps stale ones at startup. */
export const SPOOL_PREFIX = "crudkit-upload-";

export interface ReceivedUpload {
  stored: StoredFile;
  info: UploadedFileInfo;
}

interface Fields {
  filename?: unknown;
  mimeType?: unknown;
  metadata?: unknown;
}

const MIME = /^[a-z0-9][a-z0-9!#$&^_.+-]*\/[a-z0-9][a-z0-9!#$&^_.+-]*$/;

export async function receiveUpload(
  source: AsyncIterable<Uint8Array>,
  rules: UploadRules,
  /** The uploader's id: `fileNaming: "original"` names her files in a namespace of her own. */
  owner: string | null = null,
  /** Notes each name the file is stored under until its record commits (storing-notes.ts). */
  note?: StoringNote,
): Promise<ReceivedUpload> {
  const events = parseUploadBody(source, {
    maxFileSize: rules.maxFileSize,
    maxDepth: rules.maxJsonDepth,
  })[Symbol.asyncIterator]();
  const fields: Fields = {};
  let started = false;
  for (let next = await events.next(); !next.done; next = await events.next()) {
    if (next.value.kind === "field") fields[next.value.name] = next.value.value;
    if (next.value.kind === "file-start") {
      started = true;
      break;
    }
  }
  if (!started) {
    checkFields(fields, rules);
    throw invalid("file", "file is required: the file's content as base64.");
  }

  let size = 0;
  let stored: StoredFile | undefined;
  const fileBytes = async function* (): AsyncIterable<Uint8Array> {
    for (let next = await events.next(); !next.done; next = await events.next()) {
      if (next.value.kind === "file-bytes") yield next.value.bytes;
      if (next.value.kind === "file-end") {
        size = next.value.size;
        return;
      }
    }
  };
  try {
    if (fields.filename !== undefined && fields.mimeType !== undefined) {
      // Name and type came first: stream straight into storage, checking the type before any byte lands.
      const { filename, mimeType } = checkFields(fields, rules);
      checkAllowed(mimeType, rules.allowedMimeTypes);
      const name = storedName(rules.fileNaming, filename, mimeType, owner);
      await note?.name(name, rules.fileNaming === "uuid");
      stored = await rules.storage.store(sniffing(fileBytes(), mimeType), name, { mimeType });
      await readRest(events, fields);
    } else {
      // The file came first: spool it to a temporary file until its name and type are known.
      stored = await spoolThenStore(fileBytes(), events, fields, rules, owner, note);
    }
    // Its name as stored (another, when the one asked for was taken): surely this upload's.
    await note?.name(stored.path, true);
    const { filename, mimeType, metadata } = checkFields(fields, rules);
    const info: UploadedFileInfo = { size, filename, mimeType, metadata };
    await runValidate(rules.validate, info);
    return { stored, info };
  } catch (error) {
    if (stored) await rules.storage.delete(stored.path).catch(() => {});
    throw error;
  } finally {
    await events.return?.(undefined);
  }
}

async function spoolThenStore(
  bytes: AsyncIterable<Uint8Array>,
  events: AsyncIterator<UploadEvent>,
  fields: Fields,
  rules: UploadRules,
  owner: string | null,
  note: StoringNote | undefined,
): Promise<StoredFile> {
  const spool = join(rules.spoolDir, `${SPOOL_PREFIX}${PROCESS_TAG}-${randomUUID()}`);
  // Made at startup; made again here in case something removed it since.
  await mkdir(rules.spoolDir, { recursive: true, mode: 0o700 });
  await writeNewFile(spool, bytes);
  try {
    await readRest(events, fields);
    const { filename, mimeType } = checkFields(fields, rules);
    checkAllowed(mimeType, rules.allowedMimeTypes);
    const handle = await open(spool, "r");
    const head = new Uint8Array(SNIFF_LENGTH);
    const { bytesRead } = await handle.read(head, 0, SNIFF_LENGTH, 0);
    await handle.close();
    checkSniff(mimeType, head.subarray(0, bytesRead));
    // Opened only when the adapter reads it, so a store that fails first leaves no stream behind.
    const spooled = async function* () {
      for await (const chunk of createReadStream(spool)) yield chunk as Uint8Array;
    };
    const name = storedName(rules.fileNaming, filename, mimeType, owner);
    await note?.name(name, rules.fileNaming === "uuid");
    return await rules.storage.store(spooled(), name, { mimeType });
  } finally {
    await unlink(spool).catch(() => {});
  }
}

/** Passes bytes through, refusing (415) as soon as the first ones contradict the declared type. */
async function* sniffing(bytes: AsyncIterable<Uint8Array>, mimeType: string): AsyncIterable<Uint8Array> {
  const held: Uint8Array[] = [];
  let heldSize = 0;
  let checked = false;
  for await (const chunk of bytes) {
    if (checked) {
      yield chunk;
      continue;
    }
    held.push(chunk);
    heldSize += chunk.byteLength;
    if (heldSize >= SNIFF_LENGTH) {
      const head = Buffer.concat(held);
      checkSniff(mimeType, head);
      checked = true;
      yield head;
    }
  }
  if (!checked) {
    const head = Buffer.concat(held);
    checkSniff(mimeType, head);
    if (head.byteLength > 0) yield head;
  }
}

async function readRest(events: AsyncIterator<UploadEvent>, fields: Fields): Promise<void> {
  for (let next = await events.next(); !next.done; next = await events.next()) {
    if (next.value.kind === "field") fields[next.value.name] = next.value.value;
  }
}

function checkFields(
  fields: Fields,
  rules: Pick<UploadRules, "maxJsonDepth">,
): {
  filename: string;
  mimeType: string;
  metadata: Record<string, unknown> | null;
} {
  const { filename, mimeType, metadata } = fields;
  if (typeof filename !== "string" || filename.trim() === "")
    throw invalid("filename", "filename is required: the file's name.");
  const problem = textProblem(filename);
  if (problem) throw invalid("filename", `filename ${problem}.`);
  if (typeof mimeType !== "string" || !MIME.test(mimeType.toLowerCase())) {
    throw invalid("mimeType", "mimeType is required, as type/subtype (for example image/png).");
  }
  if (
    metadata !== undefined &&
    metadata !== null &&
    (typeof metadata !== "object" || Array.isArray(metadata))
  ) {
    throw invalid("metadata", "metadata must be a JSON object.");
  }
  // Named as the body sees it, so the error's path reads metadata.<key>.
  if (metadata) checkJsonValue({ metadata }, rules.maxJsonDepth);
  return {
    filename,
    mimeType: mimeType.toLowerCase(),
    metadata: (metadata as Record<string, unknown> | undefined) ?? null,
  };
}

export function checkAllowed(mimeType: string, allowed: readonly string[]): void {
  if (allowed.length === 0) return;
  const family = `${mimeType.split("/")[0]}/*`;
  if (!allowed.some((a) => a.toLowerCase() === mimeType || a.toLowerCase() === family)) {
    throw new APIError(
      "UNSUPPORTED_MEDIA_TYPE",
      `Files of type ${mimeType} are not allowed; allowed: ${allowed.join(", ")}.`,
    );
  }
}

function checkSniff(mimeType: string, head: Uint8Array): void {
  if (contradictsDeclaredType(mimeType, head)) {
    throw new APIError(
      "UNSUPPORTED_MEDIA_TYPE",
      `The file's content does not match its declared type ${mimeType}.`,
    );
  }
}

async function runValidate(validate: UploadRules["validate"], info: UploadedFileInfo): Promise<void> {
  if (!validate) return;
  let accepted: unknown;
  try {
    accepted = await validate(info);
  } catch (error) {
    // The thrown message is shown, its stack is not.
    const message = error instanceof Error && error.message ? error.message : "The file was rejected.";
    throw new APIError("VALIDATION_ERROR", message, { details: [{ path: "file", message }] });
  }
  if (accepted === false)
    throw new APIError("VALIDATION_ERROR", "The file was rejected by validation.", {
      details: [{ path: "file", message: "Rejected." }],
    });
}

function invalid(path: string, message: string): APIError {
  return new APIError("VALIDATION_ERROR", message, { details: [{ path, message }] });
}
