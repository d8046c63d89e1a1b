// Many rows at once: selection (keyboard and shift ranges), bulk delete and bulk update with each
// row's own outcome (its status and the API's message: 200, 403, 404, 409, 412…), CSV export of
// the current view by cursor pages (visible fields only), and CSV import that checks every row
// first and sends each with its own Idempotency-Key, so running the same file again creates
// nothing twice.

import { html } from "htm/preact";
import { useEffect, useState } from "preact/hooks";
import { ApiError, request } from "./api.ts";
import { csvLine, parseCsv } from "./csv.ts";
import type { Session } from "./main.ts";
import type { FieldModel, ResourceModel } from "./model.ts";
import { t } from "./strings.ts";

type Row = Record<string, unknown>;

export interface Outcome {
  label: string;
  status: number;
  message: string;
}

/**
 * Which rows are selected; a shift-click or shift-space sets the range from the last row toggled
 * (on this page) to the state the clicked row takes. Cleared when the view changes.
 */
export function useSelection(view: string) {
  const [selected, setSelected] = useState<ReadonlySet<string>>(new Set());
  const [anchor, setAnchor] = useState<string>();
  // biome-ignore lint/correctness/useExhaustiveDependencies: a new view (its URL) empties the selection.
  useEffect(() => {
    setSelected(new Set());
    setAnchor(undefined);
  }, [view]);
  const toggle = (ids: readonly string[], index: number, range: boolean) => {
    const next = new Set(selected);
    const on = !selected.has(ids[index]!);
    const from = range && anchor !== undefined ? ids.indexOf(anchor) : -1;
    const [low, high] = from < 0 ? [index, index] : [Math.min(from, index), Math.max(from, index)];
    for (const id of ids.slice(low, high + 1)) {
      if (on) next.add(id);
      else next.delete(id);
    }
    setSelected(next);
    setAnchor(ids[index]);
  };
  return { selected, toggle, clear: () => setSelected(new Set()) };
}

async function outcomeOf(label: string, run: () => Promise<unknown>): Promise<Outcome> {
  try {
    const answer = (await run()) as { status: number };
    return { label, status: answer.status, message: t.done };
  } catch (error) {
    if (error instanceof ApiError) return { label, status: error.status, message: error.message };
    return { label, status: 0, message: String(error) };
  }
}

export function BulkBar(props: {
  session: Session;
  model: ResourceModel;
  fields: FieldModel[];
  selected: ReadonlySet<string>;
  onDone: () => void;
}) {
  const { session, model, fields, selected, onDone } = props;
  const settable = fields.filter((f) => f.onUpdate && f.type !== "json");
  const [field, setField] = useState(settable[0]?.name ?? "");
  const [value, setValue] = useState("");
  const [outcomes, setOutcomes] = useState<Outcome[]>();
  const url = (id: string) => `${session.config.basePath}/${model.name}/${encodeURIComponent(id)}`;
  const each = async (run: (id: string) => Promise<unknown>) => {
    const results: Outcome[] = [];
    for (const id of selected) results.push(await outcomeOf(id, () => run(id)));
    setOutcomes(results);
    onDone();
  };
  const chosen = settable.find((f) => f.name === field);
  // Checked as an import's cell is: a typo is said here, never sent as null to every row.
  const checked = () =>
    chosen
      ? bodyOf([chosen.name], [value], new Map([[chosen.name, { ...chosen, required: true }]]))
      : t.missing(field);

  return html`<div class="bulk" role="group" aria-label=${t.bulk}>
    <span>${t.selectedCount(selected.size)}</span>
    <button type="button" class="danger" disabled=${selected.size === 0} onClick=${() => each((id) => request(session.credential, "DELETE", url(id)))}>${t.deleteSelected}</button>
    ${
      settable.length > 0 &&
      html`<form class="filter" onSubmit=${(e: Event) => {
        e.preventDefault();
        const body = checked();
        if (typeof body === "string") return setOutcomes([{ label: field, status: 400, message: body }]);
        void each((id) => request(session.credential, "PATCH", url(id), { body }));
      }}>
        <label for="bulk-field">${t.field}</label>
        <select id="bulk-field" value=${field} onChange=${(e: Event) => setField((e.target as HTMLSelectElement).value)}>
          ${settable.map((f) => html`<option value=${f.name}>${f.name}</option>`)}
        </select>
        <label for="bulk-value">${t.value}</label>
        <input id="bulk-value" value=${value} onInput=${(e: Event) => setValue((e.target as HTMLInputElement).value)} />
        <button type="submit" disabled=${selected.size === 0}>${t.updateSelected}</button>
      </form>`
    }
    ${outcomes && html`<${Outcomes} outcomes=${outcomes} />`}
  </div>`;
}

export function Outcomes({ outcomes }: { outcomes: Outcome[] }) {
  return html`<table class="outcomes" aria-label=${t.outcomes}>
    <thead><tr><th scope="col">${t.row}</th><th scope="col">${t.status}</th><th scope="col">${t.message}</th></tr></thead>
    <tbody>
      ${outcomes.map((o) => html`<tr class=${o.status >= 200 && o.status < 300 ? "done" : "error"}><td>${o.label}</td><td>${o.status}</td><td>${o.message}</td></tr>`)}
    </tbody>
  </table>`;
}

