// The migration planner: the desired schema (resources, plugin tables, indexes) against the live
// database. Adding is safe; dropping, changing a type or tightening NOT NULL loses data and is
// marked destructive, for the caller to refuse unless explicitly allowed.

import { sql } from "kysely";
import type { Database } from "../database.ts";
import type { IndexDefinition, TableDefinition } from "../table-definition.ts";
import {
  addColumnStatement,
  alterColumnStatements,
  createIndexStatement,
  createTableStatements,
  dropColumnStatement,
  dropIndexStatement,
  dropTableStatement,
  rebuildStatements,
  zeroValue,
} from "./ddl.ts";
import {
  changedForeignKeys,
  foreignKeySteps,
  type LiveForeignKeys,
  readForeignKeys,
  refuseOrphans,
} from "./foreign-keys.ts";
import { type LiveSchema, type LiveTable, readLiveSchema } from "./live-schema.ts";
import { type MigrationPlan, MigrationRefused, type MigrationStep } from "./migration-step.ts";
import { MIGRATIONS_TABLE, readOwnedTables } from "./record.ts";
import {
  dropSearchStatements,
  sqliteSearchSteps,
  trigramExtensionSteps,
  withSearchIndexes,
} from "./search-index.ts";

export async function planMigration(
  db: Database,
  definitions: readonly TableDefinition[],
): Promise<MigrationPlan> {
  const live = await readLiveSchema(db);
  const keys = await readForeignKeys(db);
  const desired = definitions.map((t) => withSearchIndexes(db, t));
  const steps: MigrationStep[] = [...(await trigramExtensionSteps(db, desired))];
  const keySteps =
    db.profile.foreignKeyChanges === "alter table"
      ? await foreignKeySteps(db, desired, keys, live)
      : { drops: [], adds: [] };
  steps.push(...keySteps.drops);
  for (const table of desired) {
    const existing = live.get(table.name);
    if (existing) steps.push(...(await changeTable(db, table, existing, live, keys)));
    else {
      steps.push({
        description: `create table ${table.name}`,
        destructive: false,
        statements: createTableStatements(db, table),
      });
      steps.push(...(await sqliteSearchSteps(db, table, live, false)));
    }
  }
  steps.push(...keySteps.adds);
  const wanted = new Set(desired.map((t) => t.name));
  for (const owned of await readOwnedTables(db, live)) {
    if (!wanted.has(owned) && live.has(owned) && owned !== MIGRATIONS_TABLE) {
      steps.push({
        description: `drop table ${owned}`,
        destructive: true,
        statements: [...dropSearchStatements(db, owned, live), dropTableStatement(db, owned)],
      });
    }
  }
  return { dialect: db.dialect, steps, tables: [...wanted] };
}

async function changeTable(
  db: Database,
  table: TableDefinition,
  live: LiveTable,
  schema: LiveSchema,
  keys: LiveForeignKeys,
): Promise<MigrationStep[]> {
  const steps: MigrationStep[] = [];
  const added: string[] = [];
  // Changes to existing columns; SQLite makes them all at once by rebuilding the table.
  const alterations: {
    description: string;
    destructive: boolean;
    column: string;
    change: "type" | "nullability" | "drop" | "references";
  }[] = [];
  for (const [name, column] of Object.entries(table.columns)) {
    const current = live.columns.get(name);
    if (!current) {
      steps.push(await addColumn(db, table, name, live));
      added.push(name);
      continue;
    }
    if (!db.profile.physicalTypes[column.type].includes(current.dataType)) {
      alterations.push({
        description: `change type of ${table.name}.${name} from ${current.dataType} to ${column.type}`,
        destructive: true,
        column: name,
        change: "type",
      });
    } else if (!column.primaryKey && column.notNull && current.nullable) {
      alterations.push({
        description: `make ${table.name}.${name} NOT NULL`,
        destructive: true,
        column: name,
        change: "nullability",
      });
    } else if (!column.primaryKey && !column.notNull && !current.nullable) {
      alterations.push({
        description: `allow NULL in ${table.name}.${name}`,
        destructive: false,
        column: name,
        change: "nullability",
      });
    }
  }
  for (const name of live.columns.keys()) {
    if (!(name in table.columns))
      alterations.push({
        description: `drop column ${table.name}.${name}`,
        destructive: true,
        column: name,
        change: "drop",
      });
  }
  // SQLite changes a foreign key by rebuilding the table (ALTER TABLE cannot).
  if (db.profile.foreignKeyChanges === "rebuild") {
    const existing = new Set(schema.keys());
    for (const column of changedForeignKeys(table, keys.get(table.name) ?? new Map())) {
      const key = table.columns[column]!.references;
      if (key && !added.includes(column)) await refuseOrphans(db, table.name, column, key, existing);
      alterations.push({
        description: key
          ? `reference ${table.name}.${column} → ${key.table} (on delete ${key.onDelete})`
          : `drop the reference of ${table.name}.${column}`,
        destructive: false,
        column,
        change: "references",
      });
    }
  }
  const rebuilt = db.profile.alterColumns === "rebuild" && alterations.length > 0;
  if (rebuilt) {
    steps.push({
      description: `rebuild table ${table.name} to ${alterations.map((a) => a.description).join("; ")}`,
      destructive: alterations.some((a) => a.destructive),
      // Columns added by the steps above are copied too.
      statements: rebuildStatements(db, table, [...live.columns.keys(), ...added]),
    });
  } else {
    for (const a of alterations) {
      if (a.change === "references") continue;
      const statements =
        a.change === "drop"
          ? [dropColumnStatement(db, table.name, a.column)]
          : alterColumnStatements(db, table, a.column, a.change);
      steps.push({ description: a.description, destructive: a.destructive, statements });
    }
  }
  const wantedIndexes = new Set((table.indexes ?? []).map((i) => i.name));
  // An index of crudkit's naming that left the definition goes (a SQLite rebuild already dropped it).
  if (!rebuilt) {
    for (const name of live.indexes) {
      if (!wantedIndexes.has(name) && isCrudkitIndex(table.name, name))
        steps.push({
          description: `drop index ${name} on ${table.name}`,
          destructive: false,
          statements: [dropIndexStatement(db, table.name, name)],
        });
    }
  }
  const widened = new Set<string>();
  for (const index of table.indexes ?? []) {
    if (live.indexes.has(index.name) && !rebuilt) continue;
    if (index.unique) await refuseDuplicates(db, table.name, index);
    if (rebuilt) continue; // the rebuild creates every index
    if (db.profile.boundedIndexedText)
      steps.push(...(await indexableColumns(db, table, index, live, widened)));
    steps.push({
      description: `create ${index.unique ? "unique " : ""}index ${index.name} on ${table.name}`,
      destructive: false,
      statements: [createIndexStatement(db, table.name, index)],
    });
  }
  steps.push(...(await sqliteSearchSteps(db, table, schema, rebuilt)));
  return steps;
}

