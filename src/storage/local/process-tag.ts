// What a process leaves on disk while it works (a spooled upload, a storage temporary, the note of
// a stored file whose record is not committed yet) is named with the process's tag: its machine, its
// pid, and when it started. A later process tells a leftover of one that died (kill -9, a crash)
// from the work of one still running (another instance on the same machine) by that tag, and
// removes the leftover at once instead of after an hour.

import { createHash } from "node:crypto";
import { readFileSync, readlinkSync } from "node:fs";
import { hostname } from "node:os";

/**
 * Where pids mean the same, in 8 hex digits: the machine, its boot, and the pid namespace (two
 * containers sharing a hostname and a volume each number their processes from 1). A tag of another
 * such place is never judged here.
 */
const HOST = createHash("sha256")
  .update(
    [
      hostname(),
      quietly(() => readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim()),
      quietly(() => readlinkSync("/proc/self/ns/pid")),
    ].join("\0"),
  )
  .digest("hex")
  .slice(0, 8);

function quietly(read: () => string): string {
  try {
    return read();
  } catch {
    return "";
  }
}

/** The start of process `pid` in clock ticks since boot (Linux's /proc), or undefined. */
function startOf(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Field 22, counted after the command's closing parenthesis (the command may hold spaces).
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19];
  } catch {
    return undefined;
  }
}

/** This process's tag, as `host.pid.start` (no "-": names put a UUID after it). */
export const PROCESS_TAG = `${HOST}.${process.pid}.${startOf(process.pid) ?? Date.now().toString(36)}`;

const TAG = /^([0-9a-f]{8})\.(\d{1,10})\.([0-9a-z]{1,20})$/;

/**
 * Whether the process that made a name tagged `tag` has ended. False when it runs, when the tag is
 * another machine's, or when the name carries no tag (an older version's): those wait for the age rule.
 */
export function tagEnded(tag: string): boolean {
  const match = TAG.exec(tag);
  if (!match || match[1] !== HOST || tag === PROCESS_TAG) return false;
  const pid = Number(match[2]);
  // An earlier process with this pid: a container restarted gives its process the same one.
  if (pid === process.pid) return true;
  const start = startOf(pid);
  if (start !== undefined) return start !== match[3];
  if (process.platform === "linux") return true;
  // No /proc: whether the pid is taken at all.
  try {
    process.kill(pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== "EPERM";
  }
}

/** The tag in a name made as `${prefix}${PROCESS_TAG}-${uuid}`, or "" for a name without one. */
export function tagOf(name: string, prefix: string): string {
  const rest = name.slice(prefix.length);
  const end = rest.indexOf("-");
  return end === -1 ? "" : rest.slice(0, end);
}
