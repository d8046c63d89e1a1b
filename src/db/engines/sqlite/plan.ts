// Which SQLite list queries are cheap whatever the table's size: those SQLite answers by walking
// an index in the list's order and stopping at the LIMIT. Those run on the main connection; any
// other (a sort, a scan past rows that do not match, a long OFFSET) may take as long as the table
// is big, and goes to a reader thread (readers.ts).

import { type Kysely, sql } from "kysely";
import { type QueryTemplate, runTemplate } from "../../query-template.ts";

/**
 * SQLite's plan for `template`: true when it reads rows in order from an index (`SEARCH … USING
 * INDEX`, or a plain `SCAN … USING INDEX` when nothing filters), never sorting (`TEMP B-TREE`),
 * never materializing a subquery.
 */
export async function walksIndex(
  db: Kysely<any>,
  template: QueryTemplate,
  values: Readonly<Record<string, unknown>>,
  filtered: boolean,
): Promise<boolean> {
  const explain = {
    ...template,
    compiled: { ...template.compiled, sql: `explain query plan ${template.compiled.sql}` },
  };
  const { rows } = await runTemplate<{ detail: string }>(db, explain as QueryTemplate, values);
  return rows.every(({ detail }) => {
    if (/TEMP B-TREE|SUBQUERY|VIRTUAL TABLE/.test(detail)) return false;
    // Unfiltered, a scan in index order stops at the LIMIT; filtered, it may read the whole table.
    if (detail.startsWith("SCAN")) return !filtered && / USING (COVERING )?INDEX /.test(detail);
    return true;
  });
}

/** About how many rows `table` has, looked up at most once a second (rowids grow with the table). */
export function tableSize(kysely: Kysely<any>, table: string): () => Promise<number> {
  let size = 0;
  let checkedAt = 0;
  const query = sql<{ last: unknown }>`select max(rowid) as last from ${sql.table(table)}`;
  return async () => {
    const now = Date.now();
    if (now - checkedAt >= 1000) {
      checkedAt = now;
      size = Number((await query.execute(kysely)).rows[0]?.last ?? 0);
    }
    return size;
  };
}
