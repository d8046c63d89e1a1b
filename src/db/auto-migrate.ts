// autoMigrate: creates missing tables, columns and indexes at startup. It only ever adds; the
// planner behind `crudkit migrate` (which also refuses destructive changes) builds on this.

import { type ColumnDefinitionBuilder, sql } from "kysely";
import type { Database } from "./database.ts";
import { columnDataType, type DialectName, tableOptions } from "./dialect.ts";
import type { ColumnDefinition, TableDefinition } from "./table-definition.ts";

export async function autoMigrate(db: Database, tables: readonly TableDefinition[]): Promise<void> {
  const existing = await db.kysely.introspection.getTables();
  const columnsByTable = new Map(existing.map((t) => [t.name, new Set(t.columns.map((c) => c.name))]));
  for (const table of tables) {
    const columns = columnsByTable.get(table.name);
    if (!columns) {
      await createTable(db, table);
    } else {
      for (const [name, column] of Object.entries(table.columns)) {
        // A NOT NULL column cannot be added to rows that already exist, so added columns allow null.
        if (!columns.has(name))
          await addColumn(db, table.name, name, { ...column, notNull: false, primaryKey: false });
      }
    }
    for (const index of table.indexes ?? []) {
      let builder = db.kysely.schema
        .createIndex(index.name)
        .ifNotExists()
        .on(table.name)
        .columns([...index.columns]);
      if (index.unique) builder = builder.unique();
      await builder.execute();
    }
  }
}

async function createTable(db: Database, table: TableDefinition): Promise<void> {
  let builder = db.kysely.schema.createTable(table.name).ifNotExists();
  const keyed = keyedColumns(table);
  for (const [name, column] of Object.entries(table.columns)) {
    builder = builder.addColumn(name, columnDataType(db.dialect, column.type, keyed.has(name)), (c) =>
      constraints(c, name, column, db.dialect),
    );
  }
  const options = tableOptions(db.dialect);
  await (options ? builder.modifyEnd(options) : builder).execute();
}

/** Columns that are keys or indexed (MySQL needs a bounded type for them). */
export function keyedColumns(table: TableDefinition): Set<string> {
  const keyed = new Set<string>();
  for (const [name, column] of Object.entries(table.columns))
    if (column.primaryKey || column.unique) keyed.add(name);
  for (const index of table.indexes ?? []) for (const name of index.columns) keyed.add(name);
  return keyed;
}

async function addColumn(db: Database, table: string, name: string, column: ColumnDefinition): Promise<void> {
  await db.kysely.schema
    .alterTable(table)
    .addColumn(name, columnDataType(db.dialect, column.type), (c) => constraints(c, name, column, db.dialect))
    .execute();
}

function constraints(
  c: ColumnDefinitionBuilder,
  name: string,
  column: ColumnDefinition,
  dialect: DialectName,
) {
  let builder = c;
  if (column.primaryKey) builder = builder.primaryKey();
  if (column.notNull) builder = builder.notNull();
  if (column.unique) builder = builder.unique();
  if (column.defaultNow) builder = builder.defaultTo(currentTime(dialect));
  if (column.enumValues)
    builder = builder.check(sql`${sql.ref(name)} in (${sql.join(column.enumValues.map((v) => sql.lit(v)))})`);
  return builder;
}

/** The current time in the same form crudkit writes dates (ISO 8601 text on SQLite). */
function currentTime(dialect: DialectName) {
  if (dialect === "sqlite") return sql`(strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))`;
  if (dialect === "mysql") return sql`(current_timestamp(3))`;
  return sql`now()`;
}