/** The current view (its filters and sort), every page by cursor, as a CSV download. */
export function ExportCsv({
  session,
  model,
  fields,
  query,
}: {
  session: Session;
  model: ResourceModel;
  fields: FieldModel[];
  query: URLSearchParams;
}) {
  const [progress, setProgress] = useState<string>();
  const run = async () => {
    const chunks = [csvLine(fields.map((f) => f.name))];
    const page = new URLSearchParams(query);
    page.delete("cursor");
    page.set("limit", "100");
    page.set("count", "none");
    let rows = 0;
    for (;;) {
      const answer = await request<{ items: Row[]; pagination: { nextCursor: string | null } }>(
        session.credential,
        "GET",
        `${session.config.basePath}/${model.plural}?${page}`,
      );
      for (const item of answer.body.items) chunks.push(csvLine(fields.map((f) => item[f.name])));
      rows += answer.body.items.length;
      setProgress(t.exported(rows));
      if (!answer.body.pagination.nextCursor) break;
      page.set("cursor", answer.body.pagination.nextCursor);
    }
    const link = document.createElement("a");
    link.href = URL.createObjectURL(new Blob(chunks, { type: "text/csv" }));
    link.download = `${model.plural}.csv`;
    link.click();
    setTimeout(() => URL.revokeObjectURL(link.href), 10_000);
  };
  return html`<span class="export"><button type="button" onClick=${() => run().catch((e) => setProgress(String(e)))}>${t.exportCsv}</button>
    ${progress && html`<span role="status">${progress}</span>`}</span>`;
}

/** A CSV file of new records: every row checked first, then each created once, whatever the reruns. */
export function ImportCsv({
  session,
  model,
  onDone,
}: {
  session: Session;
  model: ResourceModel;
  onDone: () => void;
}) {
  const [outcomes, setOutcomes] = useState<Outcome[]>();
  const creatable = new Map(model.fields.filter((f) => f.onCreate).map((f) => [f.name, f]));
  const run = async (file: File) => {
    // A spreadsheet's UTF-8 export starts with a byte order mark: not part of the first name.
    const [header = [], ...lines] = parseCsv((await file.text()).replace(/^\uFEFF/, ""));
    const unknown = header.filter((name) => !creatable.has(name));
    if (unknown.length > 0)
      return setOutcomes([{ label: t.header, status: 400, message: t.unknownColumns(unknown.join(", ")) }]);
    const bodies = lines.map((cells) => bodyOf(header, cells, creatable));
    const invalid = bodies.flatMap((b, i) =>
      typeof b === "string" ? [{ label: t.rowNumber(i + 2), status: 400, message: b }] : [],
    );
    // Nothing is sent while any row is wrong: she fixes the file and runs it again.
    if (invalid.length > 0) return setOutcomes(invalid);
    const results: Outcome[] = [];
    const seen = new Map<string, number>();
    for (const [i, body] of bodies.entries()) {
      const line = JSON.stringify(lines[i]);
      const repeat = seen.get(line) ?? 0;
      seen.set(line, repeat + 1);
      const key = await idempotencyKey(model.name, header, lines[i]!, repeat);
      results.push(
        await outcomeOf(t.rowNumber(i + 2), () =>
          request(session.credential, "POST", `${session.config.basePath}/${model.name}`, {
            body,
            headers: { "idempotency-key": key },
          }),
        ),
      );
    }
    setOutcomes(results);
    onDone();
  };
  return html`<div class="import">
    <label for="import-file">${t.importCsv}</label>
    <input id="import-file" type="file" accept=".csv,text/csv" onChange=${(e: Event) => {
      const input = e.target as HTMLInputElement;
      const file = input.files?.[0];
      // Emptied, so choosing the same file again (after fixing it) is a change too.
      input.value = "";
      if (file) void run(file);
    }} />
    ${outcomes && html`<${Outcomes} outcomes=${outcomes} />`}
  </div>`;
}

/** A row's body, typed by its fields, or what is wrong with it. */
function bodyOf(header: string[], cells: string[], fields: Map<string, FieldModel>): Row | string {
  const body: Row = {};
  for (const [i, name] of header.entries()) {
    const text = cells[i] ?? "";
    const field = fields.get(name)!;
    if (text === "") {
      if (field.required) return t.missing(name);
      continue;
    }
    if (field.type === "number" || field.type === "integer") {
      const n = Number(text);
      if (!Number.isFinite(n) || (field.type === "integer" && !Number.isInteger(n)))
        return t.notANumber(name);
      body[name] = n;
    } else if (field.type === "boolean") {
      if (text !== "true" && text !== "false") return t.notABoolean(name);
      body[name] = text === "true";
    } else if (field.type === "enum" && !field.enumValues!.includes(text))
      return t.notOneOf(name, field.enumValues!.join(", "));
    else if (field.type === "json") {
      const parsed = safeJson(text);
      if (parsed === NOT_JSON) return t.notJson(name);
      body[name] = parsed;
    } else body[name] = text;
  }
  for (const field of fields.values())
    if (field.required && !(field.name in body)) return t.missing(field.name);
  return body;
}

const NOT_JSON = Symbol("not JSON");

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return NOT_JSON;
  }
}

/**
 * A row's key is its content (resource, header, cells) and which repeat of that same row in the
 * file it is: run the file again, fixed or renamed, and a row sent before is answered, not made
 * again; two identical rows are still two records.
 */
async function idempotencyKey(
  resource: string,
  header: string[],
  cells: string[],
  repeat: number,
): Promise<string> {
  const bytes = new TextEncoder().encode(JSON.stringify([resource, header, cells, repeat]));
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return `admin-import-${[...digest.slice(0, 16)].map((b) => b.toString(16).padStart(2, "0")).join("")}`;
}
