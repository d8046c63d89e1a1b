// A record's form, made from the resource's schema: native constraints (required, bounds, enum
// choices, formats), read-only where the caller's rules say so (with the reason beside), saved
// with If-Match so a change made meanwhile is never overwritten, and the server's 400 details
// shown on the fields they name. A hidden field is not in the form at all.

import { html } from "htm/preact";
import { useEffect, useState } from "preact/hooks";
import { ApiError, request } from "./api.ts";
import type { Session, Verdict } from "./main.ts";
import type { FieldModel } from "./model.ts";
import { listHref, recordHref } from "./route.ts";
import { ShowRequest } from "./show-request.ts";
import { t } from "./strings.ts";

type Row = Record<string, unknown>;

interface RecordAccess {
  read: Verdict;
  update: Verdict;
  delete: Verdict;
  hiddenFields: string[];
  readOnly: Record<string, string>;
}

interface Loaded {
  record: Row;
  etag: string | null;
  access: RecordAccess;
}

export function RecordForm({ session, resource, id }: { session: Session; resource: string; id: string }) {
  const model = session.model.resources.get(resource)!;
  const creating = id === "new";
  const [loaded, setLoaded] = useState<Loaded>();
  const [draft, setDraft] = useState<Row>({});
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [message, setMessage] = useState<{ kind: "error" | "done"; text: string }>();
  const [armed, setArmed] = useState(false);
  const recordUrl = `${session.config.basePath}/${resource}${creating ? "" : `/${encodeURIComponent(id)}`}`;
  const fieldNames = model.fields.map((f) => f.name).join(",");

  useRecord(
    session,
    { resource, id, recordUrl, fieldNames },
    (next) => {
      setLoaded(next);
      setDraft({});
    },
    (text) => setMessage({ kind: "error", text }),
  );

  if (!loaded)
    return message
      ? html`<p role="alert" class="error">${message.text}</p>`
      : html`<p role="status">${t.loading}</p>`;
  const { record, etag, access } = loaded;
  const hidden = new Set(access.hiddenFields);
  const mayWrite = creating ? session.access.get(resource)!.create : access.update;
  const fields = model.fields.filter((f) => !hidden.has(f.name) && (!creating || f.onCreate));
  const lockedWhy = (f: FieldModel): string | undefined => {
    if (!mayWrite.allowed) return mayWrite.reason ?? t.readOnlyForm;
    if (creating ? !f.onCreate : !f.onUpdate) return undefined;
    return access.readOnly[f.name];
  };
  const editable = (f: FieldModel) =>
    mayWrite.allowed && (creating ? f.onCreate : f.onUpdate) && !access.readOnly[f.name];
  const body = Object.fromEntries(
    Object.entries(draft).filter(([name]) => fields.some((f) => f.name === name && editable(f))),
  );

  const save = async (event: Event) => {
    event.preventDefault();
    setErrors({});
    setMessage(undefined);
    try {
      const answer = await request<Row>(session.credential, creating ? "POST" : "PATCH", recordUrl, {
        body,
        headers: !creating && etag ? { "if-match": etag } : {},
      });
      if (creating) {
        location.hash = recordHref(resource, String(answer.body.id));
        return;
      }
      setLoaded({ ...loaded, record: answer.body, etag: answer.headers.get("etag") });
      setDraft({});
      setMessage({ kind: "done", text: t.saved });
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      if (error.status === 412) return setMessage({ kind: "error", text: t.changedMeanwhile });
      const byField: Record<string, string> = {};
      for (const detail of error.details) byField[detail.path.split(".")[0] ?? ""] = detail.message;
      setErrors(byField);
      setMessage({ kind: "error", text: error.message });
    }
  };
  const remove = async () => {
    if (!armed) return setArmed(true);
    try {
      await request(session.credential, "DELETE", recordUrl, { headers: etag ? { "if-match": etag } : {} });
      location.hash = listHref(resource);
    } catch (error) {
      setArmed(false);
      setMessage({ kind: "error", text: error instanceof ApiError ? error.message : String(error) });
    }
  };

  return html`
    <section aria-labelledby="form-title">
      <p><a href=${listHref(resource)}>${t.back}</a></p>
      <h2 id="form-title">${creating ? t.newRecord(resource) : `${resource} ${id}`}</h2>
      ${!mayWrite.allowed && html`<p class="why" id="form-why">${t.readOnlyForm} ${mayWrite.reason ?? ""}</p>`}
      ${message && html`<p role=${message.kind === "error" ? "alert" : "status"} class=${message.kind}>${message.text}</p>`}
      <form onSubmit=${save} aria-labelledby="form-title">
        ${fields.map(
          (f) => html`<${FieldInput}
            field=${f}
            value=${f.name in draft ? draft[f.name] : record[f.name]}
            editable=${editable(f)}
            why=${lockedWhy(f)}
            error=${errors[f.name]}
            creating=${creating}
            onChange=${(value: unknown) => setDraft({ ...draft, [f.name]: value })}
          />`,
        )}
        <div class="actions">
          ${
            mayWrite.allowed
              ? html`<button type="submit">${creating ? t.create : t.save}</button>`
              : html`<button type="submit" disabled aria-describedby="form-why">${creating ? t.create : t.save}</button>`
          }
          ${
            !creating &&
            (access.delete.allowed
              ? html`<button type="button" class="danger" onClick=${remove}>${armed ? t.confirmDelete : t.deleteRecord}</button>`
              : html`<button type="button" class="danger" disabled aria-describedby="delete-why">${t.deleteRecord}</button>
                  <span id="delete-why" class="why">${access.delete.reason}</span>`)
          }
        </div>
      </form>
      <${ShowRequest}
        method=${creating ? "POST" : "PATCH"}
        url=${recordUrl}
        body=${body}
        call=${creating ? `client.${resource}.create(${JSON.stringify(body)})` : `client.${resource}.update(${JSON.stringify(id)}, ${JSON.stringify(body)})`}
      />
    </section>
  `;
}

