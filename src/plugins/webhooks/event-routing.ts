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

/** Checks each pattern's form and resource; the answer lists, per `resource.operation`, its endpoints. */
export function eventRouter(
  endpoints: readonly { id: string; events: readonly string[]; fields: RoutedEndpoint["fields"] }[],
  resources: readonly string[],
): (resource: string, operation: ChangeOperation) => readonly RoutedEndpoint[] {
  const matchers = endpoints.map((endpoint) => ({
    endpoint: { id: endpoint.id, fields: endpoint.fields },
    patterns: endpoint.events.map((event) => parsePattern(endpoint.id, event, resources)),
  }));
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
