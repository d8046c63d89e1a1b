// A resource's list: an ARIA grid of the fields the caller may read, sorted by a column header,
// searched, filtered with the API's operators per field type, paged by cursors with an estimated
// count (no count(*) over a big table, no OFFSET). Its whole state is the API query in the URL.

import { html } from "htm/preact";
import { useEffect, useState } from "preact/hooks";
import { ApiError, request } from "./api.ts";
import { BulkBar, ExportCsv, ImportCsv, useSelection } from "./bulk.ts";
import { useGridKeys } from "./grid-keys.ts";
import { useLive } from "./live.ts";
import type { Session } from "./main.ts";
import { type FieldModel, operatorsFor, type ResourceModel } from "./model.ts";
import { listHref, recordHref, useFocusedHeading } from "./route.ts";
import { rowCount } from "./row-count.ts";
import { ShowRequest } from "./show-request.ts";
import { locale, t } from "./strings.ts";

type Row = Record<string, unknown>;

interface Page {
  items: Row[];
  pagination: { total: number | null; nextCursor: string | null; prevCursor: string | null };
}

/** Live rows: new ones counted (the page does not shift under her), changed ones updated in place. */
function useLiveRows(model: ResourceModel, query: URLSearchParams, session: Session) {
  const [fresh, setFresh] = useState(0);
  // By id in a Map: an id is data ("__proto__" too), never an object's key.
  const [changed, setChanged] = useState<ReadonlyMap<string, Row | null>>(new Map());
  const [reloads, setReloads] = useState(0);
  const streamQuery = new URLSearchParams([...query].filter(([key]) => FILTER.test(key)));
  useLive(
    model.events && !query.has("search") ? `${model.events}?${streamQuery}` : undefined,
    session.credential,
    (name, event) => {
      const id = String(event.record?.id ?? "");
      if (name === "create") setFresh((n) => n + 1);
      else if (name === "update" && event.record) setChanged((c) => new Map(c).set(id, event.record!));
      else if (name === "delete") setChanged((c) => new Map(c).set(id, null));
      else if (name === "reset") setReloads((n) => n + 1);
    },
  );
  return {
    fresh,
    changed,
    reloads,
    reload: () => setReloads((n) => n + 1),
    clear: () => {
      setFresh(0);
      setChanged(new Map());
    },
  };
}

/** Display of one cell: short, and text only (never markup from the data). */
export function cellText(value: unknown): string {
  if (value === null || value === undefined) return "";
  if (typeof value === "boolean") return value ? t.yes : t.no;
  const text = typeof value === "object" ? JSON.stringify(value) : String(value);
  return text.length > 80 ? `${text.slice(0, 79)}…` : text;
}

/**
 * A date-time value as a local date and time, its instant kept in the markup; any other value as a
 * cell shows it. `short` (a list's cell): to the minute, the full local time in its title.
 */
export function dateText(value: unknown, short = false) {
  if (typeof value !== "string" || Number.isNaN(Date.parse(value))) return cellText(value);
  const date = new Date(value);
  return short
    ? html`<time datetime=${value} title=${date.toLocaleString(locale)}>${date.toLocaleString(locale, SHORT)}</time>`
    : html`<time datetime=${value}>${date.toLocaleString(locale)}</time>`;
}

const SHORT: Intl.DateTimeFormatOptions = { dateStyle: "short", timeStyle: "short" };

const COLUMNS = "_columns";

/** The columns she chose (`_columns` in the URL, the admin's own: not sent to the API); the id always. */
function columnsOf(fields: FieldModel[], query: URLSearchParams): FieldModel[] {
  const chosen = query.get(COLUMNS)?.split(",");
  return chosen ? fields.filter((f) => f.name === "id" || chosen.includes(f.name)) : fields;
}

/** Which fields the grid shows: a checkbox each (the id always, it opens the record). */
function ColumnChooser({
  fields,
  shown,
  onChange,
}: {
  fields: FieldModel[];
  shown: FieldModel[];
  onChange: (names: string[]) => void;
}) {
  const on = new Set(shown.map((f) => f.name));
  return html`<details class="columns">
    <summary>${t.columns}</summary>
    <fieldset>
      <legend class="visually-hidden">${t.columns}</legend>
      ${fields.map(
        (f) => html`<label><input type="checkbox" checked=${on.has(f.name)} disabled=${f.name === "id"}
          onChange=${() => onChange(fields.filter((g) => (g.name === f.name ? !on.has(g.name) : on.has(g.name))).map((g) => g.name))} /> ${f.name}</label>`,
      )}
    </fieldset>
  </details>`;
}

