// Traces: with an OpenTelemetry SDK registered (its in-memory exporter here), a request is one span
// tree: the request (child of the caller's `traceparent`), its access rule, hooks, plugin work
// (audit write, cache) and every SQL statement, with the statement's text and never a value the
// caller sent, a hidden field's value or a secret.

import { SpanKind, trace } from "@opentelemetry/api";
import { InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { NodeTracerProvider } from "@opentelemetry/sdk-trace-node";
import { createResource, crudkit, withId } from "crudkit-api";
import { apiKey, audit, cache } from "crudkit-api/plugins";
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { forEachDialect } from "./dialects.ts";

const exporter = new InMemorySpanExporter();
const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
// The AsyncLocalStorage context manager and the W3C trace-context propagator, as an app's SDK sets them.
provider.register();
afterAll(() => provider.shutdown());
beforeEach(() => exporter.reset());

const SECRETS = {
  adminKey: "admin-5ecret-key-0001",
  memberKey: "member-5ecret-key-0002",
  salary: 918273645,
  name: "Name-5ecret-0003",
};
const TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT_ID = "00f067aa0ba902b7";

const staff = createResource({
  name: "staff",
  schema: withId({ name: z.string(), salary: z.number() }),
  access: {
    create: true,
    read: true,
    list: true,
    fields: { salary: { read: ({ user }) => user?.roles?.includes("admin") === true } },
  },
  hooks: { afterRead: () => undefined },
});

/** Every span, with what it says, as one text: nothing secret may appear in it. */
function everything(spans: readonly ReadableSpan[]): string {
  return JSON.stringify(
    spans.map((span) => ({
      name: span.name,
      attributes: span.attributes,
      events: span.events,
      status: span.status,
      links: span.links,
    })),
  );
}

describe("traces", () => {
  forEachDialect(
    (dialect) => {
      it("one request is one span tree under its traceparent, with nothing secret in it", async () => {
        const app = crudkit({
          database: await dialect.fresh(),
          autoMigrate: true,
          resources: [staff],
          plugins: [
            apiKey({
              keys: {
                [SECRETS.adminKey]: { id: "root", roles: ["admin"] },
                [SECRETS.memberKey]: { id: "ada", roles: ["member"] },
              },
            }),
            audit(),
            cache(),
          ],
        });
        await app.ready;
        try {
          const created = await app.handler(
            new Request("http://localhost/api/staff", {
              method: "POST",
              headers: {
                "content-type": "application/json",
                "x-api-key": SECRETS.adminKey,
                traceparent: `00-${TRACE_ID}-${PARENT_ID}-01`,
              },
              body: JSON.stringify({ name: SECRETS.name, salary: SECRETS.salary }),
            }),
          );
          expect(created.status).toBe(201);
          const { id } = await created.json();
          const write = exporter.getFinishedSpans();
          const root = write.find((span) => span.kind === SpanKind.SERVER)!;
          expect(root.name).toBe("POST /api/staff");
          expect(root.parentSpanContext?.spanId).toBe(PARENT_ID);
          expect(root.attributes["http.route"]).toBe("/api/staff");
          expect(root.attributes["http.response.status_code"]).toBe(201);
          for (const span of write) expect(span.spanContext().traceId).toBe(TRACE_ID);
          // Every other span hangs from the request's, through its parents.
          const byId = new Map(write.map((span) => [span.spanContext().spanId, span]));
          for (const span of write) {
            let at: ReadableSpan | undefined = span;
            while (at && at !== root) at = byId.get(at.parentSpanContext?.spanId ?? "");
            expect(at, `${span.name} is under the request`).toBe(root);
          }
          const names = write.map((span) => span.name);
          expect(names).toContain("crudkit.access");
          expect(names).toContain("crudkit.hook afterCreate");
          expect(names).toContain("crudkit.audit.write");
          const audited = write.find((span) => span.name === "crudkit.audit.write")!;
          expect(byId.get(audited.parentSpanContext!.spanId)!.name).toBe("crudkit.hook afterCreate");
          const inserts = write.filter((span) => span.name === "db insert");
          expect(inserts.length).toBeGreaterThanOrEqual(2);
          const system = { sqlite: "sqlite", postgres: "postgresql", mysql: "mysql" }[dialect.name];
          for (const span of inserts) {
            expect(span.kind).toBe(SpanKind.CLIENT);
            expect(span.attributes["db.system"]).toBe(system);
            expect(String(span.attributes["db.statement"])).toMatch(/^insert into/i);
            expect(String(span.attributes["db.statement"])).toMatch(/\$1|\?/);
          }

          exporter.reset();
          const read = await app.handler(
            new Request(`http://localhost/api/staff/${id}`, { headers: { "x-api-key": SECRETS.memberKey } }),
          );
          expect(read.status).toBe(200);
          expect((await read.json()).salary).toBeUndefined();
          const reading = exporter.getFinishedSpans();
          const readRoot = reading.find((span) => span.kind === SpanKind.SERVER)!;
          expect(readRoot.name).toBe("GET /api/staff/:id");
          // No traceparent: a trace of its own.
          expect(readRoot.parentSpanContext).toBeUndefined();
          expect(readRoot.spanContext().traceId).not.toBe(TRACE_ID);
          const readNames = reading.map((span) => span.name);
          expect(readNames).toEqual(
            expect.arrayContaining([
              "crudkit.access",
              "crudkit.cache",
              "crudkit.hook afterRead",
              "db select",
            ]),
          );

          const text = everything([...write, ...reading]);
          for (const secret of [
            SECRETS.adminKey,
            SECRETS.memberKey,
            String(SECRETS.salary),
            SECRETS.name,
            id,
          ])
            expect(text).not.toContain(secret);
        } finally {
          await app.close();
        }
      });

      it("tracing: false starts no span, even under another library's active span", async () => {
        const app = crudkit({
          database: await dialect.fresh(),
          autoMigrate: true,
          resources: [staff],
          tracing: false,
        });
        await app.ready;
        try {
          exporter.reset();
          const outer = trace.getTracer("another-library");
          await outer.startActiveSpan("outer", async (span) => {
            const answer = await app.handler(new Request("http://localhost/api/staff"));
            expect(answer.status).toBe(200);
            // app.api too.
            await app.api.createStaff({ body: { name: "Grace", salary: 1 } });
            span.end();
          });
          expect(exporter.getFinishedSpans().map((span) => span.name)).toEqual(["outer"]);
        } finally {
          await app.close();
        }
      });

      it("a malformed, oversized or forged traceparent is ignored: the request answers as usual, in a trace of its own", async () => {
        const app = crudkit({ database: await dialect.fresh(), autoMigrate: true, resources: [staff] });
        await app.ready;
        try {
          const hostile = [
            "garbage",
            "",
            `00-${TRACE_ID}-${PARENT_ID}`,
            `00-${TRACE_ID.toUpperCase()}-${PARENT_ID}-01`,
            `00-${"0".repeat(32)}-${PARENT_ID}-01`,
            `00-${TRACE_ID}-${"0".repeat(16)}-01`,
            `ff-${TRACE_ID}-${PARENT_ID}-01`,
            `00-${TRACE_ID}-${PARENT_ID}-01-extra`,
            `00-${TRACE_ID}'; drop table staff; --${PARENT_ID}-01`,
            `00-${TRACE_ID}-${PARENT_ID}-01${"-a".repeat(4000)}`,
            `00-${"4bf92f35".repeat(1000)}-${PARENT_ID}-01`,
          ];
          for (const traceparent of hostile) {
            exporter.reset();
            const answer = await app.handler(
              new Request("http://localhost/api/staff", {
                headers: { traceparent, tracestate: `a=${"b".repeat(600)},${"c=d,".repeat(100)}` },
              }),
            );
            expect(answer.status, traceparent.slice(0, 80)).toBe(200);
            const root = exporter.getFinishedSpans().find((span) => span.kind === SpanKind.SERVER)!;
            expect(root.parentSpanContext, traceparent.slice(0, 80)).toBeUndefined();
            expect(root.spanContext().traceId).toMatch(/^[0-9a-f]{32}$/);
            expect(root.spanContext().traceId).not.toBe("0".repeat(32));
          }
          // The table is still there.
          expect((await app.handler(new Request("http://localhost/api/staff"))).status).toBe(200);
        } finally {
          await app.close();
        }
      });

      it("a made-up method is _OTHER in the span", async () => {
        const app = crudkit({ database: await dialect.fresh(), autoMigrate: true, resources: [staff] });
        await app.ready;
        try {
          exporter.reset();
          await app.handler(new Request("http://localhost/api/staff", { method: "X-SECRET-METHOD" }));
          const root = exporter.getFinishedSpans().find((span) => span.kind === SpanKind.SERVER)!;
          expect(root.attributes["http.request.method"]).toBe("_OTHER");
          expect(
            JSON.stringify(exporter.getFinishedSpans().map((span) => [span.name, span.attributes])),
          ).not.toContain("X-SECRET");
        } finally {
          await app.close();
        }
      });

      it("a failing request's span says so, with the error's type and not its message", async () => {
        const app = crudkit({
          database: await dialect.fresh(),
          autoMigrate: true,
          resources: [staff],
        });
        await app.ready;
        try {
          const answer = await app.handler(
            new Request("http://localhost/api/staff", {
              method: "POST",
              headers: { "content-type": "application/json" },
              body: JSON.stringify({ name: SECRETS.name, salary: "not a number" }),
            }),
          );
          expect(answer.status).toBe(400);
          const root = exporter.getFinishedSpans().find((span) => span.kind === SpanKind.SERVER)!;
          expect(root.attributes["http.response.status_code"]).toBe(400);
          expect(root.attributes["crudkit.error.code"]).toBe("VALIDATION_ERROR");
          expect(everything(exporter.getFinishedSpans())).not.toContain(SECRETS.name);
        } finally {
          await app.close();
        }
      });
    },
    ["sqlite", "postgres", "mysql"],
  );
});
