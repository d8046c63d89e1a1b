// `crudkit generate` and `crudkit migrate`: plan the desired schema against the live database,
// then write the SQL for review, or apply it.

import { mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { isConnectionError } from "../db/connection-errors.ts";
import { applyPlan } from "../db/migrations/apply.ts";
import { type MigrationPlan, planMigration } from "../db/migrations/plan.ts";
import { migrationName } from "../db/migrations/record.ts";
import { CliError, type LoadedApp, loadConfig } from "./load-config.ts";

export interface GenerateOptions {
  config?: string;
  out: string;
}

export interface MigrateOptions {
  config?: string;
  dryRun?: boolean;
  allowDestructive?: boolean;
}

type Print = (line: string) => void;

export async function generate(options: GenerateOptions, print: Print): Promise<void> {
  await withApp(options.config, async ({ internals }) => {
    const plan = await plan_(internals);
    if (plan.steps.length === 0) {
      print("nothing to generate: the database matches the schema");
      return;
    }
    const name = migrationName();
    const dir = resolve(options.out);
    mkdirSync(dir, { recursive: true });
    const file = join(dir, `${name}.sql`);
    writeFileSync(file, renderSql(plan, name));
    print(`wrote ${file} (${plan.steps.length} step${plan.steps.length === 1 ? "" : "s"})`);
    for (const step of plan.steps) print(`  ${step.destructive ? "destructive: " : ""}${step.description}`);
    const destructive = plan.steps.filter((s) => s.destructive).length;
    if (destructive)
      print(`${destructive} destructive step(s) are commented out in the file; review them before applying.`);
  });
}

export async function migrate(options: MigrateOptions, print: Print): Promise<void> {
  await withApp(options.config, async ({ internals }) => {
    const plan = await plan_(internals);
    if (plan.steps.length === 0) {
      print("nothing to migrate: the database matches the schema");
      return;
    }
    for (const step of plan.steps) {
      print(`-- ${step.destructive ? "destructive: " : ""}${step.description}`);
      for (const statement of step.statements) print(`${statement};`);
    }
    const destructive = plan.steps.filter((s) => s.destructive);
    if (destructive.length > 0 && !options.allowDestructive) {
      throw new CliError(
        `Refused: ${destructive.length} destructive change(s) would lose data: ${destructive.map((s) => s.description).join("; ")}. ` +
          "Nothing was applied. Run again with --allow-destructive to apply them.",
        2,
      );
    }
    if (options.dryRun) {
      print("dry run: nothing was applied");
      return;
    }
    const name = migrationName();
    await applyPlan(internals.database, plan, plan.steps, name);
    print(
      `applied migration ${name}: ${plan.steps.length} step(s), ${plan.steps.flatMap((s) => s.statements).length} statement(s)`,
    );
  });
}

async function plan_(internals: LoadedApp["internals"]): Promise<MigrationPlan> {
  return planMigration(internals.database, internals.tables);
}

async function withApp(
  config: string | undefined,
  work: (loaded: LoadedApp) => Promise<void>,
): Promise<void> {
  const loaded = await loadConfig(config);
  try {
    // An app with autoMigrate starts migrating when created; let it finish first.
    await loaded.app.ready.catch(() => {});
    await work(loaded);
  } catch (error) {
    if (error instanceof CliError) throw error;
    if (isConnectionError(error)) {
      const code =
        (error as { code?: string }).code ??
        (error as { cause?: { code?: string } }).cause?.code ??
        "connection failed";
      throw new CliError(
        `Cannot reach the database (${code}). Check database.url in ${loaded.path} and that the server is running.`,
      );
    }
    throw new CliError(`The migration failed: ${(error as Error).message}`);
  } finally {
    await loaded.app.close().catch(() => {});
  }
}

function renderSql(plan: MigrationPlan, name: string): string {
  const lines = [
    `-- crudkit migration ${name} (${plan.dialect})`,
    "-- Review, then apply with your tools or with `crudkit migrate`.",
    "",
  ];
  for (const step of plan.steps) {
    lines.push(
      `-- ${step.destructive ? "DESTRUCTIVE (commented out, loses data): " : ""}${step.description}`,
    );
    for (const statement of step.statements)
      lines.push(step.destructive ? `-- ${statement};` : `${statement};`);
    lines.push("");
  }
  return lines.join("\n");
}
