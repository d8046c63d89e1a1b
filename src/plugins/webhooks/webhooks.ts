// webhooks(): changes leave the building through a transactional outbox. Each create, update
// and delete an endpoint listens to (cascades and uploads included) inserts its event in the
// write's own transaction; each instance's dispatcher sends what committed, signed as Standard
// Webhooks, retrying with backoff until a 2xx or the last attempt.

import http from "node:http";
import https from "node:https";
import { ConfigError } from "../../core/errors.ts";
import { uuidv7 } from "../../core/id.ts";
import { dateFromIso } from "../../core/iso-date.ts";
import type { PluginContext } from "../../core/plugin.ts";
import { type AnyResourceHooks, FILE_RECORD_FIELDS, type HookContext } from "../../kit/index.ts";
import { Dispatcher, type DispatchTarget } from "./dispatcher.ts";
import {
  type ChangeEvent,
  type ChangeOperation,
  type EventSource,
  eventRouter,
  narrowed,
  type RoutedEndpoint,
} from "./event-routing.ts";
import { type EndpointCounts, OutboxStore } from "./outbox-store.ts";
import { webhookEventsTable } from "./outbox-table.ts";
import { checkOptions, type WebhooksOptions } from "./webhook-options.ts";

/** One endpoint's queue, as `app.webhooks.status()` and `crudkit webhooks status` show it. */
export interface WebhookStatus extends EndpointCounts {
  endpoint: string;
}

/** The webhooks of a running app, for server code and the CLI. */
export interface WebhooksControl {
  /** Pending (of those, failing), delivered and dead events per endpoint. */
  status(): Promise<WebhookStatus[]>;
  /** Sends again the delivered and dead events of `endpoint` created at or after `since`; returns how many. */
  replay(options: { endpoint: string; since: Date | string }): Promise<number>;
  /** Sends what is due now and waits until nothing is. */
  flush(): Promise<void>;
}

const HOUR = 60 * 60 * 1000;

/** Uploads (the upload() plugin) are changes too: their records are the files' (FileRecord). */
const UPLOADED_FILE_EVENTS: EventSource = { name: "uploaded_file", fields: FILE_RECORD_FIELDS };

/** The backlog gauge counts this many events at most (a count over a huge backlog is slow). */
const BACKLOG_GAUGE_CAP = 100_000;

/**
 * Signed webhooks from a transactional outbox: an event is stored with its change, in its
 * transaction, and delivered at least once (the `webhook-id` stays the same on every retry).
 *
 * @example
 * webhooks({
 *   endpoints: [{ id: "billing", url: "https://billing.example.com/hooks", secret: process.env.BILLING_SECRET!, events: ["order.*"] }],
 * })
 */
