// A record's form, made from the resource's schema: native constraints (required, bounds, enum
// choices, formats), read-only where the caller's rules say so (with the reason beside), saved
// with If-Match so a change made meanwhile is never overwritten, and the server's 400 details
// shown on the fields they name. A hidden field is not in the form at all.

import { html } from "htm/preact";
import { useEffect, useState } from "preact/hooks";
import { ApiError, request } from "./api.ts";
import { ConflictView } from "./conflict-view.ts";
import { FileField } from "./files.ts";
import { History } from "./history.ts";
import { ListPicker } from "./list-picker.ts";
import { useLive } from "./live.ts";
import type { Session, Verdict } from "./main.ts";
import type { FieldModel } from "./model.ts";
import { ReferencePicker } from "./reference-picker.ts";
import { RelatedLists } from "./related-list.ts";
import { listHref, recordHref, useFocusedHeading } from "./route.ts";
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
  const creating = id === "";
  const [loaded, setLoaded] = useState<Loaded>();
  const [draft, setDraft] = useState<Row>({});
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [message, setMessage] = useState<{ kind: "error" | "done"; text: string }>();
  /** Their version, when it differs from the one the form was opened on (a 412, or a live event). */
  const [theirs, setTheirs] = useState<{ record: Row; etag: string | null }>();
  const recordUrl = `${session.config.basePath}/${resource}${creating ? "" : `/${encodeURIComponent(id)}`}`;
  const fail = (error: unknown) => setMessage({ kind: "error", text: errorText(error) });

  useRecord(
    session,
    { resource, id, recordUrl, fieldNames: model.fields.map((f) => f.name).join(",") },
    fail,
    (next) => {
      setLoaded(next);
      setDraft({});
    },
  );
  const heading = useFocusedHeading(loaded !== undefined);
  // Someone else's change arrives while the form is open: said, never written over her typing.
  const [remote, setRemote, heard] = useRemoteChange(session, model.events, id, creating, loaded?.record);

  if (!loaded)
    return message
      ? html`<p role="alert" class="error">${message.text}</p>`
      : html`<p role="status">${t.loading}</p>`;
  const { record, etag, access } = loaded;
  const mayWrite = creating ? session.access.get(resource)!.create : access.update;
  const { fields, editable, lockedWhy } = fieldRules(model.fields, access, mayWrite, creating);
  const body = Object.fromEntries(
    Object.entries(draft).filter(([name]) => fields.some((f) => f.name === name && editable(f))),
  );
  const readTheirs = async () => {
    const answer = await request<Row>(session.credential, "GET", recordUrl);
    setTheirs({ record: answer.body, etag: answer.headers.get("etag") });
  };

  const saved = (record: Row, etag: string | null) => {
    setLoaded({ ...loaded, record, etag });
    setDraft({});
    setRemote(undefined);
    setMessage({ kind: "done", text: t.saved });
  };
  const save = async (event: Event) => {
    event.preventDefault();
    setErrors({});
    setMessage(undefined);
    const outcome = await submit(session, { creating, recordUrl, body, etag });
    if (outcome.kind === "created") location.hash = recordHref(resource, outcome.id);
    else if (outcome.kind === "conflict") await readTheirs().catch(fail);
    else if (outcome.kind === "refused") {
      setErrors(outcome.errors);
      setMessage({ kind: "error", text: outcome.message });
    } else saved(outcome.record, outcome.etag);
  };
  // Her draft stays; the form now stands on their version, so the next save sends its ETag.
  const rebase = (keep: (draft: Row) => Row) => {
    setLoaded({ ...loaded, record: theirs!.record, etag: theirs!.etag });
    setDraft(keep(draft));
    setTheirs(undefined);
    setRemote(undefined);
  };

  return html`
    <section aria-labelledby="form-title">
      <p><a href=${listHref(resource)}>${t.back}</a></p>
      <h2 id="form-title" tabindex="-1" ref=${heading}>${creating ? t.newRecord(resource) : `${resource} ${id}`}</h2>
      ${!mayWrite.allowed && html`<p class="why" id="form-why">${t.readOnlyForm} ${mayWrite.reason ?? ""}</p>`}
      ${message && html`<p role=${message.kind === "error" ? "alert" : "status"} class=${message.kind}>${message.text}</p>`}
      ${
        theirs
          ? html`<${ConflictView}
              fields=${fields.filter(editable)}
              original=${record}
              theirs=${theirs.record}
              mine=${draft}
              onTakeTheirs=${(field?: string) => rebase((d) => withoutField(d, field))}
              onKeepMine=${() => rebase((d) => d)}
            />`
          : remote && html`<${RemoteNotice} remote=${remote} onCompare=${() => readTheirs().catch(fail)} />`
      }
      <form onSubmit=${save} aria-labelledby="form-title">
        ${fields.map(
          (f) => html`<${FieldInput}
            key=${`${f.name}:${etag ?? ""}`}
            session=${session}
            field=${f}
            value=${f.name in draft ? draft[f.name] : record[f.name]}
            editable=${editable(f)}
            why=${lockedWhy(f)}
            error=${errors[f.name]}
            creating=${creating}
            onChange=${(value: unknown) => setDraft({ ...draft, [f.name]: value })}
          />`,
        )}
        <${FormActions} session=${session} resource=${resource} creating=${creating} mayWrite=${mayWrite}
          access=${access} recordUrl=${recordUrl} etag=${etag} onError=${fail} />
      </form>
      ${!creating && html`<${RelatedLists} session=${session} resource=${resource} id=${id} />`}
      ${
        !creating &&
        html`<${History}
          session=${session}
          resource=${resource}
          id=${id}
          current=${record}
          writable=${fields.filter(editable).map((f) => f.name)}
          dates=${fields.filter((f) => f.type === "date").map((f) => f.name)}
          etag=${etag}
          newer=${`${theirs?.etag ?? ""} ${heard}`}
          onRestored=${saved}
        />`
      }
      <${ShowRequest} method=${creating ? "POST" : "PATCH"} url=${recordUrl} body=${body} call=${clientCall(resource, id, body)} />
    </section>
  `;
}

