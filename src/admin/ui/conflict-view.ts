// A save refused with 412 (or a change announced live): someone changed the record since the form
// was opened. Field by field, what it was, what they made it, and what she typed; she takes theirs
// (one field or all) or keeps hers, and nothing is lost: the form then stands on their version,
// so the next save sends its ETag.

import { html } from "htm/preact";
import { useEffect, useRef } from "preact/hooks";
import { cellText, dateText } from "./list-view.ts";
import type { FieldModel } from "./model.ts";
import { t } from "./strings.ts";

type Row = Record<string, unknown>;

const same = (a: unknown, b: unknown) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);

export function ConflictView(props: {
  fields: FieldModel[];
  original: Row;
  theirs: Row;
  mine: Row;
  onTakeTheirs: (field?: string) => void;
  onKeepMine: () => void;
}) {
  const { fields, original, theirs, mine, onTakeTheirs, onKeepMine } = props;
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), []);
  const differing = fields.filter((f) => f.name in mine || !same(original[f.name], theirs[f.name]));
  // Its heading takes the focus when it appears, so a screen reader starts reading there.
  return html`<section class="conflict" aria-labelledby="conflict-title">
    <h3 id="conflict-title" tabindex="-1" ref=${heading}>${t.conflictTitle}</h3>
    <table>
      <caption>${t.conflictIntro}</caption>
      <thead><tr><th scope="col">${t.field}</th><th scope="col">${t.original}</th><th scope="col">${t.theirs}</th><th scope="col">${t.mine}</th><th scope="col"><span class="visually-hidden">${t.choice}</span></th></tr></thead>
      <tbody>
        ${differing.map((f) => {
          // Dates in full, as the form shows them: seconds matter when telling versions apart.
          const text = f.type === "date" ? dateText : cellText;
          return html`<tr>
            <th scope="row">${f.name}</th>
            <td>${text(original[f.name])}</td>
            <td>${text(theirs[f.name])}</td>
            <td>${f.name in mine ? text(mine[f.name]) : "—"}</td>
            <td>${f.name in mine && html`<button type="button" aria-label=${t.takeTheirsOf(f.name)} onClick=${() => onTakeTheirs(f.name)}>${t.takeTheirs}</button>`}</td>
          </tr>`;
        })}
      </tbody>
    </table>
    <div class="actions">
      <button type="button" onClick=${() => onTakeTheirs()}>${t.takeAllTheirs}</button>
      <button type="button" onClick=${onKeepMine}>${t.keepMine}</button>
    </div>
  </section>`;
}
