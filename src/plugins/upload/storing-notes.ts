// Notes, in the spool directory, of the files this process is storing until their record commits.
// A process killed between storing a file and committing its record (kill -9, a crash) leaves the
// file with no record, and the note that names it. At startup (upload.ts) the notes of ended
// processes are read (process-tag.ts): each file they name as surely theirs that no record holds is
// removed from storage, then the note. A name is noted before the file's first byte: surely the
// upload's when names are UUIDs; with other names (taken ones get a suffix) only once stored, since
// the name asked for may be another upload's.

import { randomUUID } from "node:crypto";
import { mkdir, readFile, rename, unlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { StorageAdapter } from "../../storage/adapter.ts";
import { PROCESS_TAG } from "../../storage/local/process-tag.ts";

export const NOTE_PREFIX = "crudkit-storing-";

export interface StoringNote {
  /**
   * A name the file is (about to be) stored under, noted before its bytes go. `sure`: no other
   * upload can hold it (a UUID, or the name storage answered).
   */
  name(name: string, sure: boolean): Promise<void>;
  /** The record committed, or the stored file was removed: the note goes. */
  end(): Promise<void>;
}

/** A note of one upload, in `spoolDir` (made by the plugin at startup). */
export function storingNote(spoolDir: string): StoringNote {
  const path = join(spoolDir, `${NOTE_PREFIX}${PROCESS_TAG}-${randomUUID()}`);
  const names: { name: string; sure: boolean }[] = [];
  return {
    async name(name, sure) {
      const known = names.find((noted) => noted.name === name);
      if (known && (known.sure || !sure)) return;
      if (known) known.sure = true;
      else names.push({ name, sure });
      // Written whole, then renamed over the last: a kill mid-write leaves the note as it was.
      await mkdir(spoolDir, { recursive: true, mode: 0o700 });
      await writeFile(`${path}.next`, JSON.stringify(names), { mode: 0o600 });
      await rename(`${path}.next`, path);
    },
    async end() {
      if (names.length) await unlink(path).catch(() => {});
    },
  };
}

/**
 * What runs on a leftover note before it goes: the files it names that no record holds are removed
 * from storage. A name a record holds is another upload's (a name taken, then a free one used).
 */
export function removeUnrecorded(
  storage: StorageAdapter,
  recorded: (name: string) => Promise<boolean>,
  log: (message: string, error?: unknown) => void,
): (note: string) => Promise<void> {
  return async (note) => {
    let names: unknown;
    try {
      names = JSON.parse(await readFile(note, "utf8"));
    } catch {
      // Cut short while it was written: the file it was about to name got no byte yet.
      return;
    }
    if (!Array.isArray(names)) return;
    for (const noted of names) {
      const { name, sure } = (noted ?? {}) as { name?: unknown; sure?: unknown };
      if (typeof name !== "string" || sure !== true || (await recorded(name))) continue;
      // A name storage refuses (not one crudkit made) or cannot remove now: the note goes all the same.
      await storage
        .delete(name)
        .catch((error) => log("crudkit: a file a killed upload left could not be removed", error));
    }
  };
}
