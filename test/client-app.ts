// The app the client tests talk to, on a real socket: the spec's product, a resource listed
// under an irregular plural, the echo plugin, and API keys.

import { apiKey, createResource, crudkit, withId } from "crudkit-api";
import { audit, cache } from "crudkit-api/plugins";
import { z } from "zod";
import { echoPlugin } from "./echo-plugin.ts";
import { productSchema } from "./fixtures.ts";
import { tempDatabaseUrl } from "./helpers.ts";

export const product = createResource({
  name: "product",
  schema: productSchema,
  searchable: ["name"],
  access: {
    create: ({ user }) => user !== null,
    read: ({ user }) => user !== null,
    update: ({ user }) => user?.roles?.includes("admin") ?? false,
    delete: ({ user }) => user?.roles?.includes("admin") ?? false,
    list: ({ user }) => user !== null,
  },
});

export const person = createResource({
  name: "person",
  schema: withId({ name: z.string(), born: z.date().optional(), tags: z.array(z.string()).default([]) }),
  access: { create: true, read: true, update: true, list: true },
});

export function createClientTestApp() {
  return crudkit({
    database: { provider: "sqlite", url: tempDatabaseUrl() },
    autoMigrate: true,
    resources: [product, person],
    plugins: [
      echoPlugin,
      audit({ access: { read: ({ user }) => user?.roles?.includes("admin") === true } }),
      cache({ access: { stats: ({ user }) => user?.roles?.includes("admin") === true } }),
      apiKey({ keys: { admin: { id: "admin", roles: ["admin"] }, user: { id: "user", roles: [] } } }),
    ],
  });
}

export type ClientTestApp = ReturnType<typeof createClientTestApp>;
