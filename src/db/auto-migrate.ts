// autoMigrate: the migration planner at startup. Safe steps (create table, add column, add index)
// are applied before the first request; destructive ones are left for `crudkit migrate` and named
// in the log.

import type { Database } from "./database.ts";
import { applyPlan } from "./migrations/apply.ts";
import { withMigrationLock } from "./migrations/lock.ts";
import { planMigration } from "./migrations/plan.ts";
import type { TableDefinition } from "./table-definition.ts";

export async function autoMigrate(
  db: Database,
  tables: readonly TableDefinition[],
  log: (message: string) => void,
): Promise<void> {
  // Planned under the lock: an instance that waited plans from what the first one applied.
  const refused = await withMigrationLock(db, async (locked) => {
    const plan = await planMigration(locked, tables);
    await applyPlan(
      locked,
      plan,
      plan.steps.filter((s) => !s.destructive),
    );
    return plan.steps.filter((s) => s.destructive);
  });
  if (refused.length > 0) {
    log(
      `crudkit: autoMigrate left destructive changes unapplied: ${refused.map((s) => s.description).join("; ")}. ` +
        "Review them with `crudkit generate`, apply with `crudkit migrate --allow-destructive`.",
    );
  }
}
