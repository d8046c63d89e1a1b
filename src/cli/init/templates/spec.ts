// What every template is written from, and what differs between the databases and plugins, as
// data: the templates ask these tables and never compare names.

import type { DatabaseChoice, PluginChoice } from "../options.ts";

export interface ProjectSpec {
  /** The npm package name (already valid, see package-name.ts). */
  name: string;
  database: DatabaseChoice;
  plugins: readonly PluginChoice[];
  /** The crudkit-api dependency as package.json takes it: `^0.1.0`, or `file:vendor/….tgz`. */
  crudkitDependency: string;
  /** The vendored tarball's path in the project, when crudkit-api comes from one. */
  vendored: string | undefined;
  /** The crudkit-api version writing the project. */
  version: string;
  /** How the user runs a script: `npm run`, `pnpm`, `yarn`, `bun run`. */
  run: string;
}

/** The command that runs one of the project's scripts: `npm start`, `npm run dev`, `pnpm dev`, `bun run test`. */
export function script(spec: Pick<ProjectSpec, "run">, name: string): string {
  // npm has start and test as commands of their own (bun's `test` is its own runner: not those).
  return spec.run === "npm run" && (name === "start" || name === "test")
    ? `npm ${name}`
    : `${spec.run} ${name}`;
}

/**
 * Versions the project pins: those this package is built and tested with on Node 20
 * (test/init.test.ts checks they match its package.json).
 */
export const VERSIONS = {
  zod: "~4.6.7",
  tsx: "~4.23.15",
  typescript: "~5.9.3",
  "@types/node": "~20.19.0",
  pg: "~8.23.1",
  mysql2: "~3.24.6",
} as const;

export interface DatabaseProfile {
  label: string;
  /** The driver package to depend on; SQLite's comes with crudkit-api. */
  driver: "pg" | "mysql2" | undefined;
  /** A DATABASE_URL to show. */
  exampleUrl: string;
}

export const DATABASE_PROFILES: Record<DatabaseChoice, DatabaseProfile> = {
  sqlite: { label: "SQLite", driver: undefined, exampleUrl: "file:./data/app.db" },
  postgres: {
    label: "PostgreSQL",
    driver: "pg",
    exampleUrl: "postgres://user:password@127.0.0.1:5432/app",
  },
  mysql: {
    label: "MySQL or MariaDB",
    driver: "mysql2",
    exampleUrl: "mysql://user:password@127.0.0.1:3306/app",
  },
};

/** Each plugin as src/app.ts imports and calls it (from crudkit-api/plugins). */
export const PLUGIN_CODE: Record<PluginChoice, { name: string; call: string }> = {
  audit: { name: "audit", call: "audit({ access: { read: ({ user }) => isAdmin(user) } })" },
  cache: { name: "cache", call: "cache({ ttl: 60 })" },
  "rate-limit": { name: "rateLimit", call: "rateLimit({ window: 60, max: 100 })" },
  idempotency: { name: "idempotency", call: "idempotency()" },
};
