// Named prepared statements for the reads crudkit repeats. An unnamed statement is parsed and
// planned again each time it runs: about 30 µs of PostgreSQL's CPU for a read by id, and 220 µs
// for one under a rule through relations (memberOf's semi-joins: three tables, each with its
// indexes to weigh), which was 55% of that read's cost (issue 45's bench). A named one is parsed
// once per connection, and after five runs PostgreSQL keeps a generic plan for it when that plan is
// no costlier than the ones made for each set of values, so planning is skipped too.
//
// Only SELECTs are named: a failed read is harmless to run again (see the driver). The names are
// a digest of the text, the same in every process, and bounded: each connection keeps at most
// NAMED_LIMIT statements on the server, whatever texts the app's lists produce past that.

import { createHash } from "node:crypto";

export const NAMED_LIMIT = 500;

const names = new Map<string, string>();
const SELECT = /^select\s/i;

/** The name `text` is prepared under, or undefined to send it unnamed. */
export function preparedName(text: string): string | undefined {
  const known = names.get(text);
  if (known !== undefined || names.size >= NAMED_LIMIT || !SELECT.test(text)) return known;
  const name = `crudkit_${createHash("sha256").update(text).digest("base64url").slice(0, 24)}`;
  names.set(text, name);
  return name;
}

/**
 * A named statement the connection cannot use: its plan no longer fits the table (another
 * instance's migration changed a column: "cached plan must not change result type", 0A000), or
 * the session is not the connection's own: the statement is gone from it (26000) or was already
 * there (42P05), as when a pooler in transaction mode hands one server session to several clients
 * (then statements are sent unnamed from then on). The read runs again unnamed, on a fresh
 * connection.
 */
export function unusableStatement(error: unknown): "stale" | "shared" | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  if (code === "26000" || code === "42P05") return "shared";
  if (code === "0A000" && /cached plan/i.test(String((error as Error).message))) return "stale";
  return undefined;
}
