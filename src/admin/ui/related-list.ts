// A record's reverse relations as paged sub-lists: the reviews of a product, ten at a time by
// cursor, each linking to its record. Shown only for resources she may list; her rules decide
// which rows.

import { html } from "htm/preact";
import { useEffect, useState } from "preact/hooks";
import { request } from "./api.ts";
import { cellText, dateText } from "./list-view.ts";
import type { Session } from "./main.ts";
import type { ReverseRelation } from "./model.ts";
import { recordHref } from "./route.ts";
import { t } from "./strings.ts";

type Row = Record<string, unknown>;

interface Page {
  items: Row[];
  pagination: { nextCursor: string | null; prevCursor: string | null };
}

export function RelatedLists({ session, resource, id }: { session: Session; resource: string; id: string }) {
  const relations = session.model.resources.get(resource)?.reverse ?? [];
  const shown = relations.filter(
    (r) => session.access.get(r.resource)?.list.allowed && session.model.resources.has(r.resource),
  );
  return html`${shown.map((relation) => html`<${RelatedList} key=${relation.name} session=${session} relation=${relation} id=${id} />`)}`;
}

function RelatedList({ session, relation, id }: { session: Session; relation: ReverseRelation; id: string }) {
  const model = session.model.resources.get(relation.resource)!;
  const hidden = new Set(session.access.get(relation.resource)?.hiddenFields ?? []);
  const columns = model.fields.filter((f) => !hidden.has(f.name) && f.name !== relation.field).slice(0, 4);
  const [cursor, setCursor] = useState<string>();
  const [page, setPage] = useState<Page>();
  useEffect(() => {
    let live = true;
    const filter = relation.list ? `filter[${relation.field}][has]` : `filter[${relation.field}]`;
    const query = new URLSearchParams({ [filter]: id, limit: "10", count: "none" });
    if (cursor) query.set("cursor", cursor);
    request<Page>(session.credential, "GET", `${session.config.basePath}/${model.plural}?${query}`)
      .then((answer) => live && setPage(answer.body))
      .catch(() => live && setPage({ items: [], pagination: { nextCursor: null, prevCursor: null } }));
    return () => {
      live = false;
    };
  }, [cursor, id, relation.field, relation.list, model.plural, session]);
  const titleId = `related-${relation.name}`;
  return html`<section class="related" aria-labelledby=${titleId}>
    <h3 id=${titleId}>${t.related(relation.name)}</h3>
    ${
      page &&
      (page.items.length === 0
        ? html`<p>${t.noRows}</p>`
        : html`<table aria-labelledby=${titleId}>
            <thead><tr>${columns.map((c) => html`<th scope="col">${c.name}</th>`)}</tr></thead>
            <tbody>
              ${page.items.map(
                (row) =>
                  html`<tr>${columns.map((c, i) =>
                    i === 0
                      ? html`<td><a href=${recordHref(relation.resource, String(row.id))}>${cellText(row[c.name])}</a></td>`
                      : html`<td>${c.type === "date" ? dateText(row[c.name], true) : cellText(row[c.name])}</td>`,
                  )}</tr>`,
              )}
            </tbody>
          </table>`)
    }
    ${
      page &&
      (page.pagination.prevCursor || page.pagination.nextCursor) &&
      html`<div class="pager">
        <button type="button" disabled=${!page.pagination.prevCursor} onClick=${() => setCursor(page.pagination.prevCursor!)}>${t.previous}</button>
        <button type="button" disabled=${!page.pagination.nextCursor} onClick=${() => setCursor(page.pagination.nextCursor!)}>${t.next}</button>
      </div>`
    }
  </section>`;
}
