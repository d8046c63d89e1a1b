// The database as it is: tables, columns (type as the engine names it, nullability) and indexes.

import { sql } from "kysely";
import type { Database } from "../database.ts";

export interface LiveColumn {
  dataType: string;
  nullable: boolean;
}

export interface LiveTable {
  columns: Map<string, LiveColumn>;
  indexes: Set<string>;
  /** Whether the table holds any row (read only when a plan needs it). */
  hasRows(): Promise<boolean>;
}

export type LiveSchema = Map<string, LiveTable>;

export async function readLiveSchema(db: Database): Promise<LiveSchema> {
  const tables = await db.kysely.introspection.getTables();
  const indexes = await readIndexes(db);
  const schema: LiveSchema = new Map();
  for (const table of tables) {
    schema.set(table.name, {
      columns: new Map(
        table.columns.map((c) => [c.name, { dataType: c.dataType.toLowerCase(), nullable: c.isNullable }]),
      ),
      indexes: indexes.get(table.name) ?? new Set(),
      hasRows: async () =>
        (await db.kysely.selectFrom(table.name).select(sql`1`.as("one")).limit(1).execute()).length > 0,
    });
  }
  return schema;
}

async function readIndexes(db: Database): Promise<Map<string, Set<string>>> {
  const query = db.profile.indexes();
  const byTable = new Map<string, Set<string>>();
  for (const { name, tableName } of (await query.execute(db.kysely)).rows) {
    if (!byTable.has(tableName)) byTable.set(tableName, new Set());
    byTable.get(tableName)!.add(name);
  }
  return byTable;
}
