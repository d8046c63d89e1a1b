// Change events through PostgreSQL LISTEN/NOTIFY: no other service, for apps on PostgreSQL that
// run as several instances. One connection of its own listens and notifies. A NOTIFY payload holds
// under 8000 bytes: a larger event travels without its record, and receivers read it again.

import { createRequire } from "node:module";
import { type ChangeEvent, type RealtimeBus, readEvent } from "./bus.ts";

/** What of `pg.Client` is used. */
interface ListeningClient {
  connect(): Promise<unknown>;
  query(text: string, values?: unknown[]): Promise<unknown>;
  on(event: "notification", listener: (message: { channel: string; payload?: string }) => void): unknown;
  on(event: "error", listener: (error: unknown) => void): unknown;
  end(): Promise<unknown>;
}

const MAX_PAYLOAD = 7900;

/**
 * Events between instances through PostgreSQL LISTEN/NOTIFY, on a connection of their own.
 *
 * @example
 * realtime: { bus: postgresBus({ url: process.env.DATABASE_URL! }) }
 */
export function postgresBus(options: {
  url: string;
  /** @default "crudkit_events" */
  channel?: string;
  log?: (message: string, error: unknown) => void;
}): RealtimeBus {
  const channel = options.channel ?? "crudkit_events";
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(channel))
    throw new Error("postgresBus(): channel must be a lower-case SQL identifier.");
  let client: ListeningClient | undefined;
  return {
    kind: "postgres",
    async publish(event: ChangeEvent) {
      if (!client) throw new Error("postgresBus(): not started.");
      let payload = JSON.stringify(event);
      if (Buffer.byteLength(payload) > MAX_PAYLOAD) payload = JSON.stringify({ ...event, record: undefined });
      await client.query("select pg_notify($1, $2)", [channel, payload]);
    },
    async start(deliver) {
      const { Client } = createRequire(import.meta.url)("pg") as {
        Client: new (options: { connectionString: string }) => ListeningClient;
      };
      client = new Client({ connectionString: options.url });
      client.on("error", (error) =>
        options.log?.("crudkit: the realtime PostgreSQL connection failed", error),
      );
      client.on("notification", (message) => {
        if (message.channel !== channel || !message.payload) return;
        const event = readEvent(message.payload);
        if (event) deliver(event);
      });
      await client.connect();
      await client.query(`listen ${channel}`);
    },
    async close() {
      await client?.end().catch(() => {});
      client = undefined;
    },
  };
}
