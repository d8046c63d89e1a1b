// Search through SQLite's FTS5 trigram index (created by migrations/search-index.ts). The index
// narrows the rows to those holding the term's trigrams; the LIKE that search always ran then
// decides, so results are exactly what a scan finds, just without the scan.

import { type Expression, type Kysely, type SqlBool, sql } from "kysely";
import type { TextIndex } from "../../dialect.ts";
import { searchTableName } from "../../migrations/search-index.ts";
import { type QueryTemplate, runTemplate, slot } from "../../query-template.ts";

/**
 * Whether the index can answer `term`: trigrams need three characters, and a NUL would end the
 * FTS query early (the scan handles both).
 */
function indexableTerm(term: string): boolean {
  let characters = 0;
  for (const _ of term) if (++characters >= 3) break;
  return characters >= 3 && !term.includes("\0");
}

/** An FTS5 query for `term` as one phrase in `columns`: `{"name" "notes"} : "te""rm"`. */
function phraseIn(columns: readonly string[], term: string): string {
  const quote = (text: string) => `"${text.replaceAll('"', '""')}"`;
  return `{${columns.map(quote).join(" ")}} : ${quote(term)}`;
}

/** `rowid in (select rowid from "<table>__search" where … match ?)`: the candidate rows. */
function indexedRows(table: string, query: unknown): Expression<SqlBool> {
  const search = sql.table(searchTableName(table));
  return sql<SqlBool>`rowid in (select rowid from ${search} where ${search} match ${query})`;
}

const RECHECK_MS = 5000;

/**
 * The columns `table`'s search index covers, read from the database: none until a migration built
 * it. Found once, it is kept; while missing, it is looked for again every few seconds (a
 * `crudkit migrate` from another process may add it while the app runs).
 */
function searchIndexColumns(kysely: Kysely<any>, table: string): () => Promise<ReadonlySet<string>> {
  let known: ReadonlySet<string> | undefined;
  let lookedAt = 0;
  let looking: Promise<ReadonlySet<string>> | undefined;
  const none: ReadonlySet<string> = new Set();
  return async () => {
    if (known) return known;
    if (looking) return looking;
    if (Date.now() - lookedAt < RECHECK_MS) return none;
    looking = sql<{ name: string }>`select name from pragma_table_info(${searchTableName(table)})`
      .execute(kysely)
      .then(({ rows }) => {
        lookedAt = Date.now();
        if (rows.length > 0) known = new Set(rows.map((r) => r.name));
        return known ?? none;
      })
      .catch(() => none)
      .finally(() => {
        looking = undefined;
      });
    return looking;
  };
}

/** At most this many rows holding a term's trigrams: reading them all is cheap. */
const FEW = 1000;

/** How long a term's candidate count is trusted, and for how many terms at most. */
const KNOWN_FOR_MS = 2000;
const KNOWN_TERMS = 256;

/**
 * Whether the index holds at most a thousand candidate rows for an FTS5 query (`phraseIn`): then
 * any list searching it, counted or sorted, reads only those, however big the table. The answer
 * only decides which thread runs a list, never what it finds, so it is kept for a moment: a term
 * searched again (the next page, the next keystroke) is not probed again.
 */
function fewCandidates(kysely: Kysely<any>, table: string) {
  const search = sql.table(searchTableName(table));
  const compiled = sql<{ n: number }>`select count(*) as n from (select rowid from ${search}
    where ${search} match ${slot("match")} limit ${sql.lit(FEW + 1)})`.compile(kysely);
  const template: QueryTemplate = { compiled, parameters: compiled.parameters };
  const known = new Map<string, { few: boolean; at: number }>();
  return async (db: Kysely<any>, match: string): Promise<boolean> => {
    const now = Date.now();
    const seen = known.get(match);
    if (seen && now - seen.at < KNOWN_FOR_MS) return seen.few;
    const few = Number((await runTemplate<{ n: number }>(db, template, { match })).rows[0]?.n) <= FEW;
    if (known.size >= KNOWN_TERMS) known.delete(known.keys().next().value!);
    known.set(match, { few, at: now });
    return few;
  };
}

/** SQLite's FTS5 trigram table, as lists query it. */
export const fts5TextIndex: TextIndex = {
  answers: indexableTerm,
  query: phraseIn,
  rows: indexedRows,
  columns: searchIndexColumns,
  fewCandidates,
};
