// app.api's `where` reaches the list parser as the object it is (issue 33, item 8): values keep
// their types (a number, a Date, null), as a client's JSON would, with no detour through
// `filter[…]` text. Hostile objects get the body's checks; a filter given twice is refused.

import { crudkit, type DatabaseOptions } from "crudkit-api";
import { expect, it } from "vitest";
import { appPerDialect, forEachDialect } from "./dialects.ts";
import { openProduct } from "./fixtures.ts";

const makeApp = (database: DatabaseOptions) =>
  crudkit({ database, autoMigrate: true, resources: [openProduct], log: () => {} });

/** The status and code an `app.api` call failed with, or "ok". */
const outcome = (call: Promise<unknown>) =>
  call.then(
    () => "ok",
    (error: { status?: number; code?: string }) => `${error.status} ${error.code}`,
  );

forEachDialect((dialect) => {
  const app = appPerDialect(dialect, makeApp);

  it("typed values filter as they are: numbers, Dates, lists, and/or/not", async () => {
    const before = new Date(Date.now() - 1000);
    for (const [name, price] of [
      ["where-cheap", 5],
      ["where-dear", 50],
    ] as const)
      await app.api.createProduct({ body: { name, price }, overrideAccess: true });
    const names = async (where: object) =>
      (
        await app.api.listProducts({
          query: { where, sortBy: "price", sortOrder: "asc" },
          overrideAccess: true,
        })
      ).items
        .map((p) => p.name)
        .filter((n) => n.startsWith("where-"));
    expect(await names({ price: { gte: 10 } })).toEqual(["where-dear"]);
    expect(await names({ createdAt: { gte: before }, price: { lt: 10 } })).toEqual(["where-cheap"]);
    expect(await names({ name: { in: ["where-cheap", "where-dear"] } })).toEqual([
      "where-cheap",
      "where-dear",
    ]);
    expect(await names({ or: [{ price: 5 }, { price: 50 }], not: { price: 50 } })).toEqual(["where-cheap"]);
    expect(await names({ createdAt: { gt: new Date(Date.now() + 60_000) } })).toEqual([]);
  });

  it("a value of the wrong type is refused as a client's JSON is, not read from text", async () => {
    const list = (where: unknown) =>
      outcome(app.api.listProducts({ query: { where: where as object }, overrideAccess: true }));
    // "10" was accepted when the object travelled as filter[price]=10; typed, it is a string.
    expect(await list({ price: "10" })).toBe("400 BAD_REQUEST");
    expect(await list({ price: { in: "5,50" } })).toBe("400 BAD_REQUEST");
    expect(await list({ price: 10 })).toBe("ok");
  });

  it("hostile where objects: __proto__, NUL bytes, deep nesting, unknown fields, and a filter given twice", async () => {
    const list = (query: Record<string, unknown>) =>
      outcome(app.api.listProducts({ query, overrideAccess: true }));
    expect(await list({ where: JSON.parse('{"__proto__": {"price": 1}}') })).toMatch(/^400 /);
    expect(await list({ where: { name: "a\u0000b" } })).toMatch(/^400 /);
    let deep: object = { price: 1 };
    for (let i = 0; i < 40; i++) deep = { and: [deep] };
    expect(await list({ where: deep })).toMatch(/^400 /);
    expect(await list({ where: { secret: 1 } })).toBe("400 BAD_REQUEST");
    expect(await list({ where: { price: 1 }, "filter[price]": "1" })).toBe("400 BAD_REQUEST");
  });
});
