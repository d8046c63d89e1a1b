// A plugin written only on crudkit-api/plugin-kit, as one outside this package would be: notes on
// any record. It owns a table, adds two endpoints (a write through the write pipeline, a filtered
// and paged list), and a hook that removes a record's notes in the delete's own transaction.
// test/kit-plugin.test.ts runs it on the three databases.

import {
  APIError,
  admitPluginRows,
  type CrudkitPlugin,
  compileWhere,
  dateFromColumn,
  dateToColumn,
  defineEndpoint,
  hookContextOf,
  newestFirstPage,
  PAGE_QUERY,
  type PluginContext,
  type PluginRowRule,
  pageOf,
  parseListQuery,
  runWrite,
  type TableDefinition,
  tableFilterFields,
  type User,
} from "crudkit-api/plugin-kit";
import { z } from "zod";

export interface Note {
  id: string;
  resource: string;
  recordId: string;
  text: string;
  author: string | null;
  createdAt: string;
}

const NOTES = "test_notes";
const table: TableDefinition = {
  name: NOTES,
  columns: {
    id: { type: "text", primaryKey: true, notNull: true },
    resource: { type: "text", notNull: true },
    record_id: { type: "text", notNull: true },
    text: { type: "text", notNull: true },
    author: { type: "text" },
    created_at: { type: "date", notNull: true },
  },
  indexes: [{ name: `${NOTES}_record_idx`, columns: ["resource", "record_id"] }],
};
const fields = tableFilterFields([
  ["resource", "string", "resource"],
  ["recordId", "string", "record_id"],
  ["author", "string", "author"],
  ["createdAt", "date", "created_at"],
]);
const toNote = (row: Record<string, unknown>): Note => ({
  id: String(row.id),
  resource: String(row.resource),
  recordId: String(row.record_id),
  text: String(row.text),
  author: row.author == null ? null : String(row.author),
  createdAt: dateFromColumn(row.created_at),
});

/** Who may read which notes: true, false, or a Where over notes (`{ author: user.id }`). */
export type NotesRule = PluginRowRule<{ user: User | null; headers: Headers }, Note>;

export function notes(options: { read: NotesRule }): CrudkitPlugin {
  let app: PluginContext | undefined;
  let next = 0;
  const ready = () =>
    app ??
    (() => {
      throw new Error("notes(): not ready");
    })();
  const addNote = defineEndpoint({
    method: "POST",
    path: "/notes",
    status: 201,
    doc: { summary: "Note a record", tags: ["notes"] },
    body: z.object({
      resource: z.string().max(100),
      recordId: z.string().max(255),
      text: z.string().max(2000),
    }),
    async handler(ctx) {
      const { resource, recordId, text } = ctx.input.body;
      // A note needs the record to be readable by its author: nobody notes what she cannot see.
      if (!(await ready().canReadRecord(resource, recordId, ctx)))
        throw new APIError("NOT_FOUND", `No ${resource} with id "${recordId}".`);
      const user = await ctx.getUser();
      const note: Note = {
        id: `note-${Date.now()}-${next++}`,
        resource,
        recordId,
        text,
        author: user?.id ?? null,
        createdAt: new Date().toISOString(),
      };
      // Through the write pipeline: every plugin's after-create hooks hear of it in its transaction.
      await runWrite(ctx.db, true, async (write) => {
        await write.db
          .insertInto(NOTES)
          .values({
            id: note.id,
            resource,
            record_id: recordId,
            text,
            author: note.author,
            created_at: dateToColumn(note.createdAt, ready().profile),
          })
          .execute();
        await write.changed(ready(), hookContextOf(ctx, "note", "create", user), { record: note });
      });
      return note;
    },
  });
  const listNotes = defineEndpoint({
    method: "GET",
    path: "/notes",
    doc: {
      summary: "Notes, newest first",
      tags: ["notes"],
      query: PAGE_QUERY,
      response: pageOf({ type: "object" }),
    },
    async handler(ctx) {
      const { scope } = await admitPluginRows(options.read, ctx, {
        plugin: "notes",
        subject: "notes",
        operation: "read",
        fields,
        profile: ready().profile,
      });
      // The list query every list reads: page, limit, count and filter[…] (or app.api's where).
      const rules = { resource: "notes", sortable: new Set<string>(), searchable: [], filterable: fields };
      const list = parseListQuery(ctx.query, { ...rules, ...ready().listLimits }, [], ctx.where);
      let query = ctx.db.selectFrom(NOTES);
      if (scope) query = query.where(scope);
      if (list.where) query = query.where(compileWhere(list.where, fields, ready().profile).expression());
      return newestFirstPage(query, "created_at", list, toNote);
    },
  });
  return {
    id: "notes",
    tables: [table],
    init(context) {
      app = context;
    },
    endpoints: [addNote, listNotes],
    hooks: {
      // In the delete's transaction: a record's notes go with it, or neither does.
      async afterDelete(ctx) {
        await ctx.db
          .deleteFrom(NOTES)
          .where("resource", "=", ctx.resource)
          .where("record_id", "=", String(ctx.id))
          .execute();
      },
    },
  };
}
