// client.<resource>.subscribe(): the resource's live changes, through EventSource in browsers
// (cookies carry the caller), or a streamed fetch wherever headers must be sent (API keys, tokens,
// Node). Either way a dropped connection resumes from the last event it received (Last-Event-ID).

import { flattenFilter } from "./filter-params.ts";
import type { ClientOptions } from "./request.ts";

export interface RealtimeEvent<T> {
  /** The event's id: what a reconnection resumes from. */
  id: string;
  type: "create" | "update" | "delete";
  /** The record after a create or update, before a delete, without the fields hidden from you. */
  record: T;
}

export interface SubscribeOptions {
  /** Headers of this subscription (then fetch is used, not EventSource). */
  headers?: HeadersInit;
  /** The stream is open (again). */
  onOpen?: () => void;
  /** Events were missed and are no longer kept: reload what you show. */
  onReset?: (reason: string) => void;
  /** The server ended the stream for good (`expired`: sign in again), or it cannot be reached. */
  onClose?: (reason: string) => void;
}

const CONTROL = ["reset", "dropped", "expired", "close"] as const;

/** Opens the stream; the returned function closes it. */
export function subscribe(
  client: ClientOptions,
  name: string,
  query: { where?: object } | undefined,
  onEvent: (event: RealtimeEvent<any>) => void,
  options: SubscribeOptions = {},
): () => void {
  const params = new URLSearchParams();
  if (query?.where) for (const [key, value] of flattenFilter(query.where)) params.append(key, value);
  const search = params.toString();
  const url = `${client.baseURL.replace(/\/+$/, "")}/${name}${search ? `?${search}` : ""}`;
  const handle = (type: string, id: string, data: string): boolean => {
    let body: { record?: unknown; reason?: string };
    try {
      body = JSON.parse(data);
    } catch {
      return true;
    }
    if (type === "reset") options.onReset?.(body.reason ?? "");
    else if (type === "expired") {
      options.onClose?.(body.reason ?? "expired");
      return false;
    } else if (type === "create" || type === "update" || type === "delete")
      onEvent({ id, type, record: body.record });
    return true;
  };
  const Source = (globalThis as { EventSource?: typeof EventSource }).EventSource;
  if (Source && !client.headers && !options.headers && !client.fetchOptions?.headers) {
    const source = new Source(url, { withCredentials: client.fetchOptions?.credentials === "include" });
    source.onopen = () => options.onOpen?.();
    for (const type of ["create", "update", "delete", ...CONTROL])
      source.addEventListener(type, (e) => {
        const message = e as MessageEvent<string>;
        if (!handle(type, message.lastEventId, message.data)) source.close();
      });
    return () => source.close();
  }
  return streamed(client, url, handle, options);
}

/** The same stream over fetch, reconnecting with Last-Event-ID until stopped. */
function streamed(
  client: ClientOptions,
  url: string,
  handle: (type: string, id: string, data: string) => boolean,
  options: SubscribeOptions,
): () => void {
  const stop = new AbortController();
  let lastId = "";
  let retry = 3000;
  const run = async () => {
    while (!stop.signal.aborted) {
      try {
        const headers = new Headers(
          typeof client.headers === "function" ? await client.headers() : client.headers,
        );
        for (const more of [client.fetchOptions?.headers, options.headers])
          for (const [key, value] of new Headers(more)) headers.set(key, value);
        headers.set("accept", "text/event-stream");
        if (lastId) headers.set("last-event-id", lastId);
        const response = await (client.fetch ?? fetch)(url, { headers, signal: stop.signal });
        if (!response.ok || !response.body) {
          options.onClose?.(`The server answered ${response.status}.`);
          return;
        }
        options.onOpen?.();
        const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
        let buffer = "";
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          buffer += value.replace(/\r\n?/g, "\n");
          let end = buffer.indexOf("\n\n");
          while (end !== -1) {
            const block = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            end = buffer.indexOf("\n\n");
            let type = "message";
            let data = "";
            for (const line of block.split("\n")) {
              const colon = line.indexOf(":");
              const field = colon === -1 ? line : line.slice(0, colon);
              const text = colon === -1 ? "" : line.slice(colon + 1).replace(/^ /, "");
              if (field === "event") type = text;
              else if (field === "data") data += data ? `\n${text}` : text;
              else if (field === "id") lastId = text;
              else if (field === "retry" && /^\d+$/.test(text)) retry = Number(text);
            }
            if (data && !handle(type, lastId, data)) return stop.abort();
          }
        }
      } catch {
        if (stop.signal.aborted) return;
      }
      await new Promise((resolve) => setTimeout(resolve, retry));
    }
  };
  void run();
  return () => stop.abort();
}
