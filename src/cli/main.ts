// The `crudkit` command line: generate, migrate and gc.

import { Command, CommanderError } from "commander";
import { gc, generate, migrate } from "./commands.ts";
import { CliError } from "./load-config.ts";

const program = new Command()
  .name("crudkit")
  .description("Schema migrations for a crudkit app: the config (crudkit.config.ts) exports the app.")
  .exitOverride()
  .showHelpAfterError();

program
  .command("generate")
  .description(
    "Write the SQL that brings the database to the app's schema into a timestamped .sql file, for review.",
  )
  .option("--config <path>", "the config file (default: crudkit.config.{ts,mts,js,mjs} in this directory)")
  .option("--out <dir>", "where to write the .sql file", "migrations")
  .action((options: { config?: string; out: string }) => generate(options, console.log));

program
  .command("migrate")
  .description("Apply the changes that bring the database to the app's schema, printing each statement.")
  .option("--config <path>", "the config file (default: crudkit.config.{ts,mts,js,mjs} in this directory)")
  .option("--dry-run", "print the statements without applying them")
  .option(
    "--allow-destructive",
    "also apply changes that lose data (drop table or column, type change, NOT NULL)",
  )
  .action((options: { config?: string; dryRun?: boolean; allowDestructive?: boolean }) =>
    migrate(options, console.log),
  );

program
  .command("gc")
  .description(
    "Remove uploaded files no record owns: never attached and older than --older-than, or let go of by their record.",
  )
  .option("--config <path>", "the config file (default: crudkit.config.{ts,mts,js,mjs} in this directory)")
  .requiredOption("--older-than <duration>", "only uploads older than this: 90s, 30m, 24h, 7d")
  .option("--dry-run", "list what would be removed, remove nothing")
  .action((options: { config?: string; olderThan: string; dryRun?: boolean }) => gc(options, console.log));

try {
  await program.parseAsync(process.argv);
} catch (error) {
  if (error instanceof CommanderError) {
    process.exitCode = error.exitCode;
  } else if (error instanceof CliError) {
    console.error(`crudkit: ${error.message}`);
    process.exitCode = error.exitCode;
  } else {
    console.error(`crudkit: ${(error as Error)?.message ?? String(error)}`);
    process.exitCode = 1;
  }
}
