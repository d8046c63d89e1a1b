// `crudkit generate` and `crudkit migrate`: plan the desired schema against the live database,
// then write the SQL for review, or apply it.

import { mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { applyMigration, applyPlan } from "../db/migrations/apply.ts";
import {
  dataLoss,
  type MigrationFile,
  readMigrationFiles,
  renderMigrationFile,
  slugOf,
} from "../db/migrations/files.ts";
import { withMigrationLock } from "../db/migrations/lock.ts";
import { type MigrationPlan, planMigration } from "../db/migrations/plan.ts";
import { migrationName, readApplied } from "../db/migrations/record.ts";
import type { ChainReport, VerifyOptions } from "../plugins/audit/audit-verify.ts";
import type { WebhooksControl } from "../plugins/webhooks/webhooks.ts";
import { CliError, type LoadedApp, loadConfig } from "./load-config.ts";

export interface GenerateOptions {
  config?: string;
  out: string;
  /** Write changes that lose data as real statements (each with a comment saying what it drops). */
  allowDestructive?: boolean;
}

export interface MigrateOptions {
  config?: string;
  dryRun?: boolean;
  allowDestructive?: boolean;
  /** Where `generate` writes and `migrate` reads migration files. @default "migrations" */
  dir?: string;
  /** Plan from the live database and apply, whatever files there are (development). */
  push?: boolean;
  /**
   * Kept for scripts that pass it: `migrate` always exits 4 when the database still differs from
   * the resources afterwards.
   */
  check?: boolean;
}

export interface GcOptions {
  config?: string;
  /** `24h`, `30m`, `7d`, `90s`. */
  olderThan: string;
  dryRun?: boolean;
}

export interface AuditVerifyOptions {
  config?: string;
  /** `SEQ:HASH`, a head kept elsewhere (`GET /audit/head`): the entry at SEQ must still hash to HASH. */
  anchor?: string;
}

export interface WebhooksReplayOptions {
  config?: string;
  /** The endpoint's id, as given in `webhooks({ endpoints })`. */
  endpoint: string;
  /** An ISO 8601 date or date-time (`2024-05-01`, `2024-05-01T12:00:00Z`), or a time back from now (`30m`, `24h`, `7d`). */
  since: string;
}

type Print = (line: string) => void;

export async function generate(options: GenerateOptions, print: Print): Promise<void> {
  await withApp(options.config, async ({ internals }) => {
    const plan = await plan_(internals);
    if (plan.steps.length === 0) {
      print("nothing to generate: the database matches the schema");
      return;
    }
    const name = `${migrationName()}_${slugOf(plan)}`;
    const dir = resolve(options.out);
    mkdirSync(dir, { recursive: true });
    const file = join(dir, `${name}.sql`);
    writeFileSync(file, renderMigrationFile(plan, name, { allowDestructive: options.allowDestructive }));
    print(`wrote ${file} (${plan.steps.length} step${plan.steps.length === 1 ? "" : "s"})`);
    for (const step of plan.steps)
      print(`  ${step.destructive ? `destructive: ${dataLoss(step.description)}` : step.description}`);
    const destructive = plan.steps.filter((s) => s.destructive).length;
    if (destructive && options.allowDestructive)
      print(`${destructive} destructive step(s) are written as statements: they lose data when applied.`);
    else if (destructive)
      print(
        `${destructive} destructive step(s) are commented out: after this file the database will still differ from ` +
          "the resources. To make them, delete the file and run crudkit generate --allow-destructive.",
      );
  });
}

export async function migrate(options: MigrateOptions, print: Print): Promise<void> {
  const files = options.push ? [] : readMigrationFiles(resolve(options.dir ?? "migrations"));
  if (files.length > 0) return applyFiles(files, options, print);
  await withApp(options.config, async ({ internals }) => {
    // Planned and applied under the migration lock: a second run waits, then finds nothing to do.
    const applied = await withMigrationLock(internals.database, async (locked) => {
      const plan = await planMigration(locked, internals.tables);
      if (plan.steps.length === 0) {
        print("nothing to migrate: the database matches the schema");
        return false;
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
        return false;
      }
      const name = migrationName();
      await applyPlan(locked, plan, plan.steps, name);
      print(
        `applied migration ${name}: ${plan.steps.length} step(s), ${plan.steps.flatMap((s) => s.statements).length} statement(s)`,
      );
      return true;
    });
    if (applied) await reportDrift(internals, true, print);
  });
}

/**
 * `crudkit gc --older-than 24h`: removes uploads no record ever claimed, uploaded before the
 * threshold, and files records let go of whose removal failed. Nothing is removed from an app
 * with no `fileRef` field: there, no file is ever attached.
 */
export async function gc(options: GcOptions, print: Print): Promise<void> {
  const age = parseDuration(options.olderThan);
  await withApp(options.config, async ({ internals }) => {
    if (!internals.files || !internals.ownsFiles) {
      print("nothing to collect: no resource has a fileRef field, so no upload is ever attached");
      return;
    }
    const report = await internals.files.collectGarbage({
      olderThan: new Date(Date.now() - age),
      dryRun: options.dryRun === true,
    });
    const verb = options.dryRun ? "would remove" : "removed";
    for (const file of report.files)
      print(`${verb} ${file.id} (${file.originalName}, ${file.size} bytes, ${file.reason})`);
    const bytes = report.files.reduce((sum, f) => sum + f.size, 0);
    print(`${options.dryRun ? "dry run: " : ""}${verb} ${report.files.length} file(s), ${bytes} bytes`);
  });
}

/**
 * `crudkit audit verify`: walks the audit log's hash chain (the audit plugin's `verify()`) and exits
 * 1 at the first bad entry, naming it; 0 when every link holds.
 */
export async function auditVerify(options: AuditVerifyOptions, print: Print): Promise<void> {
  const anchor = options.anchor === undefined ? undefined : parseAnchor(options.anchor);
  await withApp(options.config, async ({ app, path }) => {
    const plugins = (app as { plugins?: readonly { id?: unknown; verify?: unknown }[] }).plugins ?? [];
    const plugin = plugins.find((p) => p.id === "audit" && typeof p.verify === "function");
    if (!plugin)
      throw new CliError(
        `The app in ${path} has no audit plugin: add audit() to its plugins to keep an audit log.`,
      );
    const report = await (plugin.verify as (options: VerifyOptions) => Promise<ChainReport>)({ anchor });
    if (report.unchained > 0)
      print(
        `${report.unchained} entr${report.unchained === 1 ? "y was" : "ies were"} written before the chain existed: unchained, not covered`,
      );
    if (!report.ok) {
      print(`${report.problem}: ${report.message}`);
      const id = report.at.id === null ? "" : ` (id ${report.at.id})`;
      throw new CliError(
        `audit chain broken at seq ${report.at.seq}${id}: ${report.problem}; ${report.entries} entries verified before it.`,
      );
    }
    print(`audit chain verified: ${report.entries} entries, head seq ${report.head.seq}`);
  });
}

/** `--anchor 1234:9f86…`: a seq and the 64 hex digits of its hash. */
function parseAnchor(text: string): { seq: number; hash: string } {
  const match = /^(\d{1,15}):([0-9a-f]{64})$/.exec(text);
  if (!match)
    throw new CliError(
      `--anchor takes SEQ:HASH as GET /audit/head answers them (1234:9f86…, 64 hex digits), not "${text.slice(0, 100)}".`,
    );
  return { seq: Number(match[1]), hash: match[2]! };
}

/** `crudkit webhooks status`: per endpoint, its events pending (of those, failing), delivered and dead. */
export async function webhooksStatus(options: { config?: string }, print: Print): Promise<void> {
  await withWebhooks(options.config, async (control) => {
    const rows = (await control.status()).map((s) =>
      [s.endpoint, s.pending, s.failing, s.delivered, s.dead].map(String),
    );
    for (const line of table(["endpoint", "pending", "failing", "delivered", "dead"], rows)) print(line);
  });
}

/**
 * `crudkit webhooks replay --endpoint billing --since 24h`: the endpoint's delivered and dead events
 * created since then are due again (same `webhook-id`s, so receivers can tell them apart). The
 * app's dispatcher may send some before the command ends; the others go out from the running app.
 */
export async function webhooksReplay(options: WebhooksReplayOptions, print: Print): Promise<void> {
  const since = parseSince(options.since);
  await withWebhooks(options.config, async (control) => {
    let count: number;
    try {
      count = await control.replay({ endpoint: options.endpoint, since });
    } catch (error) {
      // An unknown endpoint. By name: the config's crudkit-api may be another copy than the CLI's.
      if ((error as Error)?.name === "ConfigError") throw new CliError((error as Error).message);
      throw error;
    }
    print(
      `re-queued ${count} event${count === 1 ? "" : "s"} of endpoint "${options.endpoint}" created since ${since.toISOString()}`,
    );
  });
}

/** The loaded app's webhooks() plugin, once its startup (migrations, then the plugin's init) is done. */
async function withWebhooks(
  config: string | undefined,
  work: (control: WebhooksControl) => Promise<void>,
): Promise<void> {
  await withApp(config, async ({ app, path }) => {
    const plugins = (app as { plugins?: readonly { id?: unknown; status?: unknown }[] }).plugins ?? [];
    const plugin = plugins.find((p) => p.id === "webhooks" && typeof p.status === "function");
    if (!plugin)
      throw new CliError(
        `The app in ${path} has no webhooks plugin: add webhooks({ endpoints }) to its plugins to send webhooks.`,
      );
    // Again, not swallowed this time: a database out of reach is reported as such.
    await app.ready;
    await work(plugin as unknown as WebhooksControl);
  });
}

/** Left-aligned first column, the others right-aligned, two spaces apart. */
function table(header: readonly string[], rows: readonly string[][]): string[] {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  return [header, ...rows].map((row) =>
    row
      .map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!)))
      .join("  ")
      .trimEnd(),
  );
}

