// Run by lazy-driver.test.ts without better-sqlite3: an app on the database given starts and
// serves; an app on SQLite says which package is missing. Prints what happened as JSON.
import { crudkit } from "../../src/index.ts";
import { openProduct } from "../fixtures.ts";

const [provider, url, directUrl] = process.argv.slice(2) as [
  "sqlite" | "postgres" | "mysql",
  string,
  string | undefined,
];
const logged: string[] = [];
const app = crudkit({
  // Through PgBouncer, with the direct URL for the migration lock.
  database: (directUrl ? { provider, url, directUrl } : { provider, url }) as {
    provider: "postgres";
    url: string;
  },
  autoMigrate: true,
  resources: [openProduct],
  log: (message, error) => logged.push(`${message} ${String((error as Error)?.cause ?? error ?? "")}`),
});
const outcome: Record<string, unknown> = {};
try {
  await app.ready;
  const created = await app.api.createProduct({
    body: { name: "driverless", price: 1 },
    overrideAccess: true,
  });
  outcome.created = created.name;
} catch (error) {
  outcome.error = `${(error as Error).message} ${String((error as Error).cause ?? "")}`;
}
outcome.logged = logged;
await app.close().catch(() => {});
console.log(JSON.stringify(outcome));