/** The typed client's call that makes the same write. */
const clientCall = (resource: string, id: string, body: Row) =>
  id === ""
    ? `client.${resource}.create(${JSON.stringify(body)})`
    : `client.${resource}.update(${JSON.stringify(id)}, ${JSON.stringify(body)})`;

/** The fields the form shows (none she may not read), which she may edit, and why not. */
function fieldRules(all: FieldModel[], access: RecordAccess, mayWrite: Verdict, creating: boolean) {
  const hidden = new Set(access.hiddenFields);
  const settable = (f: FieldModel) => (creating ? f.onCreate : f.onUpdate);
  return {
    fields: all.filter((f) => !hidden.has(f.name) && (!creating || f.onCreate)),
    editable: (f: FieldModel) => mayWrite.allowed && settable(f) && !access.readOnly[f.name],
    lockedWhy: (f: FieldModel): string | undefined => {
      if (!mayWrite.allowed) return mayWrite.reason ?? t.readOnlyForm;
      return settable(f) ? access.readOnly[f.name] : undefined;
    },
  };
}

const errorText = (error: unknown) => (error instanceof ApiError ? error.message : String(error));

/** Her draft without `field`'s value (every value, without a field): she took theirs. */
const withoutField = (draft: Row, field?: string): Row =>
  field === undefined ? {} : Object.fromEntries(Object.entries(draft).filter(([f]) => f !== field));

function RemoteNotice({ remote, onCompare }: { remote: "update" | "delete"; onCompare: () => void }) {
  return html`<p role="alert" class="error">
    ${remote === "delete" ? t.deletedBySomeone : t.changedBySomeone}
    ${remote === "update" && html` <button type="button" onClick=${onCompare}>${t.compare}</button>`}
  </p>`;
}

/** The same version of a record: its `updatedAt` where it has one, else every field. */
function sameVersion(a: Row, b: Row): boolean {
  if (a.updatedAt !== undefined && b.updatedAt !== undefined) return a.updatedAt === b.updatedAt;
  return JSON.stringify(a) === JSON.stringify(b);
}

/** The record changed or deleted by someone else since the form opened, as its stream tells. */
function useRemoteChange(
  session: Session,
  events: string | undefined,
  id: string,
  creating: boolean,
  shown: Row | undefined,
) {
  const [remote, setRemote] = useState<"update" | "delete">();
  // Each change heard counts: a second save of theirs is news too (History reads again).
  const [heard, setHeard] = useState(0);
  useLive(
    !creating && events ? `${events}?filter[id]=${encodeURIComponent(id)}` : undefined,
    session.credential,
    (name, event) => {
      if (event.record?.id !== id || (name !== "update" && name !== "delete")) return;
      // Her own save, heard after its answer: the version the form already shows is no news.
      if (name === "update" && shown && sameVersion(event.record, shown)) return;
      setRemote(name);
      setHeard((count) => count + 1);
    },
  );
  return [remote, setRemote, heard] as const;
}