const UNITS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const DURATION = /^(\d{1,6})([smhd])$/;

/** `24h` → milliseconds; anything else is the caller's mistake, told in terms of `option`. */
export function parseDuration(text: string, option = "--older-than"): number {
  const match = DURATION.exec(text);
  if (!match) throw new CliError(`${option} takes a duration such as 90s, 30m, 24h or 7d, not "${text}".`);
  return Number(match[1]) * UNITS[match[2]!]!;
}

const ISO_TIME = /^(\d{4})-(\d{2})-(\d{2})(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/;

/**
 * `--since`: an ISO 8601 date (midnight UTC) or date-time (local time without an offset, as in
 * JavaScript), or a duration back from now. Not any text `Date` would take: it reads "March 7"
 * as 2001, and 2024-02-31 as March 2nd.
 */
export function parseSince(text: string, now = Date.now()): Date {
  const wrong = () =>
    new CliError(
      `--since takes an ISO 8601 date or date-time (2024-05-01, 2024-05-01T12:00:00Z) or a time back from now (30m, 24h, 7d), not "${text.slice(0, 100)}".`,
    );
  let time: number;
  if (DURATION.test(text)) time = now - parseDuration(text, "--since");
  else {
    const iso = ISO_TIME.exec(text);
    if (!iso) throw wrong();
    const [year, month, day] = [Number(iso[1]), Number(iso[2]), Number(iso[3])];
    const calendar = new Date(Date.UTC(year, month - 1, day));
    if (calendar.getUTCMonth() !== month - 1 || calendar.getUTCDate() !== day) throw wrong();
    time = Date.parse(text);
  }
  // NaN: an hour that is not one (25:00), or a duration reaching before what a Date can hold.
  if (Number.isNaN(time) || Number.isNaN(new Date(time).getTime())) throw wrong();
  if (time > now) throw new CliError(`--since "${text}" is in the future: no event was created after it.`);
  return new Date(time);
}

/**
 * `migrate` with migration files: each pending one applied as reviewed, in order; an applied one
 * that has changed since stops everything; then the drift left between database and resources.
 */
async function applyFiles(files: MigrationFile[], options: MigrateOptions, print: Print): Promise<void> {
  await withApp(options.config, async ({ internals }) => {
    // Each file is read and applied under the migration lock, one lock section a file, so a file
    // that fails leaves the ones before it applied (on SQLite too, where the section is a
    // transaction); a second run waits, then finds them applied.
    const pending = await withMigrationLock(internals.database, async (locked) => {
      const applied = await readApplied(locked);
      refuseChanged(files, applied);
      return files.filter((f) => !applied.has(f.name));
    });
    for (const file of pending) {
      print(`-- ${file.name}`);
      for (const statement of file.statements) print(`${statement};`);
    }
    if (options.dryRun) print(`dry run: nothing was applied (${pending.length} pending migration file(s))`);
    else
      for (const file of pending)
        await withMigrationLock(internals.database, async (locked) => {
          const applied = await readApplied(locked);
          refuseChanged(files, applied);
          if (applied.has(file.name)) return;
          await applyMigration(locked, {
            name: file.name,
            statements: file.statements,
            tables: file.tables ?? internals.tables.map((t) => t.name),
          });
          print(`applied ${file.name}: ${file.statements.length} statement(s)`);
        });
    if (pending.length === 0 && !options.dryRun) print("no pending migration files");
    if (options.dryRun) return;
    // Never "done" while the database still differs: applied files may have left changes out.
    await reportDrift(internals, true, print);
  });
}

/** An applied migration whose file has changed since: nothing more is applied until it is put back. */
function refuseChanged(files: readonly MigrationFile[], applied: ReadonlyMap<string, string>): void {
  const changed = files.filter((f) => applied.has(f.name) && applied.get(f.name) !== f.checksum);
  if (changed.length > 0)
    throw new CliError(
      `Refused: ${changed.map((f) => f.name).join(", ")} changed after it was applied (its checksum differs from the one recorded). ` +
        "Put the applied file back as it was, and make further changes in a new migration (crudkit generate).",
      3,
    );
}

/**
 * What still differs between the database and the resources: "in sync" only when nothing does.
 * With `fail`, a difference exits 4, naming the command that resolves it.
 */
async function reportDrift(internals: LoadedApp["internals"], fail: boolean, print: Print): Promise<void> {
  const plan = await plan_(internals);
  if (plan.steps.length === 0) {
    print("in sync: the database matches the resources");
    return;
  }
  print(`not in sync: the database differs from the resources in ${plan.steps.length} step(s):`);
  for (const step of plan.steps)
    print(`  ${step.destructive ? `destructive: ${dataLoss(step.description)}` : step.description}`);
  const destructive = plan.steps.some((s) => s.destructive);
  const command = destructive ? "crudkit generate --allow-destructive" : "crudkit generate";
  print(`To resolve: run ${command}, review the file it writes, then crudkit migrate.`);
  if (fail)
    throw new CliError(
      `the database is not in sync with the resources; run ${command}, then crudkit migrate.`,
      4,
    );
}

/** `crudkit status`: the migrations applied, the files pending, and any drift. */
export async function status(options: { config?: string; dir?: string }, print: Print): Promise<void> {
  const files = readMigrationFiles(resolve(options.dir ?? "migrations"));
  await withApp(options.config, async ({ internals }) => {
    const applied = await readApplied(internals.database);
    const byName = new Map(files.map((f) => [f.name, f]));
    for (const [name, checksum] of applied) {
      const file = byName.get(name);
      const note = !file
        ? "(no file: applied with --push or elsewhere)"
        : file.checksum === checksum
          ? ""
          : "(CHANGED since applied)";
      print(`applied  ${name} ${note}`.trimEnd());
    }
    for (const file of files) if (!applied.has(file.name)) print(`pending  ${file.name}`);
    if (applied.size === 0 && files.length === 0) print("no migrations applied, no migration files");
    await reportDrift(internals, false, print);
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
    if (loaded.internals.database.profile.errors.unavailable(error)) {
      const code =
        (error as { code?: string }).code ??
        (error as { cause?: { code?: string } }).cause?.code ??
        "connection failed";
      throw new CliError(
        `Cannot reach the database (${code}). Check database.url in ${loaded.path} and that the server is running.`,
      );
    }
    throw new CliError(`The command failed: ${(error as Error).message}`);
  } finally {
    await loaded.app.close().catch(() => {});
  }
}
