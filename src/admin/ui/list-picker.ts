// A list of ids' input (`referencesMany`): the records chosen, in order, each with a button that
// takes it out, and the reference picker to add one more (her own list rule applies to what it
// offers). The chosen ones are named by the target's title field, read once for those already set.

import { html } from "htm/preact";
import { useEffect, useState } from "preact/hooks";
import type { Session } from "./main.ts";
import type { FieldModel } from "./model.ts";
import { listRows, ReferencePicker, recordLabel, titleField } from "./reference-picker.ts";
import { recordHref } from "./route.ts";
import { t } from "./strings.ts";

/** `Red (t-1)` as the name, then its id quieter: long ids are noise beside a name. */
function shown(label: string, id: string) {
  const tail = ` (${id})`;
  if (!label.endsWith(tail) || label === tail) return label;
  return html`${label.slice(0, -tail.length)}<span class="id">${tail}</span>`;
}

export function ListPicker(props: {
  session: Session;
  field: FieldModel;
  common: Record<string, unknown>;
  value: unknown;
  editable: boolean;
  onChange: (value: unknown) => void;
}) {
  const { session, field, common, editable, onChange } = props;
  const target = field.references!;
  const ids = Array.isArray(props.value) ? props.value.map(String) : [];
  const [labels, setLabels] = useState<Record<string, string>>({});
  const model = session.model.resources.get(target);

  // The names of the ids already set (those she may read; the others show as their ids).
  const unnamed = ids.filter((id) => !(id in labels)).join(",");
  useEffect(() => {
    if (!model || unnamed === "") return;
    let live = true;
    const query = new URLSearchParams({ "filter[id][in]": unnamed, limit: "100", count: "none" });
    listRows(session, model, query)
      .then((items) => {
        if (!live) return;
        const title = titleField(model);
        const named: Record<string, string> = {};
        for (const id of unnamed.split(",")) named[id] = id;
        for (const row of items) named[String(row.id)] = recordLabel(row, title);
        setLabels((known) => ({ ...known, ...named }));
      })
      .catch(() => {});
    return () => {
      live = false;
    };
  }, [unnamed, model, session]);

  const listId = `${String(common.id)}-chosen`;
  const chosen = html`<ul id=${listId} class="chosen" aria-label=${t.chosen(field.name)}>
    ${ids.length === 0 && html`<li class="none">${t.noneChosen}</li>`}
    ${ids.map(
      (id) => html`<li>
        <a href=${recordHref(target, id)}>${shown(labels[id] ?? id, id)}</a>
        ${
          editable &&
          html`<button type="button" aria-label=${t.removeChosen(labels[id] ?? id)}
            onClick=${() => onChange(ids.filter((other) => other !== id))}>×</button>`
        }
      </li>`,
    )}
  </ul>`;
  if (!editable) return chosen;
  return html`<div class="list-picker">
    ${chosen}
    <${ReferencePicker} session=${session} target=${target} common=${{ ...common, required: false }} value="" onChange=${() => {}}
      adding=${(id: string, label: string) => {
        setLabels((known) => ({ ...known, [id]: label }));
        if (!ids.includes(id)) onChange([...ids, id]);
      }} />
  </div>`;
}
