// Uploaded files, under the upload plugin's own rules: an upload with a progress bar, images shown
// through the protected download route (fetched with her credentials, shown from a blob: URL),
// and the file list with a type filter, download and delete. A `fileRef` field's input uses the
// same pieces.

import { html } from "htm/preact";
import { useEffect, useState } from "preact/hooks";
import { ApiError, headersFor, request } from "./api.ts";
import type { Session } from "./main.ts";
import { t } from "./strings.ts";

export interface FileRecord {
  id: string;
  originalName?: string;
  filename: string;
  mimeType: string;
  size: number;
  uploadedAt?: string;
}

/** The file's bytes as base64, without a data: prefix (the upload route's body). */
function base64Of(file: File): Promise<string> {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result).replace(/^data:[^,]*,/, ""));
    reader.onerror = () => reject(reader.error);
    reader.readAsDataURL(file);
  });
}

/** POST /upload/file, telling its progress (fetch cannot: XMLHttpRequest's upload events). */
export async function uploadFile(
  session: Session,
  file: File,
  onProgress: (fraction: number) => void,
): Promise<FileRecord> {
  const body = JSON.stringify({
    filename: file.name,
    mimeType: file.type || "application/octet-stream",
    file: await base64Of(file),
  });
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open("POST", `${session.config.basePath}/upload/file`);
    xhr.setRequestHeader("content-type", "application/json");
    for (const [name, value] of Object.entries(headersFor(session.credential)))
      xhr.setRequestHeader(name, value);
    xhr.upload.onprogress = (event) => event.lengthComputable && onProgress(event.loaded / event.total);
    xhr.onload = () => {
      let answer: any;
      try {
        answer = JSON.parse(xhr.responseText);
      } catch {
        answer = {};
      }
      if (xhr.status >= 200 && xhr.status < 300) resolve(answer as FileRecord);
      else
        reject(
          new ApiError(xhr.status, answer.code ?? "ERROR", answer.message ?? xhr.statusText, answer.details),
        );
    };
    xhr.onerror = () => reject(new ApiError(0, "NETWORK", t.networkError));
    xhr.send(body);
  });
}

/** A blob: URL of the file's bytes, read through the download route with her credentials. */
function useFileUrl(session: Session, id: string | undefined): string | undefined {
  const [url, setUrl] = useState<string>();
  useEffect(() => {
    if (!id) return setUrl(undefined);
    let made: string | undefined;
    let live = true;
    fetch(`${session.config.basePath}/upload/download/${encodeURIComponent(id)}`, {
      headers: headersFor(session.credential),
      credentials: "same-origin",
    })
      .then(async (response) => {
        if (!response.ok || !live) return;
        const blob = await response.blob();
        // Gone while the bytes came: no URL made, none to leak.
        if (!live) return;
        made = URL.createObjectURL(blob);
        setUrl(made);
      })
      .catch(() => {});
    return () => {
      live = false;
      if (made) URL.revokeObjectURL(made);
    };
  }, [id, session]);
  return url;
}

export function Thumbnail({
  session,
  file,
}: {
  session: Session;
  file: Pick<FileRecord, "id" | "mimeType" | "filename">;
}) {
  const url = useFileUrl(session, file.mimeType.startsWith("image/") ? file.id : undefined);
  return url ? html`<img class="thumb" src=${url} alt=${file.filename} />` : null;
}

/** Choose a file, watch it upload, get its record. */
export function Uploader({
  session,
  id,
  onUploaded,
}: {
  session: Session;
  id: string;
  onUploaded: (file: FileRecord) => void;
}) {
  const [progress, setProgress] = useState<number>();
  const [failure, setFailure] = useState<string>();
  const pick = async (file: File | undefined) => {
    if (!file) return;
    setFailure(undefined);
    setProgress(0);
    try {
      onUploaded(await uploadFile(session, file, setProgress));
    } catch (error) {
      setFailure(error instanceof ApiError ? error.message : String(error));
    } finally {
      setProgress(undefined);
    }
  };
  return html`<span class="uploader">
    <label for=${id}>${t.uploadFile}</label>
    <input id=${id} type="file" onChange=${(e: Event) => pick((e.target as HTMLInputElement).files?.[0])} />
    ${progress !== undefined && html`<progress max="1" value=${progress} aria-label=${t.uploading}>${Math.round(progress * 100)}%</progress>`}
    ${failure && html`<span role="alert" class="error">${failure}</span>`}
  </span>`;
}

