// `app.realtime`: the realtime plugin's streams seen from server code. A subscription goes through
// the app's handler as a client's would, so one code path decides what every subscriber sees.

import { subscribe } from "../client/subscribe.ts";
import { ConfigError } from "../core/errors.ts";
import type { RealtimeHub } from "../realtime/hub.ts";
import type { ResourceRuntime } from "../resource/runtime.ts";

/** `app.realtime`: stream stats, and subscriptions from server code through the handler. */
export function realtimeFacade(
  hub: RealtimeHub,
  runtimes: ReadonlyMap<string, ResourceRuntime>,
  basePath: string,
  handler: (request: Request) => Promise<Response>,
) {
  return {
    stats: () => hub.stats(),
    // Through the handler, as a client would: one code path decides what every subscriber sees.
    subscribe: (
      resource: string,
      { headers, where }: { headers?: HeadersInit; where?: object },
      onEvent: never,
      callbacks = {},
    ) => {
      const plural = runtimes.get(resource)?.resource.plural;
      if (!plural) throw new ConfigError(`realtime.subscribe(): there is no resource named "${resource}".`);
      return subscribe(
        {
          baseURL: `http://in-process.local${basePath}`,
          headers: headers ?? {},
          fetch: (url, init) => handler(new Request(url, init)),
        },
        plural,
        where ? { where } : undefined,
        onEvent,
        callbacks,
      );
    },
  };
}
