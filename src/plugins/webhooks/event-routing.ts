// Which endpoints hear of a change, and what each is sent. Endpoints name events as
// `<resource>.<operation>` with `*` for either part (`product.*`, `*.delete`, `*`), checked when
// the app starts against the resources it has.

import { ConfigError } from "../../core/errors.ts";

export type ChangeOperation = "create" | "update" | "delete";

const OPERATIONS: readonly string[] = ["create", "update", "delete"];

export interface RoutedEndpoint {
  readonly id: string;
  /** The fields sent, or undefined for the whole record as stored. */
  readonly fields: ReadonlySet<string> | undefined;
}

/** A change as an endpoint receives it, the `data` of the Standard Webhooks payload. */
export interface ChangeEvent {
  resource: string;
  operation: ChangeOperation;
  id: string | null;
  /** The record after the change; for a delete, the record that was deleted. */
  record: Record<string, unknown>;
  /** For an update: the record before it. */
  previous?: Record<string, unknown>;
  /** Who made the change (null for the server, or a caller with no identity). */
  userId: string | null;
}

/** A resource whose changes endpoints may hear of, with the fields of its records. */
export interface EventSource {
  readonly name: string;
  readonly fields: readonly string[];
}

/**
 * Checks each pattern's form and resource, and that each field an endpoint narrows to is a field
 * of a resource its events name (a misspelt one would send every event without it, silently);
 * the answer lists, per `resource.operation`, its endpoints.
 */
export function eventRouter(
  endpoints: readonly { id: string; events: readonly string[]; fields: RoutedEndpoint["fields"] }[],
  sources: readonly EventSource[],
): (resource: string, operation: ChangeOperation) => readonly RoutedEndpoint[] {
  const names = sources.map((source) => source.name);
  const matchers = endpoints.map((endpoint) => {
    const patterns = endpoint.events.map((event) => parsePattern(endpoint.id, event, names));
    if (endpoint.fields) checkFields(endpoint.id, endpoint.fields, patterns, sources);
    return { endpoint: { id: endpoint.id, fields: endpoint.fields }, patterns };
  });
  const routes = new Map<string, readonly RoutedEndpoint[]>();
  return (resource, operation) => {
    const key = `${resource}.${operation}`;
    let found = routes.get(key);
    if (!found) {
      found = matchers
        .filter(({ patterns }) =>
          patterns.some(([r, o]) => (r === "*" || r === resource) && (o === "*" || o === operation)),
        )
        .map(({ endpoint }) => endpoint);
      routes.set(key, found);
    }
    return found;
  };
}

function checkFields(
  endpoint: string,
  fields: ReadonlySet<string>,
  patterns: readonly [string, string][],
  sources: readonly EventSource[],
): void {
  const named = patterns.some(([resource]) => resource === "*")
    ? sources
    : sources.filter((source) => patterns.some(([resource]) => resource === source.name));
  const known = new Set(named.flatMap((source) => source.fields));
  for (const field of fields)
    if (!known.has(field))
      throw new ConfigError(
        `webhooks(): endpoint "${endpoint}": "${field}" is a field of none of the resources its events name (${named.map((source) => source.name).join(", ")}); their fields are ${[...known].join(", ")}.`,
      );
}

/** `[resource, operation]` of a pattern; its resource is checked when `resources` are known (at init). */
export function parsePattern(
  endpoint: string,
  event: unknown,
  resources?: readonly string[],
): [string, string] {
  const where = `webhooks(): endpoint "${endpoint}"`;
  if (typeof event !== "string")
    throw new ConfigError(`${where}: each event is a string such as "product.create".`);
  if (event === "*") return ["*", "*"];
  const parts = event.split(".");
  const [resource, operation] = parts as [string, string];
  if (parts.length !== 2 || resource === "" || !(operation === "*" || OPERATIONS.includes(operation)))
    throw new ConfigError(
      `${where}: "${event}" is not an event; write <resource>.<create|update|delete>, with * for either part ("product.*", "*.delete").`,
    );
  if (resources && resource !== "*" && !resources.includes(resource))
    throw new ConfigError(
      `${where}: "${event}" names no resource; the resources are ${resources.join(", ")}.`,
    );
  return [resource, operation];
}

/** The record with only `fields`, when the endpoint narrows it. */
export function narrowed(
  record: Record<string, unknown>,
  fields: ReadonlySet<string> | undefined,
): Record<string, unknown> {
  if (!fields) return record;
  const kept: Record<string, unknown> = {};
  for (const key of Object.keys(record)) if (fields.has(key)) kept[key] = record[key];
  return kept;
}
