// The example API: the spec's `product` resource, every operation behind the X-API-Key header,
// with file uploads, an audit log of every write and a cache of reads; and `order`, which shows
// row and field rules: each user sees only her own orders, and only admins see what one cost;
// and `review`, which references a product (`expand=product`, `expand=reviews` on a product) and
// goes when its product does. A product's `image` is an uploaded file the product owns.

import {
  apiKey,
  createResource,
  crudkit,
  type DatabaseOptions,
  fileRef,
  jsonLogger,
  ownedBy,
  type RedisPublisher,
  type RedisSubscriber,
  redisBus,
  references,
  withId,
} from "crudkit-api";
import {
  audit,
  cache,
  type IdempotencyRedis,
  idempotency,
  metrics,
  type RateLimitRedis,
  type RedisLike,
  rateLimit,
  redisIdempotencyStore,
  redisRateLimitStore,
  redisStore,
  upload,
  webhooks,
} from "crudkit-api/plugins";
import { z } from "zod";

const signedIn = ({ user }: { user: unknown }) => user !== null;

export const product = createResource({
  name: "product",
  schema: withId({
    name: z.string().min(1),
    price: z.number().min(0),
    status: z.enum(["active", "inactive", "draft"]).default("draft"),
    createdAt: z.date().default(() => new Date()),
    updatedAt: z.date().default(() => new Date()),
    /** An uploaded image (its id); replaced or deleted with the product, the old file goes. */
    image: fileRef({ mimeTypes: ["image/*"], maxSize: 5 * 1024 * 1024 }).optional(),
  }),
  searchable: ["name"],
  // A status filter newest first, and a sort by price, walk an index (each ends in id).
  indexes: [["status", "createdAt"], "price"],
  access: {
    create: ({ user }) => user !== null,
    read: ({ user }) => user !== null,
    update: ({ user }) => user !== null,
    delete: ({ user }) => user !== null,
    list: ({ user }) => user !== null,
  },
});

const isAdmin = ({ user }: { user: { roles?: readonly string[] } | null }) =>
  user?.roles?.includes("admin") === true;

/** Orders belong to whoever creates them; admins see and change every order, and its cost. */
export const order = createResource({
  name: "order",
  schema: withId({
    /** Filled in from the caller on create (`ownedBy`). */
    ownerId: z.string().max(255).optional(),
    item: z.string().min(1).max(200),
    quantity: z.number().int().min(1),
    status: z.enum(["open", "paid", "shipped"]).default("open"),
    /** What the order cost us: admins only. */
    cost: z.number().min(0).optional(),
  }),
  searchable: ["item"],
  indexes: [["ownerId", "status"]],
  access: {
    ...ownedBy("ownerId", { bypass: (user) => isAdmin({ user }) }),
    fields: { cost: { read: isAdmin, write: isAdmin } },
  },
});

/** Reviews of a product: anyone signed in reads them; each author changes only her own. */
export const review = createResource({
  name: "review",
  schema: withId({
    /** Deleting the product deletes its reviews (each one audited). */
    productId: references(product, { onDelete: "cascade", reverse: { limit: 10 } }),
    /** Filled in from the caller on create (`ownedBy`). */
    authorId: z.string().max(255).optional(),
    rating: z.number().int().min(1).max(5),
    body: z.string().max(2000).optional(),
  }),
  access: {
    ...ownedBy("authorId", { bypass: (user) => isAdmin({ user }) }),
    read: signedIn,
    list: signedIn,
  },
});

export interface ExampleOptions {
  database: DatabaseOptions;
  /** Where uploaded files go (served by the host under /uploads if it wants). */
  uploadDir: string;
  /** The admin's key, sent in X-API-Key. */
  apiKey: string;
  /** A key for a user without roles: she sees only her own orders, never their cost. */
  userApiKey?: string;
  /** Cache reads and lists in memory. @default true */
  cache?: boolean;
  /** Record every write in the audit log. @default true */
  audit?: boolean;
  /** A weak ETag on every page of records, and 304 for an unchanged one. @default true */
  listETags?: boolean;
  /**
   * A line per request on stderr, JSON or `pretty` (for reading in a terminal); errors go there
   * too. `npm start` turns it on. @default false
   */
  requestLogs?: false | "json" | "pretty";
  /**
   * Live changes at /api/<plural>/events (Server-Sent Events), and how many streams one user or
   * one address may hold (crudkit's defaults, 5 and 20, unless given). @default true
   */
  realtime?: boolean | { maxStreamsPerUser?: number; maxStreamsPerAddress?: number };
  /** Where uploads whose content comes before their name wait. @default the upload plugin's */
  spoolDir?: string;
  /**
   * POST every change there, signed with `secret` (Standard Webhooks); `deliver: false` only
   * writes the events, for a worker instance to send. @default none
   */
  webhook?: { url: string; secret: string; deliver?: boolean };
  /**
   * Prometheus metrics at /api/metrics, for the admin's key or `token` (a scraper's, sent as
   * `Authorization: Bearer`). `npm start` turns them on. @default false
   */
  metrics?: false | { token?: string | undefined };
  /** Spans for an OpenTelemetry SDK, when the process registers one. @default true */
  tracing?: boolean;
  /**
   * Redis, for several instances: the read cache, idempotency keys, rate limits and realtime
   * events are shared through it (`subscriber` is a second connection, for the events). @default none
   */
  redis?: {
    client: SharedRedis;
    subscriber: RedisSubscriber;
    /** Before every key and the events' channel, for apps that share one Redis. @default "crudkit:" */
    prefix?: string;
  };
  /**
   * Requests each caller but the admin may make per minute, per operation (429 past it; counted
   * across instances with Redis). @default no limit
   */
  rateLimit?: number;
}

