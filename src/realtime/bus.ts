// How change events travel between the instances of an app: in memory for one instance, Redis
// pub/sub or PostgreSQL LISTEN/NOTIFY for many. Every instance, the publishing one included,
// receives each event from the bus, so all of them see events in the same order.

export type ChangeType = "create" | "update" | "delete";

/** One committed change, as the bus carries it (the whole record: each subscriber sees her part). */
export interface ChangeEvent {
  /** Time-ordered and unique: what `Last-Event-ID` names. */
  id: string;
  resource: string;
  type: ChangeType;
  /** The record after a create or update, before a delete; undefined when too large to carry. */
  record: Record<string, unknown> | undefined;
  /** The record's id (also when the record itself could not travel). */
  recordId: string;
}

export interface RealtimeBus {
  readonly kind: string;
  /**
   * Whether the bus holds its session (postgresBus's LISTEN) on the server, port and database
   * `url` names: crudkit refuses a bus on the app's pooler in transaction mode (its
   * `database.url` given with a `directUrl`).
   */
  listensThrough?(url: string): boolean;
  /** Sends an event to every instance, this one included. */
  publish(event: ChangeEvent): Promise<void>;
  /** Starts receiving: `deliver` hears every event, from any instance. */
  start(deliver: (event: ChangeEvent) => void): Promise<void>;
  close(): Promise<void>;
}

/**
 * Events within this process: for an app that runs as one instance.
 *
 * @example
 * crudkit({ database, resources, realtime: { bus: memoryBus() } })
 */
export function memoryBus(): RealtimeBus {
  let deliver: ((event: ChangeEvent) => void) | undefined;
  return {
    kind: "memory",
    async publish(event) {
      deliver?.(event);
    },
    async start(listener) {
      deliver = listener;
    },
    async close() {
      deliver = undefined;
    },
  };
}

/** An event as text on the wire between instances; a malformed one is dropped, never thrown. */
export function readEvent(text: string): ChangeEvent | undefined {
  try {
    const event = JSON.parse(text) as ChangeEvent;
    if (typeof event?.id !== "string" || typeof event.resource !== "string") return undefined;
    if (event.type !== "create" && event.type !== "update" && event.type !== "delete") return undefined;
    if (typeof event.recordId !== "string") return undefined;
    return event;
  } catch {
    return undefined;
  }
}
