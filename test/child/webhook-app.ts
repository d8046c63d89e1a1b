// Run by webhooks-crash.test.ts: an app with webhooks on the database given, served on a free
// port of 127.0.0.1. Prints `listening <port>` once it serves; the test kills it with SIGKILL.

import { z } from "zod";
import { createResource, crudkit, withId } from "../../src/index.ts";
import { serve } from "../../src/node/index.ts";
import { webhooks } from "../../src/plugins/index.ts";

const [provider, url, receiverUrl, secret, directUrl] = process.argv.slice(2) as [
  "sqlite" | "postgres" | "mysql",
  string,
  string,
  string,
  string | undefined,
];
const item = createResource({
  name: "item",
  schema: withId({ name: z.string() }),
  access: { create: true, read: true, update: true, delete: true, list: true },
});
const app = crudkit({
  // Through PgBouncer, with the direct URL for the migration lock.
  database: (directUrl ? { provider, url, directUrl } : { provider, url }) as {
    provider: "postgres";
    url: string;
  },
  autoMigrate: true,
  resources: [item],
  log: () => {},
  plugins: [
    webhooks({
      endpoints: [{ id: "main", url: receiverUrl, secret, events: ["*"] }],
      allowPrivateNetworks: true,
      timeout: 1,
      pollInterval: 0.2,
      retry: { attempts: 50, firstDelay: 0.1, maxDelay: 0.5 },
    }),
  ],
});
const server = await serve(app, { port: 0, hostname: "127.0.0.1", log: () => {} });
console.log(`listening ${new URL(server.url).port}`);
