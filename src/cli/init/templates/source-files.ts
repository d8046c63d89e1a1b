// The project's TypeScript: src/resources.ts, src/app.ts, src/server.ts and crudkit.config.ts.
// Backticks and `${` inside the generated code are escaped (\` and \${).

import { DATABASE_PROFILES, PLUGIN_CODE, type ProjectSpec } from "./spec.ts";

export function resourcesTs(): string {
  return `// The resources: each one is a table and a REST resource (POST /api/task, GET /api/task/:id,
// PATCH, DELETE, GET /api/tasks). Add fields, then restart: autoMigrate adds the columns.

import { createResource, ownedBy, type User, withId } from "crudkit-api";
import { z } from "zod";

/** Admins (the ADMIN_API_KEY's user) act on every record. */
export const isAdmin = (user: User | null) => user?.roles?.includes("admin") === true;

export const task = createResource({
  name: "task",
  schema: withId({
    // Filled in with the caller's user id on create (ownedBy, below).
    ownerId: z.string().max(255).optional(),
    title: z.string().min(1).max(200),
    done: z.boolean().default(false),
    createdAt: z.date().default(() => new Date()),
    updatedAt: z.date().default(() => new Date()),
  }),
  searchable: ["title"],
  // Signed-in users create tasks in their own name and read, list, change and delete only those.
  access: { ...ownedBy("ownerId", { bypass: isAdmin }) },
});

export const resources = [task] as const;
`;
}

export function appTs(spec: ProjectSpec): string {
  const plugins = spec.plugins.map((plugin) => PLUGIN_CODE[plugin]);
  const pluginImport =
    plugins.length > 0
      ? `import { ${plugins
          .map((p) => p.name)
          .sort()
          .join(", ")} } from "crudkit-api/plugins";\n`
      : "";
  const needsAdmin = spec.plugins.includes("audit");
  const calls = ["apiKey({ keys: apiKeys })", ...plugins.map((p) => p.call)];
  return `// The app: the resources (src/resources.ts), the database and the plugins. src/server.ts serves
// it; crudkit.config.ts hands it to \`crudkit generate\` and \`crudkit migrate\`.

${spec.database === "sqlite" ? 'import { mkdirSync } from "node:fs";\n' : ""}import { apiKey, crudkit, databaseFromUrl, type User } from "crudkit-api";
${pluginImport}import { ${needsAdmin ? "isAdmin, " : ""}resources } from "./resources.ts";

export interface AppOptions {
  /** Where the data lives: ${DATABASE_PROFILES[spec.database].exampleUrl} */
  databaseUrl: string;
  /** Each API key (sent in the x-api-key header) and the user it identifies. */
  apiKeys: Record<string, User>;
  /** Apply the safe schema changes (new tables, columns, indexes) at startup. */
  autoMigrate: boolean;
}

export function createApp({ databaseUrl, apiKeys, autoMigrate }: AppOptions) {
  return crudkit({
    database: databaseFromUrl(databaseUrl),
    autoMigrate,
    resources,
    plugins: [
${calls.map((call) => `      ${call},`).join("\n")}
    ],
  });
}

${databaseUrlFunction(spec)}`;
}

function databaseUrlFunction(spec: ProjectSpec): string {
  if (spec.database === "sqlite")
    return `/** DATABASE_URL, or SQLite in ./data/app.db (crudkit never makes a directory out of a URL: this does). */
export function databaseUrlFromEnv(): string {
  if (process.env.DATABASE_URL) return process.env.DATABASE_URL;
  mkdirSync("data", { recursive: true });
  return "file:./data/app.db";
}
`;
  const { label, exampleUrl } = DATABASE_PROFILES[spec.database];
  return `/** DATABASE_URL: the ${label} database. */
export function databaseUrlFromEnv(): string {
  const url = process.env.DATABASE_URL;
  if (!url) throw new Error("Set DATABASE_URL to your ${label} database, e.g. DATABASE_URL=${exampleUrl}");
  return url;
}
`;
}

export function serverTs(): string {
  return `// \`npm start\` (and \`npm run dev\`): serves the API on PORT (3000) and HOST (127.0.0.1).
// API_KEY is the key to send in the x-api-key header; it identifies the user API_USER ("me").
// ADMIN_API_KEY, when set, identifies an admin, who acts on every record.

import { randomBytes } from "node:crypto";
import type { User } from "crudkit-api";
import { serve } from "crudkit-api/node";
import { createApp, databaseUrlFromEnv } from "./app.ts";

const port = Number(process.env.PORT || 3000);
const hostname = process.env.HOST || "127.0.0.1";

const apiKeys: Record<string, User> = {
  [process.env.API_KEY || developmentKey()]: { id: process.env.API_USER || "me", roles: [] },
};
if (process.env.ADMIN_API_KEY) apiKeys[process.env.ADMIN_API_KEY] = { id: "admin", roles: ["admin"] };

async function start() {
  const app = createApp({
    databaseUrl: databaseUrlFromEnv(),
    apiKeys,
    // Once you keep reviewed migrations (npm run generate, then npm run migrate), set this to false.
    autoMigrate: true,
  });
  return serve(app, { port, hostname });
}

const server = await start().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : String(error));
  process.exit(1);
});
console.log(\`listening on \${server.url}/api\`);

// Stop accepting, let requests in flight finish, then close the database.
const stop = async () => {
  await server.close();
  process.exit(0);
};
process.on("SIGINT", stop);
process.on("SIGTERM", stop);

function developmentKey(): string {
  const key = \`dev-\${randomBytes(12).toString("hex")}\`;
  console.warn(\`API_KEY is not set: this run's key is \${key}\`);
  return key;
}
`;
}

export function configTs(): string {
  return `// What \`crudkit generate\` and \`crudkit migrate\` (npm run generate, npm run migrate) load: the app,
// built but not served, and not migrating by itself, so generate sees every change.

import { createApp, databaseUrlFromEnv } from "./src/app.ts";

export const app = createApp({ databaseUrl: databaseUrlFromEnv(), apiKeys: {}, autoMigrate: false });
`;
}
