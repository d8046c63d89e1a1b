// autoMigrate: the migration planner at startup. Safe steps (create table, add column, add index)
// are applied before the first request; destructive ones are left for `crudkit migrate` and named
// in the log.

import type { Database } from "./database.ts";
import { applyPlan } from "./migrations/apply.ts";
import { planMigration } from "./migrations/plan.ts";
import type { TableDefinition } from "./table-definition.ts";

export async function autoMigrate(
  db: Database,
  tables: readonly TableDefinition[],
  log: (message: string) => void,
): Promise<void> {
  const plan = await planMigration(db, tables);
  const safe = plan.steps.filter((s) => !s.destructive);
  const refused = plan.steps.filter((s) => s.destructive);
  await applyPlan(db, plan, safe);
  if (refused.length > 0) {
    log(
      `crudkit: autoMigrate left destructive changes unapplied: ${refused.map((s) => s.description).join("; ")}. ` +
        "Review them with `crudkit generate`, apply with `crudkit migrate --allow-destructive`.",
    );
  }
}