type Outcome =
  | { kind: "created"; id: string }
  | { kind: "saved"; record: Row; etag: string | null }
  | { kind: "conflict" }
  | { kind: "refused"; message: string; errors: Record<string, string> };

/** POST a new record, or PATCH this one on the version it was read at (If-Match). */
async function submit(
  session: Session,
  {
    creating,
    recordUrl,
    body,
    etag,
  }: { creating: boolean; recordUrl: string; body: Row; etag: string | null },
): Promise<Outcome> {
  try {
    const answer = await request<Row>(session.credential, creating ? "POST" : "PATCH", recordUrl, {
      body,
      headers: !creating && etag ? { "if-match": etag } : {},
    });
    if (creating) return { kind: "created", id: String(answer.body.id) };
    return { kind: "saved", record: answer.body, etag: answer.headers.get("etag") };
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    if (error.status === 412) return { kind: "conflict" };
    // The server's details, each on the field it names (its first path segment).
    const errors: Record<string, string> = {};
    for (const detail of error.details) errors[detail.path.split(".")[0] ?? ""] = detail.message;
    return { kind: "refused", message: error.message, errors };
  }
}

/** Save (or create), and delete in two presses; a control she may not use is disabled with why. */
function FormActions(props: {
  session: Session;
  resource: string;
  creating: boolean;
  mayWrite: Verdict;
  access: RecordAccess;
  recordUrl: string;
  etag: string | null;
  onError: (error: unknown) => void;
}) {
  const { session, resource, creating, mayWrite, access, recordUrl, etag, onError } = props;
  const [armed, setArmed] = useState(false);
  const remove = async () => {
    if (!armed) return setArmed(true);
    try {
      await request(session.credential, "DELETE", recordUrl, { headers: etag ? { "if-match": etag } : {} });
      location.hash = listHref(resource);
    } catch (error) {
      setArmed(false);
      onError(error);
    }
  };
  const label = creating ? t.create : t.save;
  return html`<div class="actions">
    ${
      mayWrite.allowed
        ? html`<button type="submit">${label}</button>`
        : html`<button type="submit" disabled aria-describedby="form-why">${label}</button>`
    }
    ${
      !creating &&
      (access.delete.allowed
        ? html`<button type="button" class="danger" onClick=${remove} onBlur=${() => setArmed(false)}>${armed ? t.confirmDelete : t.deleteRecord}</button>`
        : html`<button type="button" class="danger" disabled aria-describedby="delete-why">${t.deleteRecord}</button>
            <span id="delete-why" class="why">${access.delete.reason}</span>`)
    }
  </div>`;
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
  fail: (error: unknown) => void,
  done: (loaded: Loaded) => void,
) {
  const creating = id === "";
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
      .catch((error) => live && fail(error));
    return () => {
      live = false;
    };
  }, [recordUrl, session.config.adminPath, fieldNames, session.credential, resource, id, creating]);
}

/**
 * A JSON Schema pattern as an input's `pattern`, which must match the whole value: only one
 * anchored at both ends (`^…$`) means the same there; any other is left to the server's check.
 */
function htmlPattern(pattern: unknown): string | undefined {
  return typeof pattern === "string" && pattern.startsWith("^") && pattern.endsWith("$")
    ? pattern
    : undefined;
}

/** A `datetime-local` value (local time, to the second) for an ISO 8601 instant. */
function localDateTime(value: unknown): string {
  if (typeof value !== "string" || value === "") return "";
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) return "";
  return new Date(date.getTime() - date.getTimezoneOffset() * 60_000).toISOString().slice(0, 19);
}

function FieldInput(props: {
  session: Session;
  field: FieldModel;
  value: unknown;
  editable: boolean;
  why?: string;
  error?: string;
  creating: boolean;
  onChange: (value: unknown) => void;
}) {
  const { session, field, value, editable, why, error, creating, onChange } = props;
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
  else if (field.file)
    input = html`<${FileField} session=${session} common=${common} value=${value} editable=${editable} onChange=${onChange} />`;
  else if (field.list)
    input = html`<${ListPicker} session=${session} field=${field} common=${common} value=${value} editable=${editable} onChange=${onChange} />`;
  else if (field.references && editable)
    input = html`<${ReferencePicker} session=${session} target=${field.references} common=${common} value=${value} onChange=${onChange} />`;
  else if (field.type === "json")
    input = html`<${JsonInput} common=${common} value=${value} onChange=${onChange} />`;
  else
    input = html`<input type=${c.format === "email" ? "email" : c.format === "uri" ? "url" : "text"} ...${common}
      minlength=${c.minLength} maxlength=${c.maxLength} pattern=${htmlPattern(c.pattern)} value=${value ?? ""}
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
