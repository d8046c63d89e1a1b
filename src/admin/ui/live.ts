// Live changes over the API's realtime stream (`GET <basePath>/<plural>/events`), read with fetch
// so the caller's own credentials go with it (EventSource sends no headers). The server checks
// each event against her rules and filter: rows she may not see never arrive.

import { useEffect, useRef } from "preact/hooks";
import { type Credential, headersFor } from "./api.ts";

export interface LiveEvent {
  type: string;
  record?: Record<string, unknown>;
  id?: string;
}

/** Reads the text/event-stream at `url` until `signal` aborts, calling `onEvent` per event. */
export async function readEvents(
  url: string,
  credential: Credential | undefined,
  signal: AbortSignal,
  onEvent: (name: string, data: LiveEvent) => void,
  resume: { lastId?: string } = {},
): Promise<boolean> {
  const headers: Record<string, string> = { accept: "text/event-stream", ...headersFor(credential) };
  // Reconnecting: the server sends what was missed since this event (or `reset` when too much was).
  if (resume.lastId) headers["last-event-id"] = resume.lastId;
  const response = await fetch(url, { headers, credentials: "same-origin", signal });
  // Refused (her rules, a bad filter): trying again would be refused again.
  if (!response.ok || !response.body) return false;
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return true;
    buffer += value;
    let end = buffer.indexOf("\n\n");
    while (end >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let name = "message";
      let data = "";
      for (const line of block.split("\n")) {
        if (line.startsWith("id:")) resume.lastId = line.slice(3).trim();
        else if (line.startsWith("event:")) name = line.slice(6).trim();
        // Several data lines make one value, joined by line breaks (as EventSource does).
        else if (line.startsWith("data:")) data += (data ? "\n" : "") + line.slice(5).trim();
      }
      let parsed: LiveEvent = { type: name };
      try {
        if (data) parsed = JSON.parse(data) as LiveEvent;
      } catch {
        // A heartbeat or a line that is not JSON: the event's name is what it says.
      }
      onEvent(name, parsed);
      end = buffer.indexOf("\n\n");
    }
  }
}

const RECONNECT_MS = 1000;

/** Follows `url`'s events while the component is shown; nothing when `url` is undefined. */
export function useLive(
  url: string | undefined,
  credential: Credential | undefined,
  onEvent: (name: string, data: LiveEvent) => void,
): void {
  // The latest handler, so a stream need not restart when the component renders again.
  const handler = useRef(onEvent);
  handler.current = onEvent;
  useEffect(() => {
    if (!url) return;
    const controller = new AbortController();
    const resume: { lastId?: string } = {};
    // The stream ends when the server restarts or closes it (`event: close`): it is opened again,
    // a second later, from the last event seen; it stops when the page leaves or it is refused.
    const follow = async () => {
      while (!controller.signal.aborted) {
        const again = await readEvents(
          url,
          credential,
          controller.signal,
          (n, d) => handler.current(n, d),
          resume,
        ).catch(() => !controller.signal.aborted);
        if (!again) return;
        await new Promise((resolve) => setTimeout(resolve, RECONNECT_MS));
      }
    };
    void follow();
    return () => controller.abort();
  }, [url, credential]);
}
