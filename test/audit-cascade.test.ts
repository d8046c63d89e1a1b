// Issue 42 §2, written as the attack: with the README's audit rule `{ userId: user.id }`, Alice
// deletes her project, the cascade deletes Bob's note inside it (one she cannot read), and the
// audit log showed her Bob's whole note, attributed to her. Now an entry shows a reader only what
// the row rules of its resource let her read, and a cascaded change is marked `source: "cascade"`
// with the triggering entry's id. On SQLite, PostgreSQL and MariaDB.

import {
  apiKey,
  createResource,
  crudkit,
  type DatabaseOptions,
  ownedBy,
  references,
  withId,
} from "crudkit-api";
import { audit } from "crudkit-api/plugins";
import { expect, it } from "vitest";
import { z } from "zod";
import { appPerDialect, forEachDialect } from "./dialects.ts";
import { call } from "./helpers.ts";

const owner = z.string().max(255).optional();
const project = createResource({
  name: "project",
  schema: withId({ ownerId: owner, name: z.string().max(100) }),
  access: ownedBy("ownerId"),
});
const note = createResource({
  name: "note",
  schema: withId({
    ownerId: owner,
    text: z.string().max(100),
    projectId: references(project, { onDelete: "cascade" }),
  }),
  access: ownedBy("ownerId"),
});

const makeApp = (database: DatabaseOptions) =>
  crudkit({
    database,
    autoMigrate: true,
    resources: [project, note],
    plugins: [
      apiKey({ keys: { "alice-key": { id: "alice" }, "bob-key": { id: "bob" } } }),
      audit({ access: { read: ({ user }) => (user ? { userId: user.id } : false) } }),
    ],
  });

const alice = { "x-api-key": "alice-key" };
const BOBS_SECRET = "bob-private-note-text";

forEachDialect((dialect) => {
  const app = appPerDialect(dialect, makeApp);

  it("a cascade through Bob's note shows Alice no content of it, marked as caused by her delete", async () => {
    const mine = await call(app, "POST", "/api/project", { headers: alice, body: { name: "A" } });
    const own = await call(app, "POST", "/api/note", {
      headers: alice,
      body: { text: "mine", projectId: mine.body.id },
    });
    expect(own.status).toBe(201);
    // Bob's note in Alice's project, put there by server code (Bob may not point at her project).
    const bobs = await app.api.createNote({
      body: { text: BOBS_SECRET, projectId: mine.body.id, ownerId: "bob" },
      overrideAccess: true,
    });
    expect((await call(app, "GET", `/api/note/${bobs.id}`, { headers: alice })).status).toBe(404);

    expect((await call(app, "DELETE", `/api/project/${mine.body.id}`, { headers: alice })).status).toBe(200);
    const logs = await call(app, "GET", "/api/audit/logs?limit=50", { headers: alice });
    expect(logs.status).toBe(200);
    expect(logs.text).not.toContain(BOBS_SECRET);
    const entries = logs.body.items as {
      id: string;
      resource: string;
      operation: string;
      recordId: string;
      source: string;
      causedBy: string | null;
      before: Record<string, unknown> | null;
    }[];
    const root = entries.find((e) => e.resource === "project" && e.operation === "delete")!;
    expect(root.source).toBe("http");
    expect(root.causedBy).toBeNull();
    expect(root.before).toMatchObject({ name: "A" });
    const cascaded = entries.filter((e) => e.resource === "note" && e.operation === "delete");
    expect(cascaded).toHaveLength(2);
    for (const entry of cascaded) {
      expect(entry.source).toBe("cascade");
      expect(entry.causedBy).toBe(root.id);
    }
    // Her own note's content she may read; Bob's she may not.
    expect(cascaded.find((e) => e.recordId === own.body.id)!.before).toMatchObject({ text: "mine" });
    expect(cascaded.find((e) => e.recordId === bobs.id)!.before).toBeNull();
  });
});
