// The secrets grep: a conformance run (every operation, errors of each kind, through `call()`, so
// each answer is also checked against the OpenAPI document) with everything an operator can turn
// on: request logs and error lines, metrics, traces, the audit log with `redact`. Every line
// written, the scrape and every span are searched for each secret the run sent: API keys, a
// bearer token, a cookie, a hidden field's value, a redacted field's value, body and query values.

import { InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { NodeTracerProvider } from "@opentelemetry/sdk-trace-node";
import { createResource, crudkit, jsonLogger, withId } from "crudkit-api";
import { apiKey, audit, metrics } from "crudkit-api/plugins";
import { afterAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { forEachDialect } from "./dialects.ts";
import { call } from "./helpers.ts";

const exporter = new InMemorySpanExporter();
const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
provider.register();
afterAll(() => provider.shutdown());

const SECRETS = {
  adminKey: "adm1n-k3y-5ecret-a1b2c3",
  memberKey: "m3mber-k3y-5ecret-d4e5f6",
  metricsToken: "metr1cs-t0ken-5ecret-g7h8",
  bearer: "b3arer-5ecret-i9j0k1",
  cookie: "c00kie-5ecret-l2m3n4",
  salary: "734519826",
  password: "passw0rd-5ecret-o5p6q7",
  name: "Name5ecret-r8s9t0",
  renamed: "Renamed5ecret-u1v2w3",
  search: "Search5ecret-x4y5z6",
  malformed: "Malformed5ecret-a7b8c9",
  hiddenFilter: "612093847",
};

const account = createResource({
  name: "account",
  schema: withId({
    name: z.string().max(40),
    salary: z.number().int().optional(),
    password: z.string().optional(),
    note: z.string().optional(),
  }),
  searchable: ["name"],
  access: {
    create: true,
    read: true,
    list: true,
    update: true,
    delete: true,
    fields: {
      salary: { read: ({ user }) => user?.roles?.includes("admin") === true },
      password: { read: false },
    },
  },
  hooks: {
    beforeUpdate: ({ data }) => {
      // A server fault (500) on demand, with a message that holds nothing of the request.
      if ((data as { note?: string }).note === "fail") throw new Error("the note hook failed");
    },
  },
});

describe("the secrets grep", () => {
  forEachDialect((dialect) => {
    it("no log line, metric or span of a conformance run holds a secret it sent", async () => {
      exporter.reset();
      const lines: string[] = [];
      const plugin = metrics({ tokens: SECRETS.metricsToken });
      const app = crudkit({
        database: await dialect.fresh(),
        autoMigrate: true,
        resources: [account],
        requestLogs: true,
        logger: jsonLogger({ sink: { write: (line) => void lines.push(line), flush: async () => {} } }),
        plugins: [
          apiKey({
            keys: {
              [SECRETS.adminKey]: { id: "root", roles: ["admin"] },
              [SECRETS.memberKey]: { id: "ada", roles: ["member"] },
            },
          }),
          audit({ redact: ["password"] }),
          plugin,
        ],
      });
      await app.ready;
      try {
        const admin = {
          "x-api-key": SECRETS.adminKey,
          authorization: `Bearer ${SECRETS.bearer}`,
          cookie: `session=${SECRETS.cookie}`,
        };
        const member = { "x-api-key": SECRETS.memberKey, cookie: `session=${SECRETS.cookie}` };
        const created = await call(app, "POST", "/api/account", {
          headers: admin,
          body: { name: SECRETS.name, salary: Number(SECRETS.salary), password: SECRETS.password },
        });
        expect(created.status).toBe(201);
        const id = (created.body as { id: string }).id;
        expect((await call(app, "GET", `/api/account/${id}`, { headers: member })).status).toBe(200);
        expect((await call(app, "GET", `/api/account/${id}`, { headers: admin })).status).toBe(200);
        const filtered = await call(app, "GET", `/api/accounts?filter[salary]=${SECRETS.hiddenFilter}`, {
          headers: member,
        });
        expect(filtered.status).toBe(400);
        expect(
          (
            await call(app, "GET", `/api/accounts?search=${SECRETS.search}&filter[name]=${SECRETS.name}`, {
              headers: admin,
            })
          ).status,
        ).toBe(200);
        expect(
          (
            await call(app, "PATCH", `/api/account/${id}`, {
              headers: admin,
              body: { name: SECRETS.renamed, password: `${SECRETS.password}-2` },
            })
          ).status,
        ).toBe(200);
        // Refused and broken input: a value too long, a wrong type, malformed JSON, a NUL byte.
        for (const body of [
          { name: `${SECRETS.name}${"x".repeat(50)}` },
          { name: 7, salary: SECRETS.salary },
        ])
          expect((await call(app, "POST", "/api/account", { headers: admin, body })).status).toBe(400);
        const malformed = await call(app, "POST", "/api/account", {
          headers: { ...admin, "content-type": "application/json" },
          rawBody: `{"name": "${SECRETS.malformed}"`,
        });
        expect(malformed.status).toBe(400);
        expect(
          (
            await call(app, "POST", "/api/account", {
              headers: admin,
              body: { name: `${SECRETS.name}\u0000` },
            })
          ).status,
        ).toBe(400);
        // Wrong credentials, unknown routes and ids.
        expect(
          (await call(app, "GET", "/api/accounts", { headers: { "x-api-key": `${SECRETS.adminKey}x` } }))
            .status,
        ).toBe(401);
        expect((await call(app, "GET", `/api/nothing/${SECRETS.name}`, { headers: admin })).status).toBe(404);
        expect((await call(app, "GET", `/api/account/${SECRETS.name}`, { headers: admin })).status).toBe(404);
        // A server fault: its error line is written, with its stack, and nothing of the request.
        const fault = await call(app, "PATCH", `/api/account/${id}`, {
          headers: admin,
          body: { note: "fail" },
        });
        expect(fault.status).toBe(500);
        expect((await call(app, "DELETE", `/api/account/${id}`, { headers: admin })).status).toBe(200);

        const scrape = await call(app, "GET", "/api/metrics", {
          headers: { authorization: `Bearer ${SECRETS.metricsToken}` },
        });
        expect(scrape.status).toBe(200);
        await app.close();

        expect(lines.filter((line) => line.includes('"msg":"request"')).length).toBe(16);
        expect(lines.some((line) => line.includes("the note hook failed"))).toBe(true);
        const spans = exporter.getFinishedSpans().map((span) => ({
          name: span.name,
          attributes: span.attributes,
          events: span.events,
          status: span.status,
        }));
        expect(spans.length).toBeGreaterThan(30);
        const everything = [...lines, scrape.text, JSON.stringify(spans)].join("\n");
        for (const [what, secret] of Object.entries(SECRETS)) {
          expect(everything.includes(secret), `${what} appears in a log line, the scrape or a span`).toBe(
            false,
          );
        }
      } finally {
        await app.close();
      }
    });
  });
});
