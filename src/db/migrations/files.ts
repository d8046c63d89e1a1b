// Migration files: what `crudkit generate` writes for review, and what `crudkit migrate` applies.
//
//   -- crudkit migration 20261122_222812345_ab12_create_table_product (sqlite)
//   -- tables: ["product"]
//   -- checksum as generated: 3f…
//   -- create table product
//   create table "product" (…);
//
// A statement ends with the line that ends in `;` (a trigger, with its `end;`); `--` lines are
// comments, so destructive steps written commented out are not applied unless uncommented. The
// checksum that counts is the one of the statements as applied: an edit made during review is
// applied, and an edit made after is refused.

import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { MigrationPlan, MigrationStep } from "./migration-step.ts";

export interface MigrationFile {
  /** The file name without `.sql`: sorts by time. */
  name: string;
  path: string;
  statements: string[];
  /** The tables the desired schema held when it was generated (the only ones a later plan may drop). */
  tables: string[] | undefined;
  checksum: string;
}

/** The checksum a migration is recorded with: of its statements, in order. */
export function checksumOf(statements: readonly string[]): string {
  return createHash("sha256").update(statements.join(";\n")).digest("hex");
}

/** `create table product` → `create_table_product`, at most 40 characters. */
export function slugOf(plan: MigrationPlan): string {
  // Named after what it does to the schema, not the extension it may need first.
  const first = plan.steps.find((s) => !s.description.startsWith("create extension")) ?? plan.steps[0];
  const words = first?.description ?? "migration";
  const slug = words
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "_")
    .replace(/^_+|_+$/g, "")
    .slice(0, 40)
    .replace(/_+$/, "");
  return slug || "migration";
}

export function renderMigrationFile(
  plan: MigrationPlan,
  name: string,
  options: { allowDestructive?: boolean } = {},
): string {
  const writes = (step: MigrationStep) => !step.destructive || options.allowDestructive === true;
  const applied = plan.steps.filter(writes).flatMap((s) => s.statements);
  const left = plan.steps.filter((s) => !writes(s));
  const lines = [
    `-- crudkit migration ${name} (${plan.dialect})`,
    "-- Review (edit if you need to), then apply with `crudkit migrate`; once applied, leave it as it is.",
  ];
  if (left.length > 0)
    lines.push(
      `-- NOT IN SYNC: ${left.length} change(s) below lose data, so they are commented out and this file`,
      "-- leaves the database different from the resources; `crudkit migrate` will say so and exit non-zero.",
      "-- To make them, delete this file and run `crudkit generate --allow-destructive` (each change then",
      "-- says what it drops), or uncomment them here before applying.",
    );
  lines.push(
    `-- tables: ${JSON.stringify(plan.tables)}`,
    `-- checksum as generated: ${checksumOf(applied)}`,
    "",
  );
  for (const step of plan.steps) {
    if (!step.destructive) lines.push(`-- ${step.description}`);
    else if (writes(step)) lines.push(`-- DESTRUCTIVE (loses data): ${dataLoss(step.description)}`);
    else lines.push(`-- DESTRUCTIVE (commented out, loses data): ${dataLoss(step.description)}`);
    for (const statement of step.statements)
      lines.push(writes(step) ? `${statement};` : `-- ${statement.replace(/\n/g, "\n-- ")};`);
    lines.push("");
  }
  return lines.join("\n");
}

/** What a destructive step's description means for the data, in words. */
export function dataLoss(description: string): string {
  let match = /^drop table (\S+)$/.exec(description);
  if (match) return `drops table ${match[1]} and every row in it`;
  match = /^drop column (\S+)$/.exec(description);
  if (match) return `drops column ${match[1]} and every value stored in it`;
  match = /^change type of (\S+) from (.+) to (.+)$/.exec(description);
  if (match)
    return `changes ${match[1]} from ${match[2]} to ${match[3]}: values that do not convert are lost, or the statement fails`;
  match = /^make (\S+) NOT NULL$/.exec(description);
  if (match) return `makes ${match[1]} required: fails while any row holds NULL there (set those rows first)`;
  match = /^add column (\S+) \(required, no default: existing rows get (.+)\)$/.exec(description);
  if (match) return `adds required column ${match[1]}: existing rows get ${match[2]}, a value nobody entered`;
  match = /^rebuild table (\S+) to (.+)$/.exec(description);
  if (match) return `rebuilds table ${match[1]} to ${match[2]!.split("; ").map(dataLoss).join("; ")}`;
  return description;
}

/** The `.sql` files of a directory, oldest first; none when it does not exist. */
export function readMigrationFiles(dir: string): MigrationFile[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => f.endsWith(".sql"))
    .sort()
    .map((file) => {
      const path = join(dir, file);
      const text = readFileSync(path, "utf8");
      const statements = splitStatements(text);
      return {
        name: file.slice(0, -4),
        path,
        statements,
        tables: tablesOf(text),
        checksum: checksumOf(statements),
      };
    });
}

export function splitStatements(text: string): string[] {
  const statements: string[] = [];
  let current: string[] = [];
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trimEnd();
    if (current.length === 0 && (line.trim() === "" || line.trimStart().startsWith("--"))) continue;
    current.push(line);
    const statement = current.join("\n");
    const trigger = /^\s*create\s+trigger\b/i.test(statement);
    if (trigger ? /\bend\s*;$/i.test(line) : line.endsWith(";")) {
      statements.push(statement.slice(0, -1).trim());
      current = [];
    }
  }
  const rest = current.join("\n").trim();
  if (rest) statements.push(rest);
  return statements;
}

function tablesOf(text: string): string[] | undefined {
  const line = /^-- tables: (\[.*\])$/m.exec(text);
  if (!line) return undefined;
  try {
    const parsed = JSON.parse(line[1]!);
    return Array.isArray(parsed) && parsed.every((t) => typeof t === "string") ? parsed : undefined;
  } catch {
    return undefined;
  }
}
