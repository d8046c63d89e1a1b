// Writes the project's files, never over a file silently: a non-empty directory is refused
// without --force, and with it each file init would overwrite is first renamed to <name>.bak.

import { existsSync, lstatSync, mkdirSync, readdirSync, renameSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { CliError } from "../load-config.ts";
import type { ProjectFile } from "./templates/index.ts";

export interface WriteReport {
  /** Paths written, relative to the project. */
  written: string[];
  /** Files that were in the way, and the name each was kept under. */
  backedUp: { path: string; backup: string }[];
}

/**
 * Refuses a target that is not a directory, and a directory with anything in it (a lone `.git`
 * aside) unless `force`. Runs before any question is asked or file written.
 */
export function checkTarget(dir: string, shown: string, force: boolean): void {
  if (!existsSync(dir)) return;
  if (!statSync(dir).isDirectory()) throw new CliError(`${shown} exists and is not a directory.`);
  const entries = readdirSync(dir).filter((name) => name !== ".git");
  if (entries.length === 0 || force) return;
  const some =
    entries.slice(0, 5).join(", ") + (entries.length > 5 ? `, and ${entries.length - 5} more` : "");
  throw new CliError(
    `${shown} is not empty (${some}): nothing was written. Choose a new or empty directory, or pass --force to write into it (a file init would overwrite is first renamed to <name>.bak).`,
  );
}

export function writeProject(dir: string, files: readonly ProjectFile[], force: boolean): WriteReport {
  const report: WriteReport = { written: [], backedUp: [] };
  mkdirSync(dir, { recursive: true });
  for (const file of files) {
    const parts = file.path.split("/");
    // Each directory on the way, then the file itself: whatever is in the way is kept aside.
    for (let depth = 1; depth <= parts.length; depth++) {
      const relative = parts.slice(0, depth).join("/");
      const isFile = depth === parts.length;
      const path = join(dir, relative);
      const found = lstatOrNull(path);
      if (!found || (!isFile && found.isDirectory())) continue;
      if (!force)
        throw new CliError(`${relative} appeared in the project while init was writing: run it again.`);
      const backup = freeName(path);
      renameSync(path, backup);
      report.backedUp.push({ path: relative, backup: backup.slice(dir.length + 1) });
    }
    const path = join(dir, file.path);
    mkdirSync(dirname(path), { recursive: true });
    // "wx": fails rather than follow a link or replace a file that appeared since the check.
    writeFileSync(path, file.content, { flag: "wx" });
    report.written.push(file.path);
  }
  return report;
}

function lstatOrNull(path: string) {
  try {
    return lstatSync(path);
  } catch {
    return null;
  }
}

/** `<path>.bak`, or `<path>.bak.1`, `.bak.2`… when that is taken too. */
function freeName(path: string): string {
  if (!lstatOrNull(`${path}.bak`)) return `${path}.bak`;
  for (let n = 1; ; n++) if (!lstatOrNull(`${path}.bak.${n}`)) return `${path}.bak.${n}`;
}
