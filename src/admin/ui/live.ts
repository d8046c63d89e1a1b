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
): Promise<void> {
  const response = await fetch(url, {
    headers: { accept: "text/event-stream", ...headersFor(credential) },
    credentials: "same-origin",
    signal,
  });
  if (!response.ok || !response.body) return;
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value;
    let end = buffer.indexOf("\n\n");
    while (end >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let name = "message";
      let data = "";
      for (const line of block.split("\n")) {
        if (line.startsWith("event:")) name = line.slice(6).trim();
        else if (line.startsWith("data:")) data += line.slice(5).trim();
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
    readEvents(url, credential, controller.signal, (name, data) => handler.current(name, data)).catch(() => {
      // Aborted on leaving, or the stream ended: a list still works without live rows.
    });
    return () => controller.abort();
  }, [url, credential]);
}
