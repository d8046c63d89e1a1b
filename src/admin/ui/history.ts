// A record's history, for every caller who may read the record (GET /<resource>/:id/history,
// served by the audit plugin; absent where the app has none): who changed what and when, field by
// field, her hidden fields left out by the server. A redacted value stays redacted; "Restore this
// version" (offered where it would change something) is an ordinary PATCH with If-Match, audited
// like any other, that never writes a redacted placeholder (or a field she cannot see) back.

import { html } from "htm/preact";
import { useEffect, useState } from "preact/hooks";
import { ApiError, request } from "./api.ts";
import { cellText, dateText } from "./list-view.ts";
import type { Session } from "./main.ts";
import { locale, t } from "./strings.ts";

type Row = Record<string, unknown>;

interface Entry {
  id: string;
  createdAt: string;
  operation: string;
  userId: string | null;
  source: string;
  after: Row | null;
  changes: Record<string, { from: unknown; to: unknown }> | null;
}

const REDACTED = "[redacted]";

export function History(props: {
  session: Session;
  resource: string;
  id: string;
  current: Row;
  /** Fields she may write now: a restore sets only these. */
  writable: string[];
  /** Date-time fields: their changes read as local dates and times, not as ISO 8601 text. */
  dates: string[];
  etag: string | null;
  /**
   * Changes whenever the form learns of a newer version than the one it stands on (someone
   * else's save, heard live or met as a conflict): the history is read again, theirs in it.
   */
  newer: string;
  onRestored: (record: Row, etag: string | null) => void;
}) {
  const { session, resource, id, current, writable, dates, etag, newer, onRestored } = props;
  const [entries, setEntries] = useState<Entry[]>();
  const [failure, setFailure] = useState<string>();
  const history = `${session.config.basePath}/${resource}/${encodeURIComponent(id)}/history?limit=20`;
  // biome-ignore lint/correctness/useExhaustiveDependencies: read again after each save (etag), and when a newer version is known (newer).
  useEffect(() => {
    let live = true;
    request<{ items: Entry[] }>(session.credential, "GET", history)
      .then((answer) => live && setEntries(answer.body.items))
      // No audit plugin on the server (404): no history, and nothing said. Another failure (the
      // network, for a moment) keeps what was read before.
      .catch((error) => live && error instanceof ApiError && error.status === 404 && setEntries(undefined));
    return () => {
      live = false;
    };
  }, [history, session.credential, etag, newer]);
  if (!entries) return null;

  const restore = async (body: Row) => {
    try {
      const answer = await request<Row>(
        session.credential,
        "PATCH",
        `${session.config.basePath}/${resource}/${encodeURIComponent(id)}`,
        {
          body,
          headers: etag ? { "if-match": etag } : {},
        },
      );
      onRestored(answer.body, answer.headers.get("etag"));
    } catch (error) {
      setFailure(error instanceof ApiError ? error.message : String(error));
    }
  };

  // Offered only where it would change something: not on the version the record is at now (a
  // record's only version, say), where a PATCH would write nothing.
  const restoreButton = (entry: Entry) => {
    if (!entry.after || entry.operation === "delete") return null;
    const body = restoreBody(entry.after, current, writable);
    if (Object.keys(body).length === 0) return null;
    return html`<button type="button" onClick=${() => restore(body)}>${t.restore}</button>`;
  };

  return html`<section class="history" aria-labelledby="history-title">
    <h3 id="history-title">${t.history}</h3>
    ${failure && html`<p role="alert" class="error">${failure}</p>`}
    <ol>
      ${entries.map(
        (entry) => html`<li>
          <p><strong>${entry.operation}</strong> ${t.by(entry.userId, entry.source)}, <time datetime=${entry.createdAt}>${new Date(entry.createdAt).toLocaleString(locale)}</time></p>
          ${
            entry.changes &&
            html`<ul>${Object.entries(entry.changes).map(([field, change]) => {
              const text = dates.includes(field) ? dateText : cellText;
              return html`<li>${field}: ${text(change.from)} → ${text(change.to)}</li>`;
            })}</ul>`
          }
          ${restoreButton(entry)}
        </li>`,
      )}
    </ol>
  </section>`;
}

/** What restoring `version` writes: the fields she may write that it holds otherwise than now. */
function restoreBody(version: Row, current: Row, writable: readonly string[]): Row {
  const body: Row = {};
  for (const field of writable) {
    // A field hidden from her is absent from the version, and a redacted one is not its value:
    // either stays as it is.
    const value = version[field];
    if (value === REDACTED || value === undefined) continue;
    if (JSON.stringify(value) !== JSON.stringify(current[field] ?? null)) body[field] = value;
  }
  return body;
}