/** Marks a row deleted meanwhile: it stays in place, struck through. */
const GONE = Symbol("gone");

const FILTER = /^filter\[([^\]]+)\](?:\[([^\]]+)\])?$/;

export function ListView({
  session,
  resource,
  query,
}: {
  session: Session;
  resource: string;
  query: URLSearchParams;
}) {
  const model = session.model.resources.get(resource)!;
  const access = session.access.get(resource)!;
  const hidden = new Set(access.hiddenFields);
  const fields = model.fields.filter((f) => !hidden.has(f.name));
  const columns = columnsOf(fields, query);
  const [page, setPage] = useState<Page>();
  const [failure, setFailure] = useState<string>();
  const apiQuery = new URLSearchParams(query);
  apiQuery.delete(COLUMNS);
  apiQuery.set("count", "estimated");
  if (!apiQuery.has("limit")) apiQuery.set("limit", "20");
  const url = `${session.config.basePath}/${model.plural}?${apiQuery}`;

  const { fresh, changed, reloads, reload, clear } = useLiveRows(model, query, session);
  const selection = useSelection(url);
  const heading = useFocusedHeading();

  // biome-ignore lint/correctness/useExhaustiveDependencies: reloads asks for the same URL again.
  useEffect(() => {
    let live = true;
    setFailure(undefined);
    clear();
    request<Page>(session.credential, "GET", url)
      .then((answer) => live && setPage(answer.body))
      .catch((error) => live && setFailure(error instanceof ApiError ? error.message : String(error)));
    return () => {
      live = false;
    };
  }, [url, session.credential, reloads]);

  const go = (change: (q: URLSearchParams) => void) => {
    const next = new URLSearchParams(query);
    next.delete("cursor");
    change(next);
    location.hash = listHref(resource, next);
  };
  const sortBy = query.get("sortBy") ?? "createdAt";
  const sortOrder = query.get("sortOrder") ?? "desc";
  const filters = [...query.entries()].flatMap(([key, value]) => {
    const m = FILTER.exec(key);
    return m ? [{ key, field: m[1]!, op: m[2] ?? "eq", value }] : [];
  });

  return html`
    <section aria-labelledby="list-title">
      <div class="bar">
        <h2 id="list-title" tabindex="-1" ref=${heading}>${model.plural}</h2>
        ${
          access.create.allowed
            ? html`<a class="button" href=${recordHref(resource, "")}>${t.newRecord(resource)}</a>`
            : html`<button type="button" disabled aria-describedby="create-why">${t.newRecord(resource)}</button>
                <span id="create-why" class="why">${access.create.reason}</span>`
        }
      </div>
      <div class="tools">
        ${model.searchable && html`<${SearchBox} key=${query.get("search") ?? ""} value=${query.get("search") ?? ""} onSearch=${(v: string) => go((q) => (v ? q.set("search", v) : q.delete("search")))} />`}
        <${FilterForm} fields=${fields} onAdd=${(key: string, value: string) => go((q) => q.set(key, value))} />
        ${
          model.sortable.includes(sortBy) &&
          html`<${JumpTo} field=${fields.find((f) => f.name === sortBy)} order=${sortOrder}
            onJump=${(value: string) => go((q) => q.set(`filter[${sortBy}][${sortOrder === "asc" ? "gte" : "lte"}]`, value))} />`
        }
      </div>
      ${
        filters.length > 0 &&
        html`<ul class="chips" aria-label=${t.filters}>
          ${filters.map(
            (f) => html`<li>
              <span>${f.field} ${f.op} ${f.value}</span>
              <button type="button" aria-label=${t.removeFilter(`${f.field} ${f.op} ${f.value}`)} onClick=${() => go((q) => q.delete(f.key))}>×</button>
            </li>`,
          )}
        </ul>`
      }
      <div class="tools">
        <${ColumnChooser} fields=${fields} shown=${columns} onChange=${(names: string[]) => go((q) => (names.length === fields.length ? q.delete(COLUMNS) : q.set(COLUMNS, names.join(","))))} />
        <${ExportCsv} session=${session} model=${model} fields=${columns} query=${apiQuery} />
        ${access.create.allowed && html`<${ImportCsv} session=${session} model=${model} onDone=${reload} />`}
      </div>
      ${selection.selected.size > 0 && html`<${BulkBar} session=${session} model=${model} fields=${fields} selected=${selection.selected} onDone=${reload} />`}
      ${failure && html`<p role="alert" class="error">${failure}</p>`}
      ${!page && !failure && html`<p role="status">${t.loading}</p>`}
      ${
        fresh > 0 &&
        html`<p role="status"><button type="button" onClick=${() => {
          if (query.has("cursor")) go(() => {});
          else reload();
        }}>${t.newRows(fresh)}</button></p>`
      }
      ${
        page &&
        html`<${Grid} selection=${selection} resource=${resource} fields=${columns} rows=${page.items.map((row) => (changed.has(String(row.id)) ? (changed.get(String(row.id)) ?? { ...row, [GONE]: true }) : row))} sortable=${model.sortable} sortBy=${sortBy} sortOrder=${sortOrder} onSort=${(
          field: string,
        ) =>
          go((q) => {
            q.set("sortBy", field);
            q.set("sortOrder", sortBy === field && sortOrder === "asc" ? "desc" : "asc");
          })} />`
      }
      ${
        page &&
        html`<div class="pager">
          <span role="status">${page.pagination.total === null ? "" : rowCount(page.pagination.total)}</span>
          <button type="button" disabled=${!page.pagination.prevCursor} onClick=${() => go((q) => q.set("cursor", page.pagination.prevCursor!))}>${t.previous}</button>
          <button type="button" disabled=${!page.pagination.nextCursor} onClick=${() => go((q) => q.set("cursor", page.pagination.nextCursor!))}>${t.next}</button>
        </div>`
      }
      <${ShowRequest} method="GET" url=${url} call=${`client.${resource}.list(${JSON.stringify(listCallOptions(apiQuery))})`} />
    </section>
  `;
}