/** The record (none for a new one) and what the caller may do with it and its fields. */
function useRecord(
  session: Session,
  {
    resource,
    id,
    recordUrl,
    fieldNames,
  }: { resource: string; id: string; recordUrl: string; fieldNames: string },
  done: (loaded: Loaded) => void,
  fail: (message: string) => void,
) {
  const creating = id === "new";
  // biome-ignore lint/correctness/useExhaustiveDependencies: done and fail are made anew each render; the record is read again only for another record.
  useEffect(() => {
    let live = true;
    const permissions = `${session.config.adminPath}/permissions?resource=${encodeURIComponent(resource)}${
      creating ? "" : `&id=${encodeURIComponent(id)}`
    }&fields=${fieldNames}`;
    Promise.all([
      request<RecordAccess>(session.credential, "GET", permissions),
      creating ? Promise.resolve(undefined) : request<Row>(session.credential, "GET", recordUrl),
    ])
      .then(([access, record]) => {
        if (!live) return;
        done({
          record: record?.body ?? {},
          etag: record?.headers.get("etag") ?? null,
          access: access.body,
        });
      })
      .catch((error) => live && fail(error instanceof ApiError ? error.message : String(error)));
    return () => {
      live = false;
    };
  }, [recordUrl, session.config.adminPath, fieldNames, session.credential, resource, id, creating]);
}

/** A `datetime-local` value (local time, to the second) for an ISO 8601 instant. */
function localDateTime(value: unknown): string {
  if (typeof value !== "string" || value === "") return "";
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) return "";
  return new Date(date.getTime() - date.getTimezoneOffset() * 60_000).toISOString().slice(0, 19);
}

function FieldInput(props: {
  field: FieldModel;
  value: unknown;
  editable: boolean;
  why?: string;
  error?: string;
  creating: boolean;
  onChange: (value: unknown) => void;
}) {
  const { field, value, editable, why, error, creating, onChange } = props;
  const id = `field-${field.name}`;
  const described =
    [error ? `${id}-error` : "", why ? `${id}-why` : ""].filter(Boolean).join(" ") || undefined;
  const c = field.constraints as Record<string, any>;
  const common = {
    id,
    name: field.name,
    disabled: !editable,
    required: creating && field.required,
    "aria-invalid": error ? "true" : undefined,
    "aria-describedby": described,
  };
  const empty = (text: string) => (text === "" ? (creating ? undefined : null) : text);
  let input: unknown;
  if (field.type === "boolean")
    input = html`<input type="checkbox" role="switch" ...${common} required=${false} checked=${value === true} onChange=${(e: Event) => onChange((e.target as HTMLInputElement).checked)} />`;
  else if (field.type === "enum")
    input = html`<select ...${common} value=${value ?? ""} onChange=${(e: Event) => onChange(empty((e.target as HTMLSelectElement).value))}>
      ${!field.required && html`<option value="">${t.unset}</option>`}
      ${field.enumValues!.map((v) => html`<option value=${v}>${v}</option>`)}
    </select>`;
  else if (field.type === "number" || field.type === "integer")
    input = html`<input type="number" ...${common} step=${field.type === "integer" ? "1" : "any"} min=${c.minimum ?? c.exclusiveMinimum} max=${c.maximum ?? c.exclusiveMaximum}
      value=${value ?? ""} onInput=${(e: Event) => {
        const text = (e.target as HTMLInputElement).value;
        onChange(text === "" ? empty(text) : Number(text));
      }} />`;
  else if (field.type === "date")
    input = html`<input type="datetime-local" step="1" ...${common} value=${localDateTime(value)}
      onInput=${(e: Event) => {
        const text = (e.target as HTMLInputElement).value;
        onChange(text === "" ? empty(text) : new Date(text).toISOString());
      }} />`;
  else if (field.type === "json")
    input = html`<${JsonInput} common=${common} value=${value} onChange=${onChange} />`;
  else
    input = html`<input type=${c.format === "email" ? "email" : c.format === "uri" ? "url" : "text"} ...${common}
      minlength=${c.minLength} maxlength=${c.maxLength} pattern=${c.pattern} value=${value ?? ""}
      onInput=${(e: Event) => onChange(empty((e.target as HTMLInputElement).value))} />`;
  return html`<div class="field">
    <label for=${id}>${field.name}${creating && field.required ? " *" : ""}</label>
    ${input}
    ${why && html`<span id=${`${id}-why`} class="why">${why}</span>`}
    ${error && html`<span id=${`${id}-error`} class="error">${error}</span>`}
  </div>`;
}

function JsonInput({
  common,
  value,
  onChange,
}: {
  common: Record<string, unknown>;
  value: unknown;
  onChange: (v: unknown) => void;
}) {
  const [text, setText] = useState(() => (value === undefined ? "" : JSON.stringify(value, null, 2)));
  const [bad, setBad] = useState(false);
  return html`<textarea ...${common} aria-invalid=${bad ? "true" : common["aria-invalid"]} rows="4" value=${text}
    onInput=${(e: Event) => {
      const next = (e.target as HTMLTextAreaElement).value;
      setText(next);
      try {
        onChange(next.trim() === "" ? null : JSON.parse(next));
        setBad(false);
        (e.target as HTMLTextAreaElement).setCustomValidity("");
      } catch {
        setBad(true);
        (e.target as HTMLTextAreaElement).setCustomValidity(t.invalidJson);
      }
    }}></textarea>`;
}
