// webhooks()'s options: their types, and their check when the app is built (a misspelt key, a
// URL to a private address, a secret that is not `whsec_…`, an event naming nothing: a ConfigError).

import { validateHeaderValue } from "node:http";
import { ConfigError } from "../../core/errors.ts";
import { checkOptionKeys, optionKeys } from "../../core/option-keys.ts";
import { checkEndpointUrl } from "./address-guard.ts";
import { parsePattern } from "./event-routing.ts";
import { type RetryOptions, type RetrySchedule, retrySchedule } from "./retry-schedule.ts";
import { secretKey } from "./signature.ts";

export interface WebhookEndpoint {
  /** A name of your choice, stable across restarts: events are queued per endpoint id. */
  id: string;
  /** Where events are POSTed: http or https. */
  url: string;
  /**
   * `whsec_` and 24 to 64 random bytes in base64, or several (the new one first during a rotation):
   * each request carries a signature per secret.
   */
  secret: string | readonly string[];
  /** `product.create`, `product.*`, `*.delete`, or `*` for every change. */
  events: readonly string[];
  /**
   * Only these fields of the record are sent; each must be a field of a resource `events` names
   * (checked when the app starts). @default the whole record as stored
   */
  fields?: readonly string[];
  /** Headers added to every request (an `Authorization` the receiver wants, say). */
  headers?: Readonly<Record<string, string>>;
}

export interface WebhooksOptions {
  endpoints: readonly WebhookEndpoint[];
  /** Lets endpoints be private, loopback or link-local addresses (a receiver in your own network). @default false */
  allowPrivateNetworks?: boolean;
  /** How failed deliveries are retried. @default 12 attempts, 5 s to 6 h apart: about 23 hours */
  retry?: RetryOptions;
  /** Seconds a receiver has to answer. @default 10 */
  timeout?: number;
  /** Events sent at once by each instance. @default 32 */
  concurrency?: number;
  /** Seconds between looks for events written elsewhere (other instances, before a restart). @default 1 */
  pollInterval?: number;
  /** Days sent and dead events are kept for `replay`. @default 7 */
  retentionDays?: number;
  /**
   * `GET /health` says `degraded` (and stays 200) while this many events wait unsent: a receiver
   * that is down makes them pile up. @default 1000
   */
  backlogEvents?: number;
  /** …or while an event has been due this many seconds and not sent (dispatchers behind). @default 300 */
  backlogAge?: number;
  /**
   * Whether this instance sends events. `false` makes it write them only (in its writes'
   * transactions, as always), for a topology where API instances answer requests and a worker
   * instance of the same app, with `deliver: true`, sends what they all wrote. @default true
   */
  deliver?: boolean;
}

const OPTION_KEYS = optionKeys<WebhooksOptions>()(
  "endpoints allowPrivateNetworks retry timeout concurrency pollInterval retentionDays backlogEvents backlogAge deliver",
);
const ENDPOINT_KEYS = optionKeys<WebhookEndpoint>()("id url secret events fields headers");
/** The options, checked, in the units the code uses. */
export interface WebhookSettings {
  endpoints: CheckedEndpoint[];
  allowPrivateNetworks: boolean;
  retry: RetrySchedule;
  timeoutMs: number;
  pollMs: number;
  retentionMs: number;
  backlogAgeMs: number;
  backlogEvents: number;
  concurrency: number;
  deliver: boolean;
}

export function checkOptions(options: WebhooksOptions): WebhookSettings {
  checkOptionKeys(options, OPTION_KEYS, "webhooks()");
  const allowPrivateNetworks = options.allowPrivateNetworks === true;
  return {
    endpoints: checkEndpoints(options.endpoints, allowPrivateNetworks),
    allowPrivateNetworks,
    retry: retrySchedule(options.retry),
    timeoutMs: seconds(options.timeout ?? 10, "timeout", TIMER_SECONDS),
    pollMs: seconds(options.pollInterval ?? 1, "pollInterval", TIMER_SECONDS),
    retentionMs: seconds(options.retentionDays ?? 7, "retentionDays") * 24 * 60 * 60,
    backlogAgeMs: seconds(options.backlogAge ?? 300, "backlogAge"),
    backlogEvents: whole(options.backlogEvents ?? 1000, "backlogEvents"),
    concurrency: whole(options.concurrency ?? 32, "concurrency"),
    deliver: flag(options.deliver ?? true, "deliver"),
  };
}