/** What the example asks of a Redis client (ioredis's `Redis` is one). */
type SharedRedis = RedisLike & IdempotencyRedis & RateLimitRedis & RedisPublisher;

export function createExampleApp(options: ExampleOptions) {
  const { redis } = options;
  const prefix = redis?.prefix ?? "crudkit:";
  return crudkit({
    database: options.database,
    autoMigrate: true,
    resources: [product, order, review],
    // Pages of records carry a weak ETag, and a client that sends it back gets 304 while the page
    // is unchanged. Off in crudkit by default, since hashing every page costs list throughput; on
    // here to show it.
    listETags: options.listETags !== false,
    // One line per request on stderr, written without ever blocking a request (LOG_FORMAT=pretty
    // in server.ts for a terminal); errors go to the same logger.
    ...(options.requestLogs
      ? { requestLogs: true, logger: jsonLogger({ pretty: options.requestLogs === "pretty" }) }
      : {}),
    tracing: options.tracing !== false,
    // The API reference at /api/docs, from the OpenAPI document at /api/openapi.json.
    docs: true,
    admin: { title: "Example shop admin" },
    // Live changes: GET /api/products/events, or client.product.subscribe(…).
    realtime: realtimeOf(options),
    plugins: [
      apiKey({
        keys: {
          [options.apiKey]: { id: "example-user", roles: ["admin"] },
          ...(options.userApiKey ? { [options.userApiKey]: { id: "example-customer", roles: [] } } : {}),
        },
      }),
      upload({
        uploadDir: options.uploadDir,
        spoolDir: options.spoolDir,
        baseUrl: "/uploads",
        maxFileSize: Number(process.env.MAX_FILE_SIZE ?? 10 * 1024 * 1024),
        access: { upload: signedIn, read: signedIn, download: signedIn, delete: signedIn, list: signedIn },
      }),
      ...(options.audit === false ? [] : [audit({ access: { read: isAdmin } })]),
      ...(options.cache === false
        ? []
        : [
            cache({
              ttl: 60,
              access: { stats: isAdmin },
              ...(redis ? { store: redisStore(redis.client, { prefix: `${prefix}cache:` }) } : {}),
            }),
          ]),
      // Creates and uploads that carry an Idempotency-Key are safe to retry (on any instance, with Redis).
      idempotency(
        redis ? { store: redisIdempotencyStore(redis.client, { prefix: `${prefix}idempotency:` }) } : {},
      ),
      ...(options.rateLimit
        ? [
            rateLimit({
              window: 60,
              max: options.rateLimit,
              // The admin's key is not limited.
              by: (ctx, user) =>
                user?.roles?.includes("admin") ? null : (user?.id ?? ctx.ip ?? "anonymous"),
              ...(redis ? { store: redisRateLimitStore(redis.client, { prefix: `${prefix}rate:` }) } : {}),
            }),
          ]
        : []),
      // Prometheus metrics for the admin's key, or a scraper's token (METRICS_TOKEN in server.ts).
      ...(options.metrics ? [metrics({ tokens: options.metrics.token ? [options.metrics.token] : [] })] : []),
      ...(options.webhook
        ? [
            webhooks({
              endpoints: [
                { id: "example", url: options.webhook.url, secret: options.webhook.secret, events: ["*"] },
              ],
              deliver: options.webhook.deliver ?? true,
              // The example's receiver may run on this machine (a development tunnel, a test).
              allowPrivateNetworks: true,
            }),
          ]
        : []),
    ],
  });
}

export type ExampleApp = ReturnType<typeof createExampleApp>;

/** Realtime as asked, its events shared through Redis when there is one. */
function realtimeOf(options: ExampleOptions) {
  if (options.realtime === false) return false;
  const limits = options.realtime === undefined || options.realtime === true ? {} : options.realtime;
  const { redis } = options;
  return redis
    ? { ...limits, bus: redisBus({ publisher: redis.client, subscriber: redis.subscriber }) }
    : limits;
}
