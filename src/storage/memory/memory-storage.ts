// Files in memory: for tests and as the smallest example of a custom adapter.

import type { ByteRange, StorableFile, StorageAdapter, StoredFile, StoreOptions } from "../adapter.ts";
import { assertPlainName, candidateNames, chunksOf } from "../adapter.ts";

/**
 * Keeps uploads in memory: for tests and throwaway apps.
 *
 * @example
 * upload({ storage: new MemoryStorage() })
 */
export class MemoryStorage implements StorageAdapter {
  readonly files = new Map<string, Uint8Array>();

  async store(file: StorableFile, filename: string, _options?: StoreOptions): Promise<StoredFile> {
    assertPlainName(filename);
    const chunks: Uint8Array[] = [];
    for await (const chunk of chunksOf(file)) chunks.push(chunk);
    let name = filename;
    for (name of candidateNames(filename)) if (!this.files.has(name)) break;
    this.files.set(name, Buffer.concat(chunks));
    return { path: name, url: undefined };
  }

  async retrieve(path: string): Promise<Uint8Array> {
    const file = this.#get(path);
    if (!file) throw new Error(`No stored file ${path}`);
    return file;
  }

  async delete(path: string): Promise<void> {
    assertPlainName(path);
    this.files.delete(path);
  }

  async exists(path: string): Promise<boolean> {
    return this.#get(path) !== undefined;
  }

  async size(path: string): Promise<number | undefined> {
    return this.#get(path)?.byteLength;
  }

  async read(path: string, range?: ByteRange) {
    const file = this.#get(path);
    if (!file) return undefined;
    const bytes = range ? file.subarray(range.start, range.end + 1) : file;
    const copy = Uint8Array.from(bytes);
    return { body: new Blob([copy]).stream() as ReadableStream<Uint8Array>, size: file.byteLength };
  }

  getUrl(): string | undefined {
    return undefined;
  }

  #get(path: string): Uint8Array | undefined {
    assertPlainName(path);
    return this.files.get(path);
  }
}
