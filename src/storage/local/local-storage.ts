// Files on local disk. Each file is written under a temporary name, then linked into place
// (link fails if the name is taken, so nothing is ever overwritten) and the temporary removed.

import { randomUUID } from "node:crypto";
import { createReadStream } from "node:fs";
import { link, mkdir, readFile, stat, unlink } from "node:fs/promises";
import { join, resolve, sep } from "node:path";
import { Readable } from "node:stream";
import type { ByteRange, StorableFile, StorageAdapter, StoredFile, StoreOptions } from "../adapter.ts";
import { assertPlainName, candidateNames, chunksOf } from "../adapter.ts";
import { removeLeftovers, writeNewFile } from "./new-file.ts";
import { PROCESS_TAG } from "./process-tag.ts";

/** Temporary names start with this; `removeStaleTemporaries` sweeps what a crash left. */
const TEMPORARY_PREFIX = ".tmp-";

/**
 * Stores uploads in a directory on disk, written to a temporary name and renamed when complete.
 *
 * @example
 * upload({ storage: new LocalStorage("./uploads", "/uploads") }) // directory, and the URL the host serves it under
 */
export class LocalStorage implements StorageAdapter {
  readonly directory: string;
  readonly #baseUrl: string | undefined;

  /**
   * @param directory where files live (created when missing)
   * @param baseUrl where the host serves that directory, for example `/uploads`
   */
  constructor(directory: string, baseUrl?: string) {
    this.directory = resolve(directory);
    this.#baseUrl = baseUrl?.replace(/\/+$/, "");
  }

  async store(file: StorableFile, filename: string, _options?: StoreOptions): Promise<StoredFile> {
    assertPlainName(filename);
    await mkdir(this.directory, { recursive: true });
    const temporary = join(this.directory, `${TEMPORARY_PREFIX}${PROCESS_TAG}-${randomUUID()}`);
    await writeNewFile(temporary, chunksOf(file));
    try {
      for (const name of candidateNames(filename)) {
        try {
          await link(temporary, this.#file(name));
          return { path: name, url: this.getUrl(name) };
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
        }
      }
      throw new Error(`No free name for ${filename}`);
    } finally {
      await unlink(temporary).catch(() => {});
    }
  }

  /**
   * Removes the temporaries a process killed mid-write left: those of a process of this machine
   * that has ended, and any older than `maxAgeMs` (another machine's, on a shared volume).
   */
  removeStaleTemporaries(maxAgeMs = 60 * 60 * 1000): Promise<number> {
    return removeLeftovers(this.directory, TEMPORARY_PREFIX, maxAgeMs);
  }

  async retrieve(path: string): Promise<Uint8Array> {
    return readFile(this.#file(path));
  }

  async delete(path: string): Promise<void> {
    await unlink(this.#file(path)).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== "ENOENT") throw error;
    });
  }

  async exists(path: string): Promise<boolean> {
    return (await this.size(path)) !== undefined;
  }

  async size(path: string): Promise<number | undefined> {
    try {
      return (await stat(this.#file(path))).size;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
      throw error;
    }
  }

  async read(
    path: string,
    range?: ByteRange,
  ): Promise<{ body: ReadableStream<Uint8Array>; size: number } | undefined> {
    const size = await this.size(path);
    if (size === undefined) return undefined;
    const stream = createReadStream(this.#file(path), range ? { start: range.start, end: range.end } : {});
    return { body: Readable.toWeb(stream) as ReadableStream<Uint8Array>, size };
  }

  getUrl(path: string): string | undefined {
    return this.#baseUrl === undefined ? undefined : `${this.#baseUrl}/${encodeURIComponent(path)}`;
  }

  /** The file for a key, which must stay inside the directory. */
  #file(path: string): string {
    assertPlainName(path);
    const file = join(this.directory, path);
    if (!file.startsWith(this.directory + sep)) throw new Error("path escapes the storage directory");
    return file;
  }
}
