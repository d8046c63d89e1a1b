// Temporary files that never outlive their request: written to a new file opened before the first
// chunk is read (a write stream opens lazily, so an error that arrived first could remove the file
// before it existed and leave it created after), and swept at startup when a killed process left some.

import { open, readdir, stat, unlink } from "node:fs/promises";
import { join } from "node:path";
import { tagEnded, tagOf } from "./process-tag.ts";

/** Writes `chunks` to `path` (created, never overwritten). On any failure the file is gone before this rejects. */
export async function writeNewFile(path: string, chunks: AsyncIterable<Uint8Array>): Promise<void> {
  const handle = await open(path, "wx");
  try {
    for await (const chunk of chunks) {
      for (let offset = 0; offset < chunk.byteLength; ) {
        const { bytesWritten } = await handle.write(chunk, offset, chunk.byteLength - offset);
        offset += bytesWritten;
      }
    }
  } catch (error) {
    await handle.close().catch(() => {});
    await unlink(path).catch(() => {});
    throw error;
  }
  await handle.close();
}

/**
 * Removes files named `prefix…` in `directory` older than `maxAgeMs`: what a process killed
 * mid-write left. Younger ones may be another instance's writes in progress. Returns how many went.
 */
/**
 * Removes the files in `directory` named `prefix…` that are older than `maxAgeMs`, or whose
 * process has ended (their name carries its tag: process-tag.ts), and answers how many went.
 * `before` runs first on each (the upload journal removes the stored file a note names).
 */
export async function removeLeftovers(
  directory: string,
  prefix: string,
  maxAgeMs: number,
  before?: (file: string) => Promise<void>,
): Promise<number> {
  let names: string[];
  try {
    names = await readdir(directory);
  } catch {
    return 0;
  }
  const cutoff = Date.now() - maxAgeMs;
  let removed = 0;
  for (const name of names) {
    if (!name.startsWith(prefix)) continue;
    const file = join(directory, name);
    const info = await stat(file).catch(() => undefined);
    if (!info?.isFile() || (info.mtimeMs >= cutoff && !tagEnded(tagOf(name, prefix)))) continue;
    if (before) await before(file);
    if (
      await unlink(file).then(
        () => true,
        () => false,
      )
    )
      removed++;
  }
  return removed;
}
