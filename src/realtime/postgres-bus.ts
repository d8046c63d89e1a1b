// Change events through PostgreSQL LISTEN/NOTIFY: no other service, for apps on PostgreSQL that
// run as several instances. One connection of its own listens and notifies. A NOTIFY payload holds
// under 8000 bytes: a larger event travels without its record, and receivers read it again.
// When that connection is lost (the server restarted, an operator ended it), the bus connects and
// listens again, with a backoff; events published meanwhile fail as the database being away does.

import { createRequire } from "node:module";
import { type ChangeEvent, type RealtimeBus, readEvent } from "./bus.ts";

/** What of `pg.Client` is used. */
interface ListeningClient {
  connect(): Promise<unknown>;
  query(text: string, values?: unknown[]): Promise<unknown>;
  on(event: "notification", listener: (message: { channel: string; payload?: string }) => void): unknown;
  on(event: "error", listener: (error: unknown) => void): unknown;
  on(event: "end", listener: () => void): unknown;
  end(): Promise<unknown>;
}

/** Waits between attempts to listen again: from 0.5 s, doubling, at most 10 s. */
const FIRST_WAIT_MS = 500;
const LONGEST_WAIT_MS = 10_000;

const MAX_PAYLOAD = 7900;

/**
 * Events between instances through PostgreSQL LISTEN/NOTIFY, on a connection of their own. LISTEN
 * needs a session: behind a pooler in transaction mode (PgBouncer), give it the direct URL.
 *
 * @example
 * realtime: { bus: postgresBus({ url: process.env.DIRECT_DATABASE_URL ?? process.env.DATABASE_URL! }) }
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
  let stopped = true;
  let wait = FIRST_WAIT_MS;
  let timer: NodeJS.Timeout | undefined;
  let listen: () => Promise<void> = async () => {};

  /** The listening connection ended: forget it, and listen again on a new one. */
  const lost = (gone: ListeningClient) => {
    if (client !== gone) return;
    client = undefined;
    gone.end().catch(() => {});
    again();
  };
  const again = () => {
    if (stopped || timer) return;
    timer = setTimeout(() => {
      timer = undefined;
      listen().then(
        () => {
          wait = FIRST_WAIT_MS;
        },
        () => {
          wait = Math.min(wait * 2, LONGEST_WAIT_MS);
          again();
        },
      );
    }, wait);
    timer.unref();
  };

  return {
    kind: "postgres",
    // Compared by place, never kept where the bus can be printed: the URL holds a password.
    listensThrough: (url: string) => samePlace(url, options.url),
    async publish(event: ChangeEvent) {
      if (stopped) throw new Error("postgresBus(): not started.");
      if (!client)
        throw Object.assign(new Error("The realtime PostgreSQL connection is being restored."), {
          code: "ECONNRESET",
        });
      let payload = JSON.stringify(event);
      if (Buffer.byteLength(payload) > MAX_PAYLOAD) payload = JSON.stringify({ ...event, record: undefined });
      await client.query("select pg_notify($1, $2)", [channel, payload]);
    },
    async start(deliver) {
      const { Client } = createRequire(import.meta.url)("pg") as {
        Client: new (options: { connectionString: string }) => ListeningClient;
      };
      stopped = false;
      listen = async () => {
        const next = new Client({ connectionString: options.url });
        next.on("error", (error) => {
          options.log?.("crudkit: the realtime PostgreSQL connection failed", error);
          lost(next);
        });
        next.on("end", () => lost(next));
        next.on("notification", (message) => {
          if (message.channel !== channel || !message.payload) return;
          const event = readEvent(message.payload);
          if (event) deliver(event);
        });
        try {
          await next.connect();
          await next.query(`listen ${channel}`);
        } catch (error) {
          next.end().catch(() => {});
          throw error;
        }
        if (stopped) await next.end().catch(() => {});
        else client = next;
      };
      await listen();
    },
    async close() {
      stopped = true;
      clearTimeout(timer);
      timer = undefined;
      const open = client;
      client = undefined;
      await open?.end().catch(() => {});
    },
  };
}

/** Whether two PostgreSQL URLs name one server, port and database (user, password, options aside). */
function samePlace(a: string, b: string): boolean {
  const place = (url: string) => {
    try {
      const parsed = new URL(url);
      const database = decodeURIComponent(parsed.pathname.slice(1)) || decodeURIComponent(parsed.username);
      return `${parsed.hostname.toLowerCase()}:${parsed.port || "5432"}/${database}`;
    } catch {
      return url;
    }
  };
  return place(a) === place(b);
}
