// The storage adapter contract: where uploaded bytes live. Local disk, S3-protocol object stores
// and custom adapters all implement it, and one conformance suite checks them all.

export type StorableFile = Uint8Array | AsyncIterable<Uint8Array> | ReadableStream<Uint8Array>;

export interface StoreOptions {
  mimeType: string;
  metadata?: Record<string, unknown>;
}

export interface StoredFile {
  /** The key to retrieve it by; never a server filesystem path. */
  path: string;
  /** Where it is served, when the adapter has a base URL. */
  url: string | undefined;
}

export interface ByteRange {
  /** First byte, inclusive. */
  start: number;
  /** Last byte, inclusive. */
  end: number;
}

export interface StorageAdapter {
  /**
   * Stores a file under `filename`, a plain name with no directory part. An existing file is never
   * overwritten: the adapter picks a free name (`name-1.ext`) and returns the key it used.
   */
  store(file: StorableFile, filename: string, options: StoreOptions): Promise<StoredFile>;
  retrieve(path: string): Promise<Uint8Array>;
  delete(path: string): Promise<void>;
  exists(path: string): Promise<boolean>;
  getUrl(path: string): string | undefined;
  /** Streams a file, or a byte range of it, without reading it whole. Undefined when missing. */
  read?(
    path: string,
    range?: ByteRange,
  ): Promise<{ body: ReadableStream<Uint8Array>; size: number } | undefined>;
  /** Size in bytes, undefined when missing. */
  size?(path: string): Promise<number | undefined>;
}

/** The error an adapter throws for a name that is not a plain file name. */
export class UnsafeFilenameError extends Error {
  constructor(name: string) {
    super(`Refusing to store under an unsafe name: ${JSON.stringify(name.slice(0, 80))}`);
    this.name = "UnsafeFilenameError";
  }
}

/** Adapters store only plain names: no separators, no dot segments, no control characters. */
export function assertPlainName(name: string): void {
  if (
    typeof name !== "string" ||
    name === "" ||
    name.length > 255 ||
    name === "." ||
    name === ".." ||
    !isPlain(name)
  ) {
    throw new UnsafeFilenameError(String(name));
  }
}

/** No path separator, no control character (NUL included). */
function isPlain(name: string): boolean {
  for (let i = 0; i < name.length; i++) {
    const code = name.charCodeAt(i);
    if (code < 0x20 || code === 0x7f || code === 0x2f /* / */ || code === 0x5c /* \ */) return false;
  }
  return true;
}

/** `photo.png`, then `photo-1.png`, `photo-2.png`…: the names tried when `photo.png` is taken. */
export function* candidateNames(name: string, attempts = 1000): Generator<string> {
  yield name;
  const dot = name.lastIndexOf(".");
  const [stem, ext] = dot > 0 ? [name.slice(0, dot), name.slice(dot)] : [name, ""];
  for (let i = 1; i <= attempts; i++) yield `${stem}-${i}${ext}`;
}

/** Any storable file as an async sequence of chunks. */
export async function* chunksOf(file: StorableFile): AsyncIterable<Uint8Array> {
  if (file instanceof Uint8Array) {
    yield file;
  } else if (typeof (file as ReadableStream<Uint8Array>).getReader === "function") {
    const reader = (file as ReadableStream<Uint8Array>).getReader();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return;
        yield value;
      }
    } finally {
      reader.releaseLock();
    }
  } else {
    yield* file as AsyncIterable<Uint8Array>;
  }
}
