// betterAuth(): a real better-auth instance on its own SQLite database. A user signs up and signs in
// through better-auth's API; crudkit, given that session's cookie, records them as uploader and in
// the audit log.

import { betterAuth as createAuth } from "better-auth";
import { getMigrations } from "better-auth/db/migration";
import Database from "better-sqlite3";
import { createResource, crudkit, MemoryStorage, withId } from "crudkit-api";
import { audit, betterAuth, upload } from "crudkit-api/plugins";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { call, tempDatabaseUrl } from "./helpers.ts";

const memo = createResource({
  name: "memo",
  schema: withId({ text: z.string() }),
  access: { create: ({ user }) => user !== null, read: true, list: true },
});

describe("betterAuth()", () => {
  const authDb = new Database(tempDatabaseUrl().slice("file:".length));
  const auth = createAuth({
    database: authDb,
    secret: "a better-auth test secret that is long enough",
    baseURL: "http://127.0.0.1:3000",
    emailAndPassword: { enabled: true },
    telemetry: { enabled: false },
  });
  const signedIn = ({ user }: { user: unknown }) => user !== null;
  const app = crudkit({
    database: { provider: "sqlite", url: tempDatabaseUrl() },
    autoMigrate: true,
    resources: [memo],
    plugins: [
      betterAuth({ auth }),
      audit({ access: { read: signedIn } }),
      upload({ storage: new MemoryStorage(), access: { upload: signedIn, read: signedIn } }),
    ],
  });
  let cookie = "";
  let userId = "";

  beforeAll(async () => {
    const { runMigrations } = await getMigrations(auth.options);
    await runMigrations();
    const signedUp = await auth.api.signUpEmail({
      body: { email: "grace@example.com", password: "correct horse battery", name: "Grace" },
    });
    userId = signedUp.user.id;
    const response = await auth.api.signInEmail({
      body: { email: "grace@example.com", password: "correct horse battery" },
      asResponse: true,
    });
    expect(response.status).toBe(200);
    // The session cookie as a browser would send it back.
    cookie = response.headers
      .getSetCookie()
      .map((c) => c.split(";")[0])
      .join("; ");
    await app.ready;
  });
  afterAll(async () => {
    await app.close();
    authDb.close();
  });

  it("makes the signed-in user the uploader and the audit log's user", async () => {
    expect(cookie).toContain("session_token=");
    const uploaded = await call(app, "POST", "/api/upload/file", {
      body: { filename: "a.txt", mimeType: "text/plain", file: Buffer.from("hi").toString("base64") },
      headers: { cookie },
    });
    expect(uploaded.status, uploaded.text).toBe(201);
    expect(uploaded.body.uploadedBy).toBe(userId);

    const created = await call(app, "POST", "/api/memo", {
      body: { text: "from grace" },
      headers: { cookie },
    });
    expect(created.status).toBe(201);
    const logs = await call(app, "GET", "/api/audit/logs", { headers: { cookie } });
    expect(logs.status).toBe(200);
    expect(logs.body.items.map((e: { resource: string; userId: string }) => [e.resource, e.userId])).toEqual([
      ["memo", userId],
      ["uploaded_file", userId],
    ]);
  });

  it("treats no session, a forged cookie and a signed-out session as anonymous", async () => {
    expect((await call(app, "POST", "/api/memo", { body: { text: "x" } })).status).toBe(403);
    const forged = cookie.replace(/session_token=[^;]+/, "better-auth.session_token=forged.signature");
    expect(
      (await call(app, "POST", "/api/memo", { body: { text: "x" }, headers: { cookie: forged } })).status,
    ).toBe(403);
    await auth.api.signOut({ headers: new Headers({ cookie }) });
    expect((await call(app, "POST", "/api/memo", { body: { text: "x" }, headers: { cookie } })).status).toBe(
      403,
    );
  });
});