export function webhooks(options: WebhooksOptions) {
  const settings = checkOptions(options);
  const { endpoints, concurrency } = settings;
  const agents = {
    http: new http.Agent({ keepAlive: true, maxSockets: concurrency }),
    https: new https.Agent({ keepAlive: true, maxSockets: concurrency }),
  };

  let store: OutboxStore | undefined;
  let dispatcher: Dispatcher | undefined;
  let route: ((resource: string, operation: ChangeOperation) => readonly RoutedEndpoint[]) | undefined;
  let pruner: NodeJS.Timeout | undefined;

  type Change = Omit<ChangeEvent, "resource" | "userId">;
  const enqueue = (ctx: HookContext, change: Change) =>
    enqueueChange(store!, route!(ctx.resource, change.operation), ctx, change);

  const hooks: AnyResourceHooks = {
    afterCreate: (ctx) => enqueue(ctx, { operation: "create", id: idOf(ctx.record), record: ctx.record }),
    afterUpdate: (ctx) =>
      enqueue(ctx, { operation: "update", id: ctx.id, record: ctx.record, previous: ctx.previous }),
    afterDelete: (ctx) => enqueue(ctx, { operation: "delete", id: ctx.id, record: ctx.previous }),
    // Once a change committed, this instance sends its events at once rather than at the next poll.
    afterWriteCommit: () => dispatcher?.wake(),
  };

  const ready = () => {
    if (!store || !dispatcher) throw new Error("webhooks(): the app is not ready yet (await app.ready).");
    return { store, dispatcher };
  };

  const control: WebhooksControl = {
    async status() {
      const counts = await ready().store.counts();
      return endpoints.map(({ id }) => ({
        endpoint: id,
        ...(counts.get(id) ?? { pending: 0, failing: 0, delivered: 0, dead: 0 }),
      }));
    },
    async replay({ endpoint, since }) {
      if (!endpoints.some((e) => e.id === endpoint))
        throw new ConfigError(
          `webhooks: no endpoint "${endpoint}"; the endpoints are ${endpoints.map((e) => e.id).join(", ")}.`,
        );
      // ISO 8601 only: Date() would read "March 7" as a day in 2001.
      const from = since instanceof Date ? since : typeof since === "string" ? dateFromIso(since) : undefined;
      if (!from || Number.isNaN(from.getTime()))
        throw new ConfigError(`webhooks: "${String(since)}" is not a time (an ISO 8601 date or date-time).`);
      const count = await ready().store.replay(endpoint, from);
      dispatcher?.wake();
      return count;
    },
    flush: () => ready().dispatcher.flush(),
  };

  return {
    id: "webhooks" as const,
    tables: [webhookEventsTable],
    hooks,
    ...control,
    init(app: PluginContext) {
      route = eventRouter(endpoints, [...app.resources, UPLOADED_FILE_EVENTS]);
      store = new OutboxStore(app.db, app.profile);
      const targets = new Map<string, DispatchTarget>(
        endpoints.map((e) => [e.id, { url: e.url, headers: e.headers, keys: e.keys }]),
      );
      dispatcher = new Dispatcher({
        store,
        targets,
        retry: settings.retry,
        concurrency,
        pollMs: settings.pollMs,
        timeoutMs: settings.timeoutMs,
        allowPrivateNetworks: settings.allowPrivateNetworks,
        agents,
        log: app.log,
        count: (name, by) => app.telemetry.count(name, by),
        tracing: app.telemetry.tracing,
      });
      app.telemetry.level("webhooks.backlog", () => store!.pendingCount(BACKLOG_GAUGE_CAP));
      // The crudkit CLI loads the app to read or re-queue events, not to send them from the
      // operator's machine: there the dispatcher stays idle (flush() still sends on demand), as
      // it does in an instance told to write events only (`deliver: false`).
      if (settings.deliver && process.env.CRUDKIT_CLI !== "1") dispatcher.start();
      const prune = () =>
        store!
          .prune(new Date(Date.now() - settings.retentionMs))
          .catch((e) => app.log("crudkit: pruning webhook events failed", e));
      pruner = setInterval(prune, HOUR);
      pruner.unref();
    },
    /** Degraded (still ready) while events pile up unsent. */
    async health() {
      if (!store) return "ok";
      const { pending, oldestDue } = await store.backlog(settings.backlogEvents);
      const behind =
        pending >= settings.backlogEvents ||
        (oldestDue !== undefined && Date.now() - oldestDue.getTime() > settings.backlogAgeMs);
      return behind ? "degraded" : "ok";
    },
    async close() {
      clearInterval(pruner);
      await dispatcher?.close();
      agents.http.destroy();
      agents.https.destroy();
    },
  };
}

/** The change's event for each endpoint that listens to it, inserted in the write's transaction. */
async function enqueueChange(
  store: OutboxStore,
  targets: readonly RoutedEndpoint[],
  ctx: HookContext,
  change: Omit<ChangeEvent, "resource" | "userId">,
): Promise<void> {
  if (targets.length === 0) return;
  const createdAt = new Date().toISOString();
  const type = `${ctx.resource}.${change.operation}`;
  for (const target of targets) {
    const data: ChangeEvent = {
      resource: ctx.resource,
      operation: change.operation,
      id: change.id,
      record: narrowed(change.record, target.fields),
      ...(change.previous ? { previous: narrowed(change.previous, target.fields) } : {}),
      userId: ctx.user?.id ?? null,
    };
    // ctx.db is the write's transaction: the event commits, or rolls back, with the change.
    await store.insert(ctx.db, {
      id: uuidv7(),
      endpoint: target.id,
      type,
      recordKey: `${ctx.resource}:${change.id ?? ""}`,
      body: JSON.stringify({ type, timestamp: createdAt, data }),
      createdAt,
    });
  }
}

function idOf(record: Record<string, unknown>): string | null {
  return typeof record.id === "string" ? record.id : null;
}