function Grid(props: {
  resource: string;
  fields: FieldModel[];
  rows: Row[];
  sortable: string[];
  sortBy: string;
  sortOrder: string;
  onSort: (field: string) => void;
  selection: ReturnType<typeof useSelection>;
}) {
  const { resource, fields, rows, sortable, sortBy, sortOrder, onSort, selection } = props;
  const ids = rows.map((row) => String(row.id));
  const table = useGridKeys();
  // Space toggles a row's box; shift with it (or a shift-click) selects the range from the last one.
  const pick = (index: number) => (event: MouseEvent | KeyboardEvent) => {
    if (event instanceof KeyboardEvent && event.key !== " ") return;
    event.preventDefault();
    selection.toggle(ids, index, event.shiftKey);
  };
  if (rows.length === 0) return html`<p>${t.noRows}</p>`;
  const sortState = (name: string) =>
    name === sortBy ? (sortOrder === "asc" ? "ascending" : "descending") : "none";
  return html`
    <div class="grid-wrap">
      <table role="grid" ref=${table} aria-labelledby="list-title" aria-rowcount=${rows.length + 1}>
        <thead>
          <tr>
            <th scope="col"><span class="visually-hidden">${t.bulk}</span></th>
            ${fields.map(
              (
                f,
              ) => html`<th scope="col" aria-sort=${sortable.includes(f.name) ? sortState(f.name) : undefined}>
                ${sortable.includes(f.name) ? html`<button type="button" title=${t.sortBy(f.name)} onClick=${() => onSort(f.name)}>${f.name}</button>` : f.name}
              </th>`,
            )}
          </tr>
        </thead>
        <tbody>
          ${rows.map(
            (
              row,
              index,
            ) => html`<tr class=${GONE in row ? "gone" : undefined} aria-selected=${selection.selected.has(String(row.id))}>
              <td><input type="checkbox" aria-label=${t.select(String(row.id))} checked=${selection.selected.has(String(row.id))}
                onClick=${pick(index)} onKeyDown=${pick(index)} /></td>
              ${fields.map((f, i) =>
                i === 0
                  ? html`<td><a href=${recordHref(resource, String(row.id))} aria-label=${t.open(String(row.id))}>${cellText(row[f.name])}</a></td>`
                  : f.references && typeof row[f.name] === "string"
                    ? html`<td><a href=${recordHref(f.references, String(row[f.name]))}>${cellText(row[f.name])}</a></td>`
                    : html`<td>${f.type === "date" ? dateText(row[f.name], true) : cellText(row[f.name])}</td>`,
              )}
            </tr>`,
          )}
        </tbody>
      </table>
    </div>
  `;
}