/** A `fileRef` field: the file it holds (a thumbnail for an image), replaced by an upload or cleared. */
export function FileField(props: {
  session: Session;
  common: Record<string, unknown>;
  value: unknown;
  editable: boolean;
  onChange: (v: unknown) => void;
}) {
  const { session, common, value, editable, onChange } = props;
  const [file, setFile] = useState<FileRecord>();
  const id = typeof value === "string" && value ? value : undefined;
  useEffect(() => {
    if (!id) return setFile(undefined);
    request<FileRecord>(
      session.credential,
      "GET",
      `${session.config.basePath}/upload/file/${encodeURIComponent(id)}`,
    )
      .then((answer) => setFile(answer.body))
      .catch(() => setFile(undefined));
  }, [id, session]);
  return html`<div class="file-field">
    <input ...${common} type="text" readonly value=${id ?? ""} />
    ${file && html`<span>${file.originalName ?? file.filename} (${file.mimeType})</span> <${Thumbnail} session=${session} file=${file} />`}
    ${
      editable &&
      html`<${Uploader} session=${session} id=${`${String(common.id)}-upload`} onUploaded=${(uploaded: FileRecord) => onChange(uploaded.id)} />
        ${id && html`<button type="button" onClick=${() => onChange(null)}>${t.removeFile}</button>`}`
    }
  </div>`;
}

interface FilePage {
  items: FileRecord[];
  pagination: { page: number; hasNext: boolean; hasPrev: boolean };
}

const TYPES = ["", "image/*", "application/pdf", "text/*", "audio/*", "video/*"];

/** The upload list: newest first, by type, with download and delete (her upload rules decide). */
export function FilesView({ session }: { session: Session }) {
  const [type, setType] = useState("");
  const [page, setPage] = useState(1);
  const [files, setFiles] = useState<FilePage>();
  const [message, setMessage] = useState<string>();
  const [reloads, setReloads] = useState(0);
  // biome-ignore lint/correctness/useExhaustiveDependencies: reloads asks for the same page again.
  useEffect(() => {
    let live = true;
    const query = new URLSearchParams({ page: String(page), limit: "20" });
    if (type) query.set("mimeType", type);
    request<FilePage>(session.credential, "GET", `${session.config.basePath}/upload/files?${query}`)
      .then((answer) => live && setFiles(answer.body))
      .catch((error) => live && setMessage(error instanceof ApiError ? error.message : String(error)));
    return () => {
      live = false;
    };
  }, [type, page, session, reloads]);
  const download = async (file: FileRecord) => {
    const response = await fetch(
      `${session.config.basePath}/upload/download/${encodeURIComponent(file.id)}`,
      {
        headers: headersFor(session.credential),
        credentials: "same-origin",
      },
    );
    if (!response.ok) return setMessage(`${response.status}`);
    const link = document.createElement("a");
    link.href = URL.createObjectURL(await response.blob());
    link.download = file.originalName ?? file.filename;
    link.click();
    setTimeout(() => URL.revokeObjectURL(link.href), 10_000);
  };
  const remove = async (file: FileRecord) => {
    try {
      await request(
        session.credential,
        "DELETE",
        `${session.config.basePath}/upload/file/${encodeURIComponent(file.id)}`,
      );
      setMessage(t.deletedFile(file.originalName ?? file.filename));
      setReloads((n) => n + 1);
    } catch (error) {
      setMessage(error instanceof ApiError ? error.message : String(error));
    }
  };
  return html`<section aria-labelledby="files-title">
    <h2 id="files-title">${t.files}</h2>
    <div class="tools">
      <label for="file-type">${t.fileType}</label>
      <select id="file-type" value=${type} onChange=${(e: Event) => {
        setType((e.target as HTMLSelectElement).value);
        setPage(1);
      }}>${TYPES.map((ty) => html`<option value=${ty}>${ty || t.allTypes}</option>`)}</select>
      <${Uploader} session=${session} id="files-upload" onUploaded=${() => setReloads((n) => n + 1)} />
    </div>
    ${message && html`<p role="status">${message}</p>`}
    ${
      files &&
      (files.items.length === 0
        ? html`<p>${t.noRows}</p>`
        : html`<table aria-labelledby="files-title">
          <thead><tr><th scope="col"><span class="visually-hidden">${t.preview}</span></th><th scope="col">${t.fileName}</th><th scope="col">${t.fileType}</th><th scope="col">${t.size}</th><th scope="col"><span class="visually-hidden">${t.actions}</span></th></tr></thead>
          <tbody>${files.items.map(
            (file) => html`<tr>
              <td><${Thumbnail} session=${session} file=${file} /></td>
              <td>${file.originalName ?? file.filename}</td>
              <td>${file.mimeType}</td>
              <td>${file.size.toLocaleString()}</td>
              <td class="actions">
                <button type="button" aria-label=${t.downloadOf(file.originalName ?? file.filename)} onClick=${() => download(file)}>${t.download}</button>
                <button type="button" class="danger" aria-label=${t.deleteOf(file.originalName ?? file.filename)} onClick=${() => remove(file)}>${t.deleteRecord}</button>
              </td>
            </tr>`,
          )}</tbody>
        </table>`)
    }
    ${
      files &&
      html`<div class="pager">
        <button type="button" disabled=${!files.pagination.hasPrev} onClick=${() => setPage(page - 1)}>${t.previous}</button>
        <button type="button" disabled=${!files.pagination.hasNext} onClick=${() => setPage(page + 1)}>${t.next}</button>
      </div>`
    }
  </section>`;
}
