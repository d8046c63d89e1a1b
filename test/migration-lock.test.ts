// Migrations take the engine's lock: instances starting together with autoMigrate against an
// empty database all come up, and the migration is applied once (issue 43). Without the lock
// they planned the same steps from the same empty schema and raced to apply them.

import { crudkit } from "crudkit-api";
import { expect, it } from "vitest";
import { forEachDialect } from "./dialects.ts";
import { gadget, openProduct } from "./fixtures.ts";

forEachDialect((dialect) => {
  it("3 instances started at once against an empty database: each comes up, one migration is applied", async () => {
    const database = await dialect.fresh();
    const apps = Array.from({ length: 3 }, () =>
      crudkit({ database, autoMigrate: true, resources: [openProduct, gadget], log: () => {} }),
    );
    try {
      const started = await Promise.allSettled(apps.map((app) => app.ready));
      expect(started.map((s) => (s.status === "rejected" ? String(s.reason) : "ready"))).toEqual([
        "ready",
        "ready",
        "ready",
      ]);
      const migrations = await apps[0]!.db.selectFrom("crudkit_migrations").select("name").execute();
      expect(migrations).toHaveLength(1);
      // Each instance serves, and sees what the others write.
      const made = await apps[1]!.api.createProduct({
        body: { name: "one", price: 1 },
        overrideAccess: true,
      });
      expect((await apps[2]!.api.readProduct({ params: { id: made.id }, overrideAccess: true })).name).toBe(
        "one",
      );
    } finally {
      for (const app of apps) await app.close();
    }
  });
});