/** Names `<table>_…_idx` or `<table>_…_uniq`: what resourceTable and plugin tables create. */
function isCrudkitIndex(table: string, name: string): boolean {
  return name.startsWith(`${table}_`) && (name.endsWith("_idx") || name.endsWith("_uniq"));
}

/** A unique index over rows that already repeat a value cannot be created: say so, and where. */
async function refuseDuplicates(db: Database, table: string, index: IndexDefinition): Promise<void> {
  let query = db.kysely
    .selectFrom(table)
    .select(sql<number>`count(*)`.as("copies"))
    .groupBy([...index.columns]);
  // NULLs never collide in a unique index, on any of the three engines.
  for (const column of index.columns) query = query.where(column, "is not", null);
  const repeated = await query.having(sql`count(*)`, ">", 1).limit(1).execute();
  if (repeated.length > 0) {
    throw new MigrationRefused(
      `Cannot make ${index.columns.join(" + ")} unique on "${table}": some rows already share a value ` +
        `(${Number(repeated[0]!.copies)} rows with the same one, at least). Change or remove the duplicates, then migrate again.`,
    );
  }
}

/**
 * MySQL indexes text only as VARCHAR(255): a LONGTEXT column that becomes indexed is changed
 * first, unless a value is longer than that (then the migration is refused).
 */
async function indexableColumns(
  db: Database,
  table: TableDefinition,
  index: IndexDefinition,
  live: LiveTable,
  widened: Set<string>,
): Promise<MigrationStep[]> {
  const steps: MigrationStep[] = [];
  for (const column of index.columns) {
    const current = live.columns.get(column);
    if (!current || current.dataType === "varchar" || table.columns[column]?.type !== "text") continue;
    if (widened.has(column)) continue;
    widened.add(column);
    const longest = await db.kysely
      .selectFrom(table.name)
      .select(sql<number | null>`max(char_length(${sql.ref(column)}))`.as("longest"))
      .executeTakeFirst();
    if (Number(longest?.longest ?? 0) > 255) {
      throw new MigrationRefused(
        `Cannot index "${table.name}.${column}" on MySQL: it holds values longer than 255 characters, the most an indexed text column holds there. Shorten them, then migrate again.`,
      );
    }
    steps.push({
      description: `change ${table.name}.${column} to varchar(255) so it can be indexed`,
      destructive: false,
      statements: alterColumnStatements(db, table, column, "type"),
    });
  }
  return steps;
}

/**
 * A nullable column, or one with a default, is added as is. A required column without a default
 * can only be added to an empty table; with rows, existing rows would get an invented value, so
 * that is destructive.
 */
async function addColumn(
  db: Database,
  table: TableDefinition,
  name: string,
  live: LiveTable,
): Promise<MigrationStep> {
  const column = table.columns[name]!;
  const description = `add column ${table.name}.${name}`;
  if (!column.notNull || column.default !== undefined || column.defaultNow) {
    return {
      description,
      destructive: false,
      statements: [addColumnStatement(db, table, name, column.default)],
    };
  }
  const invents = await live.hasRows();
  return {
    description: invents
      ? `${description} (required, no default: existing rows get ${JSON.stringify(zeroValue(column))})`
      : description,
    destructive: invents,
    statements: [addColumnStatement(db, table, name, zeroValue(column))],
  };
}

export { type MigrationPlan, MigrationRefused, type MigrationStep } from "./migration-step.ts";
