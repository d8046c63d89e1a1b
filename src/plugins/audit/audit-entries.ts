// What readers of entries read (GET /audit/logs, the history routes). On PostgreSQL, with the chain
// sealed after commit, an entry waits in the queue until it is sealed (audit-seal-function.ts), so
// they read the log and the queue together: an entry shows from its write's commit, on a replica
// that holds the write too, inside the write's own transaction, and while sealing fails. Filters,
// order and keyset conditions apply to both (PostgreSQL pushes them into each branch).

import type { Kysely, SelectQueryBuilder } from "kysely";
import { AUDIT_PENDING, ENTRY_COLUMNS } from "./audit-seal-function.ts";
import { AUDIT_LOGS } from "./audit-table.ts";

/** The entries to read from, named `audit_logs` either way. */
export type EntrySource = (db: Kysely<any>) => SelectQueryBuilder<any, any, object>;

export const logOnly: EntrySource = (db) => db.selectFrom(AUDIT_LOGS);

export const logAndQueue: EntrySource = (db) =>
  db.selectFrom(
    db
      .selectFrom(AUDIT_LOGS)
      .select(ENTRY_COLUMNS)
      .unionAll(db.selectFrom(AUDIT_PENDING).select(ENTRY_COLUMNS))
      .as(AUDIT_LOGS),
  );
