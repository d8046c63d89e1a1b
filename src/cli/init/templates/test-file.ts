// The project's test/app.test.ts, run by `npm test` with node:test (through tsx): the API through
// its real HTTP handler, and the point of the starter's rules, each user seeing only her own tasks.

import { DATABASE_PROFILES, type ProjectSpec } from "./spec.ts";

export function appTestTs(spec: ProjectSpec): string {
  const { label } = DATABASE_PROFILES[spec.database];
  const database =
    spec.database === "sqlite"
      ? `// A SQLite database in memory, new for every run.
const databaseUrl = ":memory:";`
      : `// A ${label} database the test may write to; its users are this run's own, and it deletes what it made.
const databaseUrl = process.env.TEST_DATABASE_URL || process.env.DATABASE_URL;
if (!databaseUrl) throw new Error("npm test needs a ${label} database: set TEST_DATABASE_URL (or DATABASE_URL).");`;
  return `// \`npm test\`: the API through its real HTTP handler (as a server answers), on a database of its own.

import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, test } from "node:test";
import { createApp } from "../src/app.ts";

${database}

const run = randomUUID().slice(0, 8);
const alice = { id: \`alice-\${run}\`, roles: [] };
const bob = { id: \`bob-\${run}\`, roles: [] };
const app = createApp({
  databaseUrl,
  apiKeys: { "alice-key": alice, "bob-key": bob, "admin-key": { id: "admin", roles: ["admin"] } },
  autoMigrate: true,
});
after(() => app.close());

async function call(key: string | null, method: string, path: string, body?: unknown) {
  const headers = new Headers({ "content-type": "application/json" });
  if (key) headers.set("x-api-key", key);
  const request = new Request(\`http://localhost/api\${path}\`, {
    method,
    headers,
    body: body === undefined ? null : JSON.stringify(body),
  });
  const response = await app.handler(request);
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

test("each user reads, lists and changes only her own tasks (ownedBy)", async () => {
  const created = await call("alice-key", "POST", "/task", { title: "Write the README" });
  assert.equal(created.status, 201);
  assert.equal(created.body.ownerId, alice.id);
  assert.equal(created.body.done, false);
  const path = \`/task/\${created.body.id}\`;

  assert.equal((await call("alice-key", "GET", path)).status, 200);
  assert.equal((await call("bob-key", "GET", path)).status, 404);
  assert.deepEqual((await call("bob-key", "GET", "/tasks")).body.items, []);
  assert.equal((await call("bob-key", "PATCH", path, { done: true })).status, 404);
  assert.equal((await call("admin-key", "GET", path)).status, 200);

  const updated = await call("alice-key", "PATCH", path, { done: true });
  assert.equal(updated.body.done, true);
  assert.equal((await call("alice-key", "DELETE", path)).status, 200);
});

test("nobody creates a task in someone else's name", async () => {
  const refused = await call("bob-key", "POST", "/task", { title: "Not mine", ownerId: alice.id });
  assert.equal(refused.status, 403);
});

test("without a valid API key, nothing is listed", async () => {
  assert.equal((await call(null, "GET", "/tasks")).status, 403);
  assert.equal((await call("not-a-key", "GET", "/tasks")).status, 401);
});
`;
}
