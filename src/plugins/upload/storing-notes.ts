// Notes, in the spool directory, of the files this process is storing until their record commits.
// A process killed between storing a file and committing its record (kill -9, a crash) leaves the
// file with no record, and the note that names it. At startup (upload.ts) the notes of ended
// processes are read (process-tag.ts): each file they name that no record holds is removed from
// storage, then the note. A note is written before the file's first byte, so no moment of an
// upload leaves a file nothing names.

import { randomUUID } from "node:crypto";
import { readFile, unlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { StorageAdapter } from "../../storage/adapter.ts";
import { PROCESS_TAG } from "../../storage/local/process-tag.ts";

export const NOTE_PREFIX = "crudkit-storing-";

export interface StoringNote {
  /** A name the file is (about to be) stored under: noted before its bytes go. */
  name(name: string): Promise<void>;
  /** The record committed, or the stored file was removed: the note goes. */
  end(): Promise<void>;
}

/** A note of one upload, in `spoolDir` (made by the plugin at startup). */
export function storingNote(spoolDir: string): StoringNote {
  const path = join(spoolDir, `${NOTE_PREFIX}${PROCESS_TAG}-${randomUUID()}`);
  const names: string[] = [];
  return {
    async name(name) {
      if (names.includes(name)) return;
      names.push(name);
      await writeFile(path, JSON.stringify(names), { mode: 0o600 });
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
    for (const name of names) {
      if (typeof name !== "string" || (await recorded(name))) continue;
      // A name storage refuses (not one crudkit made) or cannot remove now: the note goes all the same.
      await storage
        .delete(name)
        .catch((error) => log("crudkit: a file a killed upload left could not be removed", error));
    }
  };
}
