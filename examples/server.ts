// `npm start`: serves the example API on embedded SQLite.
//   PORT (3000), HOST (127.0.0.1), API_KEY (the admin's; a development key when unset),
//   USER_API_KEY (a user without roles; a development key when unset), DATA_DIR (./data),
//   DATABASE_URL (postgres://… or mysql://… instead of SQLite in DATA_DIR), DIRECT_DATABASE_URL
//   (PostgreSQL behind PgBouncer in transaction mode: a URL straight to the server),
//   DATABASE_REPLICA_URLS (read replicas of DATABASE_URL, comma-separated), MAX_FILE_SIZE (10485760),
//   CACHE (on; `off` serves every read from the database), AUDIT (on; `off` records no audit log),
//   REALTIME (on; `off` serves no event streams), MAX_CONNECTIONS (serve()'s default, 1024),
//   COMPRESS (on; `off` sends every answer uncompressed, as serve() does by default),
//   LIST_ETAGS (on; `off` puts no ETag on pages of records, as crudkit does by default),
//   REQUEST_LOGS (on; `off` writes no line per request, as crudkit does by default) and
//   LOG_FORMAT (json; `pretty` for one readable line per request in a terminal),
//   METRICS (on; `off` serves no /api/metrics) and METRICS_TOKEN (a scraper's bearer token, 16
//   characters or more; without one only the admin's key reads the metrics),
//   TRACING (on: spans for an OpenTelemetry SDK the process registers; `off` starts none),
//   WAIT_FOR_DATABASE (on; `off` exits when the database cannot be reached at startup),
//   MAX_STREAMS_PER_USER (5) and MAX_STREAMS_PER_ADDRESS (20): event streams one user or address holds,
//   WEBHOOK_URL and WEBHOOK_SECRET (whsec_…): POST every change there, signed (off when unset);
//   WEBHOOK_DELIVER (on; `off` writes the events only, for another instance, a worker, to send),
//   REDIS_URL (for several instances: the cache, idempotency keys, rate limits and realtime events
//   go through it; REDIS_PREFIX, crudkit:, before its keys and channel), RATE_LIMIT (requests per
//   minute each caller but the admin may make per operation; no limit when unset) and UPLOAD_DIR (DATA_DIR/uploads; one directory the instances share)

import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { databaseFromUrl } from "crudkit-api";
import { serve } from "crudkit-api/node";
import { createExampleApp } from "./app.ts";
import { withSite } from "./site.ts";

const port = Number(process.env.PORT ?? 3000);
const hostname = process.env.HOST ?? "127.0.0.1";
const dataDir = process.env.DATA_DIR ?? "./data";
let key = process.env.API_KEY;
if (!key) {
  key = `dev-${randomBytes(12).toString("hex")}`;
  console.warn(
    "warning: API_KEY is not set; using a development key for this run only. Set API_KEY in production.",
  );
}

const userKey = process.env.USER_API_KEY || `dev-user-${randomBytes(12).toString("hex")}`;

const databaseUrl = process.env.DATABASE_URL || `file:${join(dataDir, "app.db")}`;
// Instances that share one database share their files too: UPLOAD_DIR (or S3, in an app of yours).
const uploadDir = process.env.UPLOAD_DIR || join(dataDir, "uploads");
// Several instances share the cache, idempotency keys, rate limits and realtime events through Redis.
const redis = process.env.REDIS_URL ? await redisClients(process.env.REDIS_URL) : undefined;
const app = startupStep(() =>
  createExampleApp({
    database: databaseFromUrl(databaseUrl, {
      directUrl: process.env.DIRECT_DATABASE_URL,
      // Read replicas, comma-separated: reads go to them, each caller still reads her own writes.
      replicas: process.env.DATABASE_REPLICA_URLS?.split(",").filter(Boolean),
    }),
    apiKey: key,
    userApiKey: userKey,
    uploadDir,
    spoolDir: join(dataDir, "spool"),
    cache: process.env.CACHE !== "off",
    audit: process.env.AUDIT !== "off",
    listETags: process.env.LIST_ETAGS !== "off",
    requestLogs:
      process.env.REQUEST_LOGS === "off" ? false : process.env.LOG_FORMAT === "pretty" ? "pretty" : "json",
    metrics: process.env.METRICS === "off" ? false : { token: process.env.METRICS_TOKEN || undefined },
    tracing: process.env.TRACING !== "off",
    webhook: process.env.WEBHOOK_URL
      ? {
          url: process.env.WEBHOOK_URL,
          secret: process.env.WEBHOOK_SECRET ?? "",
          deliver: process.env.WEBHOOK_DELIVER !== "off",
        }
      : undefined,
    redis,
    rateLimit: Number(process.env.RATE_LIMIT) || undefined,
    realtime:
      process.env.REALTIME === "off"
        ? false
        : {
            maxStreamsPerUser: Number(process.env.MAX_STREAMS_PER_USER) || undefined,
            maxStreamsPerAddress: Number(process.env.MAX_STREAMS_PER_ADDRESS) || undefined,
          },
  }),
);
const maxConnections = Number(process.env.MAX_CONNECTIONS) || undefined;
// While the database is unreachable the server answers 503 and retries (WAIT_FOR_DATABASE=off
// exits instead); a startup that fails otherwise, a migration or a bad URL, exits with one line.
const running = await serve(await withSite(app, uploadDir), {
  port,
  hostname,
  maxConnections,
  waitForDatabase: process.env.WAIT_FOR_DATABASE !== "off",
  // Brotli or gzip for JSON and text of 1 KiB or more. Off in serve() by default (it costs CPU on
  // every answer); on here, as nothing in front of the example compresses.
  compress: process.env.COMPRESS !== "off",
}).catch(exitWith);

console.log(`crudkit example API listening on ${running.url}/api`);
console.log(`API key: ${key}`);
console.log(`User API key (sees only her own orders): ${userKey}`);
console.log(`Web page (uses crudkit-api/client): ${running.url}/`);
console.log(`Admin (sign in with an API key above): ${running.url}/api/admin`);
console.log("Try:");
console.log(
  `  curl -s -X POST ${running.url}/api/product -H 'content-type: application/json' -H 'x-api-key: ${key}' -d '{"name":"Hat","price":5}'`,
);

// Stop accepting, let in-flight requests finish (10 s at most), then close the plugins and the database.
const stop = async () => {
  await running.close();
  process.exit(0);
};
process.on("SIGINT", stop);
process.on("SIGTERM", stop);

/** A startup mistake (a bad DATABASE_URL, a failed migration) as one line and a non-zero exit. */
function exitWith(error: unknown): never {
  console.error(error instanceof Error ? error.message : String(error));
  process.exit(1);
}

/** Two connections (commands, and the events' subscription); ioredis is loaded only when asked. */
async function redisClients(url: string) {
  const { Redis } = await import("ioredis");
  return {
    client: new Redis(url),
    subscriber: new Redis(url),
    prefix: process.env.REDIS_PREFIX || undefined,
  };
}

function startupStep<T>(step: () => T): T {
  try {
    return step();
  } catch (error) {
    return exitWith(error);
  }
}
