// A write the database undoes to settle a deadlock answers 503 (SERVICE_UNAVAILABLE, Retry-After),
// never 500, and stores nothing: two updates whose hooks then update each other's record.

import { createResource, crudkit, withId } from "crudkit-api";
import { audit } from "crudkit-api/plugins";
import { expect, it } from "vitest";
import { z } from "zod";
import { forEachDialect } from "./dialects.ts";

forEachDialect(
  (dialect) => {
    it("a deadlock between two writes is a 503 for one of them, and nothing of it is stored", async () => {
      let arrived = 0;
      let release: () => void = () => {};
      const bothHoldTheirRow = new Promise<void>((resolve) => {
        release = resolve;
      });
      const account = createResource({
        name: "account",
        schema: withId({ name: z.string(), partner: z.string().optional(), touched: z.number().default(0) }),
        access: { create: true, read: true, update: true, delete: true, list: true },
        hooks: {
          // Each update, holding its own row, then updates its partner's: the two wait on each other.
          async afterUpdate(ctx) {
            if (!ctx.record.partner || !ctx.record.name.startsWith("renamed")) return;
            if (++arrived === 2) release();
            await bothHoldTheirRow;
            await ctx.api.updateAccount!({
              params: { id: ctx.record.partner },
              body: { touched: 2 },
              overrideAccess: true,
            });
          },
        },
      });
      const logged: string[] = [];
      const app = crudkit({
        database: await dialect.fresh(),
        autoMigrate: true,
        resources: [account],
        plugins: [audit()],
        log: (message) => logged.push(message),
      });
      try {
        await app.ready;
        const x = await app.api.createAccount({ body: { name: "x" }, overrideAccess: true });
        const y = await app.api.createAccount({ body: { name: "y", partner: x.id }, overrideAccess: true });
        await app.api.updateAccount({ params: { id: x.id }, body: { partner: y.id }, overrideAccess: true });
        const patch = (id: string) =>
          app.handler(
            new Request(`http://localhost/api/account/${id}`, {
              method: "PATCH",
              headers: { "content-type": "application/json" },
              body: JSON.stringify({ name: `renamed ${id}` }),
            }),
          );
        const answers = await Promise.all([patch(x.id), patch(y.id)]);
        const statuses = answers.map((a) => a.status).sort();
        expect(statuses).toEqual([200, 503]);
        const refused = answers.find((a) => a.status === 503)!;
        expect(refused.headers.get("retry-after")).toBe("1");
        const body = await refused.json();
        expect(body.code).toBe("SERVICE_UNAVAILABLE");
        expect(JSON.stringify(body)).not.toMatch(/deadlock|40P01|1213|ER_LOCK/i);
        expect(logged.some((m) => m.includes("collided"))).toBe(true);
        // The refused rename is nowhere: one record renamed, the other not.
        const names = [
          (await app.api.readAccount({ params: { id: x.id }, overrideAccess: true })).name,
          (await app.api.readAccount({ params: { id: y.id }, overrideAccess: true })).name,
        ];
        expect(names.filter((n) => n.startsWith("renamed"))).toHaveLength(1);
        expect((await app.audit.verify()).ok).toBe(true);
      } finally {
        release();
        await app.close();
      }
    }, 30_000);
  },
  ["postgres", "mysql"],
);
