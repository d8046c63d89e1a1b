// Realtime as a plugin, on the contract every plugin has: its hooks publish each committed change,
// it wraps the resources' list routes so an EventSource (Accept: text/event-stream) gets the event
// stream, adds `/<plural>/events`, starts the bus at startup, ends the streams when the server
// shuts down and closes the bus with the app. `crudkit({ realtime })` adds it after the app's
// plugins; nothing else in crudkit() knows of realtime.

import type { Endpoint } from "../core/endpoint.ts";
import type { Identify } from "../core/identity.ts";
import type { CrudkitPlugin } from "../core/plugin.ts";
import type { AnyResourceHooks, HookContext } from "../resource/hooks.ts";
import type { ResourceRuntime } from "../resource/runtime.ts";
import { eventsEndpoint, openStream, wantsEvents } from "./events-endpoint.ts";
import { RealtimeHub, type RealtimeOptions } from "./hub.ts";

/** The realtime plugin, and its hub for `app.realtime` (stats, server-side subscriptions). */
export interface RealtimePlugin extends CrudkitPlugin {
  readonly hub: RealtimeHub;
}

export interface RealtimeDeps {
  /** The resources' runtimes by name; filled as the app assembles them, read from startup on. */
  readonly runtimes: ReadonlyMap<string, ResourceRuntime>;
  /** The app's identify chain: a stream asks it again to learn whether its token expired. */
  readonly identify: Identify | undefined;
  readonly log: (message: string, error?: unknown) => void;
  /** What the engine's LIKE ignores, so a stream's `contains` matches as a list's does. */
  readonly likeFolds: RealtimeHub["likeFolds"];
}

/** `crudkit({ realtime })` as a plugin (see docs/live-data.md). */
export function realtimePlugin(options: true | RealtimeOptions, deps: RealtimeDeps): RealtimePlugin {
  const { runtimes, identify, log } = deps;
  const hub = new RealtimeHub(
    options === true ? {} : options,
    // An event too large for the bus carries no record: it is read again by id.
    async (resource, id) => {
      const rt = runtimes.get(resource);
      return rt?.store.findById(rt.db, id);
    },
    log,
    deps.likeFolds,
  );
  return {
    id: "realtime",
    hub,
    hooks: publishing(hub, runtimes),
    endpoints: () => {
      const endpoints: Endpoint[] = [];
      for (const rt of runtimes.values())
        if (rt.resource.plural !== rt.resource.name) endpoints.push(eventsEndpoint(rt, hub, identify));
      return endpoints;
    },
    // The list's URLs answer an EventSource with the event stream; other requests list as usual.
    wrap(endpoint, handler) {
      const listed = endpoint.doc?.resource;
      const rt = listed?.operation === "list" ? runtimes.get(listed.name) : undefined;
      if (!rt) return undefined;
      return (ctx) => (wantsEvents(ctx) ? openStream(rt, hub, identify, ctx) : handler(ctx));
    },
    init: (app) => {
      hub.eventSent = () => app.telemetry.count("realtime.eventSent");
      app.telemetry.level("realtime.streams", () => hub.stats().streams);
      return hub.start();
    },
    endStreams: () => hub.endStreams(),
    // An eighth of the connections (16 at least) stay for ordinary requests, whatever streams hold.
    reserveConnections: (maxConnections) =>
      hub.reserveConnections(maxConnections, Math.max(16, Math.floor(maxConnections / 8))),
    close: () => hub.close(),
  };
}

/** Publishes every committed change of every resource (not plugins' own rows) to the hub. */
function publishing(hub: RealtimeHub, runtimes: ReadonlyMap<string, ResourceRuntime>): AnyResourceHooks {
  type Changed = HookContext & { record: Record<string, unknown> };
  return {
    afterCreateCommit: (ctx: Changed) =>
      runtimes.has(ctx.resource) ? hub.publish("create", ctx.resource, ctx.record) : undefined,
    afterUpdateCommit: (ctx: Changed) =>
      runtimes.has(ctx.resource) ? hub.publish("update", ctx.resource, ctx.record) : undefined,
    afterDeleteCommit: (ctx: HookContext & { previous: Record<string, unknown> }) =>
      runtimes.has(ctx.resource) ? hub.publish("delete", ctx.resource, ctx.previous) : undefined,
  };
}
