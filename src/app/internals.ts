// What the CLI needs from an app that is not public API: its database and desired tables.
// A registered symbol, so an app made by another copy of crudkit is still recognised.

import type { OwnedFiles } from "../core/plugin.ts";
import type { Database } from "../db/database.ts";
import type { TableDefinition } from "../db/table-definition.ts";

export const INTERNALS = Symbol.for("crudkit.internals");

export interface AppInternals {
  database: Database;
  tables: readonly TableDefinition[];
  /** Who keeps uploaded files, and whether any resource owns files (`crudkit gc`). */
  files: OwnedFiles | undefined;
  ownsFiles: boolean;
}

export function internalsOf(app: unknown): AppInternals | undefined {
  return (app as { [INTERNALS]?: AppInternals } | null)?.[INTERNALS];
}
