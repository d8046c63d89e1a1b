// The `crudkit` command line: init, generate, migrate, status, gc, audit verify and
// webhooks status|replay.

import { readFileSync } from "node:fs";
import { Command, CommanderError } from "commander";
import { auditVerify, gc, generate, migrate, status, webhooksReplay, webhooksStatus } from "./commands.ts";
import { init } from "./init/init.ts";
import { type InitFlags, PLUGIN_NAMES } from "./init/options.ts";
import { CliError } from "./load-config.ts";

// Apps loaded by a command run no background work (webhooks() sends nothing from here).
process.env.CRUDKIT_CLI = "1";

const program = new Command()
  .name("crudkit")
  .description(
    "Start a crudkit project (init), then manage its schema: the other commands load the app from crudkit.config.ts.",
  )
  .version(packageVersion(), "-v, --version")
  .exitOverride()
  .showHelpAfterError();

program
  .command("init")
  .description(
    "Write a new crudkit project into dir (default: this directory): package.json, tsconfig.json, src/resources.ts, src/app.ts, src/server.ts, crudkit.config.ts, a test, .gitignore and a README; then install it. Asks for the database and plugins at a terminal; asks nothing with --yes or without one.",
  )
  .argument(
    "[dir]",
    "where to write the project; created when missing, refused when not empty (without --force)",
  )
  .option("-y, --yes", "ask nothing: the choices given as flags, sqlite and no plugins otherwise")
  .option(
    "--database <name>",
    "sqlite (a file in ./data), postgres or mysql (MySQL or MariaDB, at DATABASE_URL)",
  )
  .option("--plugins <list>", `comma-separated, from ${PLUGIN_NAMES.join(", ")}; or none`)
  .option(
    "--force",
    "write into a directory that is not empty; a file init would overwrite is first renamed to <name>.bak (listed), never overwritten",
  )
  .option("--no-install", "write the files only, and print the install command")
  .option(
    "--from <path>",
    `install crudkit-api from a tarball (npm pack) or a crudkit-api checkout (packed for you), copied into vendor/ as a file: dependency; without it, crudkit-api@^${packageVersion()} from the npm registry (until it is published there, pass --from)`,
  )
  .addHelpText(
    "after",
    "\nThe package manager is the one that runs init (npm, pnpm, yarn or bun). Exit codes: 0 done, 1 refused (a directory not empty, a failed install), 2 a flag with a value init does not take.",
  )
  .action((dir: string | undefined, flags: InitFlags) =>
    init(dir, flags, {
      cwd: process.cwd(),
      env: process.env,
      interactive: Boolean(process.stdin.isTTY && process.stdout.isTTY),
      streams: { input: process.stdin, output: process.stdout },
      print: console.log,
      version: packageVersion(),
    }),
  );

program
  .command("generate")
  .description(
    "Write the SQL that brings the database to the app's schema into a timestamped .sql file, for review.",
  )
  .option("--config <path>", "the config file (default: crudkit.config.{ts,mts,js,mjs} in this directory)")
  .option("--out <dir>", "where to write the .sql file", "migrations")
  .option(
    "--allow-destructive",
    "write changes that lose data (drop table or column, type change, NOT NULL) as statements, each with a comment saying what it drops; without it they are commented out and the file leaves the database out of sync",
  )
  .action((options: { config?: string; out: string; allowDestructive?: boolean }) =>
    generate(options, console.log),
  );

program
  .command("migrate")
  .description(
    "Apply the pending migration files in order (as reviewed), then report drift; without files, apply the changes that bring the database to the app's schema.",
  )
  .option("--config <path>", "the config file (default: crudkit.config.{ts,mts,js,mjs} in this directory)")
  .option("--dir <dir>", "where the migration files are", "migrations")
  .option("--push", "ignore migration files: plan from the live database and apply (development)")
  .option(
    "--check",
    "kept for scripts: migrate always exits 4 when the database still differs from the resources",
  )
  .option("--dry-run", "print the statements without applying them")
  .option(
    "--allow-destructive",
    "with --push or without files: also apply changes that lose data (drop table or column, type change, NOT NULL)",
  )
  .action(
    (options: {
      config?: string;
      dir?: string;
      push?: boolean;
      check?: boolean;
      dryRun?: boolean;
      allowDestructive?: boolean;
    }) => migrate(options, console.log),
  );

program
  .command("status")
  .description(
    "List the migrations applied, the files pending, and any drift between database and resources.",
  )
  .option("--config <path>", "the config file (default: crudkit.config.{ts,mts,js,mjs} in this directory)")
  .option("--dir <dir>", "where the migration files are", "migrations")
  .action((options: { config?: string; dir?: string }) => status(options, console.log));

program
  .command("gc")
  .description(
    "Remove uploaded files no record owns: never attached and older than --older-than, or let go of by their record.",
  )
  .option("--config <path>", "the config file (default: crudkit.config.{ts,mts,js,mjs} in this directory)")
  .requiredOption("--older-than <duration>", "only uploads older than this: 90s, 30m, 24h, 7d")
  .option("--dry-run", "list what would be removed, remove nothing")
  .action((options: { config?: string; olderThan: string; dryRun?: boolean }) => gc(options, console.log));

program
  .command("audit")
  .description("The audit log (the audit() plugin).")
  .command("verify")
  .description(
    "Walk the audit log's hash chain and recompute every link; exit 1 at the first entry edited, deleted or reordered, naming it.",
  )
  .option("--config <path>", "the config file (default: crudkit.config.{ts,mts,js,mjs} in this directory)")
  .option("--anchor <seq:hash>", "a head kept elsewhere (GET /audit/head): the chain must still lead to it")
  .action((options: { config?: string; anchor?: string }) => auditVerify(options, console.log));

const webhooks = program.command("webhooks").description("The webhook outbox (the webhooks() plugin).");

webhooks
  .command("status")
  .description(
    "Per endpoint: events pending (of those, failing: their last attempt failed), delivered, and dead (out of attempts).",
  )
  .option("--config <path>", "the config file (default: crudkit.config.{ts,mts,js,mjs} in this directory)")
  .action((options: { config?: string }) => webhooksStatus(options, console.log));

webhooks
  .command("replay")
  .description(
    "Send again an endpoint's delivered and dead events created since a time, with their original webhook-id.",
  )
  .option("--config <path>", "the config file (default: crudkit.config.{ts,mts,js,mjs} in this directory)")
  .requiredOption("--endpoint <id>", "the endpoint's id, as in webhooks({ endpoints })")
  .requiredOption(
    "--since <time>",
    "an ISO 8601 date or date-time (2024-05-01, 2024-05-01T12:00:00Z), or a time back from now: 30m, 24h, 7d",
  )
  .action((options: { config?: string; endpoint: string; since: string }) =>
    webhooksReplay(options, console.log),
  );

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

function packageVersion(): string {
  for (const path of ["../../package.json", "../package.json"]) {
    try {
      return JSON.parse(readFileSync(new URL(path, import.meta.url), "utf8")).version;
    } catch {}
  }
  return "unknown";
}
