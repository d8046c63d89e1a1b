// The SQL of each migration step, built with Kysely's schema builder per dialect and kept as text
// so a plan can be printed, written to a file, and applied.

import { type ColumnDefinitionBuilder, type Compilable, sql } from "kysely";
import type { Database } from "../database.ts";
import type { DialectProfile } from "../dialect.ts";
import { type ColumnDefinition, foreignKeyName, type TableDefinition } from "../table-definition.ts";

const text = (query: Compilable) => query.compile().sql;

/** Columns that are keys or indexed (MySQL needs a bounded type for them). */
export function keyedColumns(table: TableDefinition): Set<string> {
  const keyed = new Set<string>();
  for (const [name, column] of Object.entries(table.columns))
    if (column.primaryKey || column.unique || column.references) keyed.add(name);
  for (const index of table.indexes ?? []) for (const name of index.columns) keyed.add(name);
  return keyed;
}

/** CREATE TABLE (under `as`, for SQLite rebuilds) and its indexes. */
export function createTableStatements(db: Database, table: TableDefinition, as = table.name): string[] {
  let builder = db.kysely.schema.createTable(as);
  const keyed = keyedColumns(table);
  for (const [name, column] of Object.entries(table.columns)) {
    builder = builder.addColumn(name, db.profile.columnType(column.type, keyed.has(name)), (c) =>
      constraints(c, name, column, db.profile),
    );
  }
  // SQLite declares foreign keys with the table; elsewhere they are added once every table exists.
  if (db.profile.foreignKeyChanges === "rebuild")
    for (const [name, column] of Object.entries(table.columns)) {
      const key = column.references;
      if (key)
        builder = builder.addForeignKeyConstraint(
          foreignKeyName(table.name, name),
          [name as never],
          key.table,
          ["id"],
          (c) => c.onDelete(key.onDelete),
        );
    }
  const options = db.profile.tableOptions;
  return [
    text(options ? builder.modifyEnd(options) : builder),
    ...(table.indexes ?? []).map((i) => createIndexStatement(db, table.name, i)),
  ];
}

export function createIndexStatement(
  db: Database,
  table: string,
  index: NonNullable<TableDefinition["indexes"]>[number],
): string {
  if (index.method === "trigram") {
    const column = sql.ref(index.columns[0]!);
    return text(
      db.kysely.schema.createIndex(index.name).on(table).using("gin").expression(sql`${column} gin_trgm_ops`),
    );
  }
  let builder = db.kysely.schema
    .createIndex(index.name)
    .on(table)
    .columns([...index.columns]);
  if (index.unique) builder = builder.unique();
  return text(builder);
}

/** ADD COLUMN; `fill` is the value existing rows get when the column is NOT NULL. */
export function addColumnStatement(
  db: Database,
  table: TableDefinition,
  name: string,
  fill: unknown,
): string {
  const column = table.columns[name]!;
  const keyed = keyedColumns(table).has(name);
  const definition: ColumnDefinition = { ...column, primaryKey: false, unique: false };
  return text(
    db.kysely.schema
      .alterTable(table.name)
      .addColumn(name, db.profile.columnType(column.type, keyed), (c) => {
        const built = constraints(c, name, definition, db.profile);
        return column.notNull && !column.defaultNow
          ? built.defaultTo(storedLiteral(db.profile, column, fill))
          : built;
      }),
  );
}

export function dropColumnStatement(db: Database, table: string, column: string): string {
  return text(db.kysely.schema.alterTable(table).dropColumn(column));
}

export function dropIndexStatement(db: Database, table: string, name: string): string {
  // MySQL names the table; PostgreSQL and SQLite index names are unique in the schema.
  const drop = db.kysely.schema.dropIndex(name);
  return text(db.profile.dropIndexOnTable ? drop.on(table) : drop);
}

export function dropTableStatement(db: Database, table: string): string {
  return text(db.kysely.schema.dropTable(table));
}

/** PostgreSQL and MySQL change a column in place; SQLite rebuilds the table (see rebuildStatements). */
export function alterColumnStatements(
  db: Database,
  table: TableDefinition,
  name: string,
  change: "type" | "nullability",
): string[] {
  const column = table.columns[name]!;
  const type = db.profile.columnType(column.type, keyedColumns(table).has(name));
  if (db.profile.alterColumns === "modify column") {
    return [
      text(
        db.kysely.schema
          .alterTable(table.name)
          .modifyColumn(name, type, (c) => (column.notNull ? c.notNull() : c)),
      ),
    ];
  }
  const ref = sql.ref(name);
  const alter = (clause: ReturnType<typeof sql>) =>
    sql`alter table ${sql.table(table.name)} alter column ${ref} ${clause}`.compile(db.kysely).sql;
  if (change === "type")
    return [alter(sql`type ${sql.raw(String(type))} using ${ref}::${sql.raw(String(type))}`)];
  return [alter(column.notNull ? sql`set not null` : sql`drop not null`)];
}

/** SQLite cannot alter or drop most columns: copy into a new table with the desired shape, swap. */
export function rebuildStatements(
  db: Database,
  table: TableDefinition,
  liveColumns: Iterable<string>,
): string[] {
  const temporary = `__crudkit_rebuild_${table.name}`;
  const kept = [...liveColumns].filter((c) => c in table.columns);
  const columns = sql.join(kept.map((c) => sql.ref(c)));
  const [create, ...indexes] = createTableStatements(db, table, temporary);
  return [
    create!,
    sql`insert into ${sql.table(temporary)} (${columns}) select ${columns} from ${sql.table(table.name)}`.compile(
      db.kysely,
    ).sql,
    dropTableStatement(db, table.name),
    text(db.kysely.schema.alterTable(temporary).renameTo(table.name)),
    ...indexes,
  ];
}

export function constraints(
  c: ColumnDefinitionBuilder,
  name: string,
  column: ColumnDefinition,
  profile: DialectProfile,
) {
  let builder = c;
  if (column.primaryKey) builder = builder.primaryKey();
  if (column.notNull) builder = builder.notNull();
  if (column.unique) builder = builder.unique();
  if (column.defaultNow) builder = builder.defaultTo(profile.currentTime);
  if (column.enumValues)
    builder = builder.check(sql`${sql.ref(name)} in (${sql.join(column.enumValues.map((v) => sql.lit(v)))})`);
  return builder;
}

/** A value as a SQL literal for a column, in the form crudkit stores it. */
function storedLiteral(profile: DialectProfile, column: ColumnDefinition, value: unknown) {
  switch (column.type) {
    case "boolean":
      return profile.booleansAsIntegers ? sql.lit(value ? 1 : 0) : sql.lit(Boolean(value));
    case "json":
      return sql.lit(JSON.stringify(value ?? null));
    case "date":
      return sql.lit(profile.dateLiteral(new Date(value as string | number | Date)));
    default:
      return sql.lit(value as string | number);
  }
}

/** What existing rows get for a new required column with no default of its own. */
export function zeroValue(column: ColumnDefinition): unknown {
  if (column.enumValues?.length) return column.enumValues[0];
  return { text: "", integer: 0, number: 0, boolean: false, date: 0, json: null }[column.type];
}
