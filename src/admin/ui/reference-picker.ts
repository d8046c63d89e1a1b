// A reference's input: a combobox that searches the target's list on the server as she types
// (her own list rule applies: only rows she may list are offered), ten at a time, by keyboard or
// pointer. The value is the chosen record's id; the target's title field names it.

import { html } from "htm/preact";
import { useEffect, useState } from "preact/hooks";
import { request } from "./api.ts";
import type { Session } from "./main.ts";
import type { ResourceModel } from "./model.ts";
import { t } from "./strings.ts";

type Row = Record<string, unknown>;

/** The field that names a record of `model`: name, title or label, else its first text field. */
export function titleField(model: ResourceModel | undefined): string | undefined {
  if (!model) return undefined;
  const text = model.fields.filter((f) => f.type === "string" && f.name !== "id" && !f.references && !f.file);
  return (text.find((f) => ["name", "title", "label"].includes(f.name)) ?? text[0])?.name;
}

/** A page of `model`'s list, as the signed-in user may list it. */
export async function listRows(
  session: Session,
  model: ResourceModel,
  query: URLSearchParams,
): Promise<Row[]> {
  const path = `${session.config.basePath}/${model.plural}?${query}`;
  return (await request<{ items: Row[] }>(session.credential, "GET", path)).body.items;
}

/** How a record is named in a picker: `Red (t-1)`, or its id. */
export function recordLabel(row: Row, title: string | undefined): string {
  return title && row[title] ? `${String(row[title])} (${String(row.id)})` : String(row.id);
}

export function ReferencePicker(props: {
  session: Session;
  target: string;
  common: Record<string, unknown>;
  value: unknown;
  onChange: (value: unknown) => void;
  /** Adds each record chosen to a list (`onChange` gets its id, `label` its name) and starts over. */
  adding?: (id: string, label: string) => void;
}) {
  const { session, target, common, value, onChange, adding } = props;
  const model = session.model.resources.get(target);
  const title = titleField(model);
  const [text, setText] = useState(typeof value === "string" ? value : "");
  const [options, setOptions] = useState<Row[]>([]);
  const [open, setOpen] = useState(false);
  const [active, setActive] = useState(0);
  const listId = `${String(common.id)}-options`;

  useEffect(() => {
    if (!open || !model) return;
    let live = true;
    const query = new URLSearchParams({ limit: "10", count: "none" });
    if (text) {
      if (model.searchable) query.set("search", text);
      else query.set("filter[id][startsWith]", text);
    }
    const timer = setTimeout(() => {
      listRows(session, model, query)
        .then((items) => {
          if (!live) return;
          setOptions(items);
          setActive(0);
        })
        .catch(() => live && setOptions([]));
    }, 120);
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [text, open, model, session]);

  const label = (row: Row) => recordLabel(row, title);
  const choose = (row: Row) => {
    setOpen(false);
    if (adding) {
      setText("");
      adding(String(row.id), label(row));
      return;
    }
    setText(String(row.id));
    onChange(String(row.id));
  };
  const keys = (event: KeyboardEvent) => {
    if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      event.preventDefault();
      setOpen(true);
      const step = event.key === "ArrowDown" ? 1 : -1;
      setActive((i) => (options.length === 0 ? 0 : (i + step + options.length) % options.length));
    } else if (event.key === "Enter" && open && options[active]) {
      event.preventDefault();
      choose(options[active]!);
    } else if (event.key === "Escape") setOpen(false);
  };
  return html`<div class="picker">
    <input
      ...${common}
      role="combobox"
      aria-autocomplete="list"
      aria-expanded=${open && options.length > 0}
      aria-controls=${listId}
      aria-activedescendant=${open && options[active] ? `${listId}-${active}` : undefined}
      autocomplete="off"
      placeholder=${t.searchTarget(target)}
      value=${text}
      onFocus=${() => setOpen(true)}
      onBlur=${() => setTimeout(() => setOpen(false), 150)}
      onKeyDown=${keys}
      onInput=${(e: Event) => {
        setText((e.target as HTMLInputElement).value);
        setOpen(true);
      }}
    />
    ${
      open &&
      options.length > 0 &&
      html`<ul role="listbox" id=${listId} aria-label=${t.searchTarget(target)}>
        ${options.map(
          (row, i) => html`<li
            role="option"
            id=${`${listId}-${i}`}
            aria-selected=${i === active}
            onMouseDown=${(e: Event) => {
              e.preventDefault();
              choose(row);
            }}
          >${label(row)}</li>`,
        )}
      </ul>`
    }
  </div>`;
}