function SearchBox({ value, onSearch }: { value: string; onSearch: (v: string) => void }) {
  const [text, setText] = useState(value);
  return html`<form role="search" onSubmit=${(e: Event) => {
    e.preventDefault();
    onSearch(text.trim());
  }}>
    <label for="list-search">${t.search}</label>
    <input id="list-search" type="search" maxlength="200" value=${text} onInput=${(e: Event) => setText((e.target as HTMLInputElement).value)} />
  </form>`;
}

function FilterForm({
  fields,
  onAdd,
}: {
  fields: FieldModel[];
  onAdd: (key: string, value: string) => void;
}) {
  const [name, setName] = useState(fields[0]?.name ?? "");
  const field = fields.find((f) => f.name === name) ?? fields[0];
  const operators = field ? operatorsFor(field.type) : [];
  const [op, setOp] = useState(operators[0] ?? "eq");
  const [value, setValue] = useState("");
  if (!field) return null;
  const chosen = operators.includes(op) ? op : operators[0]!;
  const submit = (event: Event) => {
    event.preventDefault();
    onAdd(`filter[${field.name}][${chosen}]`, chosen === "isNull" ? value || "true" : value);
    setValue("");
  };
  return html`<form class="filter" aria-label=${t.filters} onSubmit=${submit}>
    <label for="filter-field">${t.field}</label>
    <select id="filter-field" value=${field.name} onChange=${(e: Event) => setName((e.target as HTMLSelectElement).value)}>
      ${fields.map((f) => html`<option value=${f.name}>${f.name}</option>`)}
    </select>
    <label for="filter-op">${t.operator}</label>
    <select id="filter-op" value=${chosen} onChange=${(e: Event) => setOp((e.target as HTMLSelectElement).value)}>
      ${operators.map((o) => html`<option value=${o}>${o}</option>`)}
    </select>
    <label for="filter-value">${t.value}</label>
    <input id="filter-value" value=${value} required=${chosen !== "isNull"} onInput=${(e: Event) => setValue((e.target as HTMLInputElement).value)} />
    <button type="submit">${t.addFilter}</button>
  </form>`;
}

function JumpTo({
  field,
  order,
  onJump,
}: {
  field?: FieldModel;
  order: string;
  onJump: (v: string) => void;
}) {
  const [value, setValue] = useState("");
  if (!field) return null;
  const type = field.type === "number" || field.type === "integer" ? "number" : "text";
  return html`<form class="jump" onSubmit=${(e: Event) => {
    e.preventDefault();
    if (value) onJump(value);
  }}>
    <label for="jump-value">${t.jumpTo} (${field.name} ${order === "asc" ? "≥" : "≤"})</label>
    <input id="jump-value" type=${type} step="any" value=${value} onInput=${(e: Event) => setValue((e.target as HTMLInputElement).value)} />
    <button type="submit">${t.jump}</button>
  </form>`;
}

/** The typed client's options for an API list query: filters as a `where` object. */
function listCallOptions(query: URLSearchParams): Record<string, unknown> {
  // Keys come from the URL: objects without a prototype, so `__proto__` is only a name.
  const options: Record<string, unknown> = Object.create(null);
  const where: Record<string, Record<string, string>> = Object.create(null);
  for (const [key, value] of query) {
    const m = FILTER.exec(key);
    if (m) where[m[1]!] = Object.assign(where[m[1]!] ?? Object.create(null), { [m[2] ?? "eq"]: value });
    else options[key] = key === "limit" ? Number(value) : value;
  }
  if (Object.keys(where).length > 0) options.where = where;
  return options;
}
