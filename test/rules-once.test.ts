// A request that both filters on a relation and expands it asks the related resource's read rule
// once: relation filters, expansion and reference checks share one admission per request and
// resource (issue 33, item 7). A new request asks again.

import { createResource, crudkit, type DatabaseOptions, references, withId } from "crudkit-api";
import { expect, it } from "vitest";
import { z } from "zod";
import { appPerDialect, forEachDialect } from "./dialects.ts";
import { call } from "./helpers.ts";

let asked = 0;
const maker = createResource({
  name: "maker",
  schema: withId({ name: z.string().max(100) }),
  access: {
    create: true,
    list: true,
    read: () => {
      asked++;
      return true;
    },
  },
});
const gadget = createResource({
  name: "widget",
  schema: withId({ label: z.string().max(100), makerId: references(maker) }),
  access: { create: true, read: true, list: true, update: true },
});
const makeApp = (database: DatabaseOptions) =>
  crudkit({ database, autoMigrate: true, resources: [maker, gadget], log: () => {} });

forEachDialect((dialect) => {
  const app = appPerDialect(dialect, makeApp);

  it("filtering on and expanding one relation asks its read rule once per request", async () => {
    const acme = await app.api.createMaker({ body: { name: "Acme" }, overrideAccess: true });
    await app.api.createWidget({ body: { label: "spring", makerId: acme.id }, overrideAccess: true });
    asked = 0;
    const list = await call(app, "GET", "/api/widgets?filter[maker.name]=Acme&expand=maker");
    expect(list.status, list.text).toBe(200);
    expect(list.body.items.map((w: { maker: { name: string } }) => w.maker.name)).toEqual(["Acme"]);
    expect(asked).toBe(1);
    // A read that expands asks once; the next request asks again (nothing kept across requests).
    asked = 0;
    const id = list.body.items[0].id;
    const read = await call(app, "GET", `/api/widget/${id}?expand=maker`);
    expect(read.status).toBe(200);
    expect(asked).toBe(1);
    asked = 0;
    await call(app, "GET", "/api/widgets?filter[maker.name]=Acme&expand=maker");
    expect(asked).toBe(1);
  });
});