export interface CheckedEndpoint {
  id: string;
  url: URL;
  keys: readonly Buffer[];
  events: readonly string[];
  fields: ReadonlySet<string> | undefined;
  headers: Readonly<Record<string, string>>;
}

function checkEndpoints(list: unknown, allowPrivate: boolean): CheckedEndpoint[] {
  if (!Array.isArray(list) || list.length === 0)
    throw new ConfigError("webhooks(): endpoints must list at least one endpoint.");
  const seen = new Set<string>();
  return list.map((endpoint: WebhookEndpoint) => {
    if (typeof endpoint !== "object" || endpoint === null)
      throw new ConfigError("webhooks(): each endpoint is an object.");
    const id = endpoint.id;
    if (typeof id !== "string" || !/^[A-Za-z0-9._-]{1,64}$/.test(id))
      throw new ConfigError(
        "webhooks(): each endpoint needs an id of 1 to 64 letters, digits, '.', '_' or '-'.",
      );
    if (seen.has(id)) throw new ConfigError(`webhooks(): two endpoints have the id "${id}".`);
    seen.add(id);
    checkOptionKeys(endpoint, ENDPOINT_KEYS, `webhooks(): endpoint "${id}"`);
    const secrets = typeof endpoint.secret === "string" ? [endpoint.secret] : endpoint.secret;
    if (!Array.isArray(secrets) || secrets.length === 0)
      throw new ConfigError(`webhooks(): endpoint "${id}" needs a secret.`);
    if (!Array.isArray(endpoint.events) || endpoint.events.length === 0)
      throw new ConfigError(`webhooks(): endpoint "${id}" needs events, such as ["product.*"].`);
    for (const event of endpoint.events) parsePattern(id, event);
    if (
      endpoint.fields !== undefined &&
      (!Array.isArray(endpoint.fields) || endpoint.fields.some((f) => typeof f !== "string"))
    )
      throw new ConfigError(`webhooks(): endpoint "${id}": fields is a list of field names.`);
    return {
      id,
      url: checkEndpointUrl(id, endpoint.url, allowPrivate),
      keys: secrets.map((secret) => secretKey(id, secret)),
      events: endpoint.events,
      fields: endpoint.fields ? new Set(endpoint.fields) : undefined,
      headers: checkHeaders(id, endpoint.headers),
    };
  });
}

function checkHeaders(id: string, headers: unknown): Readonly<Record<string, string>> {
  if (headers === undefined) return {};
  if (typeof headers !== "object" || headers === null || Array.isArray(headers))
    throw new ConfigError(`webhooks(): endpoint "${id}": headers is an object of names and values.`);
  const checked: Record<string, string> = Object.create(null);
  for (const [name, value] of Object.entries(headers)) {
    if (!/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/.test(name) || typeof value !== "string" || !sendable(name, value))
      throw new ConfigError(
        `webhooks(): endpoint "${id}": the header "${name}" is not a valid header (its value: tabs, printable ASCII and Latin-1 only).`,
      );
    if (/^(webhook-|content-(type|length)$|host$)/i.test(name))
      throw new ConfigError(`webhooks(): endpoint "${id}": the header "${name}" is set by crudkit.`);
    checked[name] = value;
  }
  return checked;
}

/** Whether Node sends the header as it is: checked now, not on every delivery it would fail. */
function sendable(name: string, value: string): boolean {
  try {
    validateHeaderValue(name, value);
    return true;
  } catch {
    return false;
  }
}

/** The longest a Node timer waits (2^31 - 1 ms): a longer one fires after 1 ms. */
const TIMER_SECONDS = 2_147_483;

function seconds(value: unknown, name: string, max = Number.POSITIVE_INFINITY): number {
  if (typeof value !== "number" || !(value > 0) || !Number.isFinite(value))
    throw new ConfigError(`webhooks(): ${name} must be a positive number.`);
  if (value > max) throw new ConfigError(`webhooks(): ${name} must be at most ${max} seconds.`);
  return value * 1000;
}

function whole(value: unknown, name: string): number {
  if (typeof value !== "number" || !Number.isInteger(value) || value < 1)
    throw new ConfigError(`webhooks(): ${name} must be a whole number of at least 1.`);
  return value;
}

function flag(value: unknown, name: string): boolean {
  if (typeof value !== "boolean") throw new ConfigError(`webhooks(): ${name} must be true or false.`);
  return value;
}
