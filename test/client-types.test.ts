// Type tests for crudkit-api/client: what compiles, what does not, and what each call returns.
// The calls sit in functions that never run; `tsc` (part of npm test) is the judge.

import type { ListResult, Pagination } from "crudkit-api";
import { crudkit } from "crudkit-api";
import { type ClientError, type ClientResult, createClient } from "crudkit-api/client";
import type { AuditEntry, CacheStats } from "crudkit-api/plugins";
import { describe, expect, expectTypeOf, it } from "vitest";
import type { HistoryEntry } from "../src/client/types.ts";
import { type ClientTestApp, product as clientProduct } from "./client-app.ts";

const client = createClient<ClientTestApp>({ baseURL: "http://127.0.0.1:1/api" });

type Product = {
  id: string;
  name: string;
  price: number;
  status: "active" | "inactive" | "draft";
  createdAt: string;
  updatedAt: string;
};
type Person = {
  id: string;
  name: string;
  born?: string;
  tags: string[];
  createdAt: string;
  updatedAt: string;
};

describe("client types", () => {
  it("return the record, the list and the delete result as they arrive (dates as ISO strings)", () => {
    const calls = {
      create: () => client.product.create({ name: "Hat", price: 5 }),
      read: () => client.product.read("id"),
      update: () => client.product.update("id", { price: 6 }),
      remove: () => client.product.delete("id"),
      list: () =>
        client.product.list({ page: 1, limit: 10, search: "hat", sortBy: "price", sortOrder: "asc" }),
      person: () => client.person.read("id"),
    };
    expectTypeOf<Awaited<ReturnType<typeof calls.create>>>().toEqualTypeOf<ClientResult<Product>>();
    expectTypeOf<Awaited<ReturnType<typeof calls.read>>>().toEqualTypeOf<ClientResult<Product>>();
    expectTypeOf<Awaited<ReturnType<typeof calls.update>>>().toEqualTypeOf<ClientResult<Product>>();
    expectTypeOf<Awaited<ReturnType<typeof calls.remove>>>().toEqualTypeOf<
      ClientResult<{ success: true; id: string }>
    >();
    expectTypeOf<Awaited<ReturnType<typeof calls.list>>>().toEqualTypeOf<ClientResult<ListResult<Product>>>();
    expectTypeOf<Awaited<ReturnType<typeof calls.person>>>().toEqualTypeOf<ClientResult<Person>>();
  });

  it("clear optional fields with null on update, and only those; accept ISO strings for dates", () => {
    const calls = {
      clear: () => client.person.update("id", { born: null }),
      born: () => client.person.create({ name: "Ada", born: "1815-12-10" }),
      // @ts-expect-error name is required: it cannot be cleared
      name: () => client.person.update("id", { name: null }),
      // @ts-expect-error status has a default, so it is never absent: it cannot be cleared
      status: () => client.product.update("id", { status: null }),
      // @ts-expect-error null is for clearing on update; a create leaves the field out instead
      create: () => client.person.create({ name: "Ada", born: null }),
    };
    expectTypeOf<Parameters<typeof client.person.update>[1]["born"]>().toEqualTypeOf<
      Date | string | null | undefined
    >();
    expect(Object.keys(calls)).toHaveLength(5);
  });

  it("narrow { data, error } on error", () => {
    const use = async () => {
      const result = await client.product.read("id");
      if (result.error) {
        expectTypeOf(result.error).toEqualTypeOf<ClientError>();
        expectTypeOf(result.data).toEqualTypeOf<null>();
        expectTypeOf(result.error.message).toEqualTypeOf<string>();
      } else {
        expectTypeOf(result.data).toEqualTypeOf<Product>();
      }
    };
    expect(typeof use).toBe("function");
  });

  it("type callbacks from the method", () => {
    const use = () =>
      client.product.list(undefined, {
        onSuccess: ({ data }) => expectTypeOf(data).toEqualTypeOf<ListResult<Product>>(),
        onError: ({ error }) => expectTypeOf(error.message).toEqualTypeOf<string>(),
        fetchOptions: { onSuccess: ({ data }) => expectTypeOf(data.items).toEqualTypeOf<Product[]>() },
      });
    expect(typeof use).toBe("function");
  });

  it("type plugin methods from their endpoint schemas", () => {
    const calls = {
      echo: () => client.echo({ room: "r", message: "m", times: 2 }),
      stats: () => client.echoStats({ scale: 2 }),
      ping: () => client.ping(),
      fetched: () => client.$fetch("/echo/stats", { query: { scale: 2 } }),
      loose: () => client.$fetch<{ custom: number }>("/anything"),
      cacheStats: () => client.$fetch("/cache/stats"),
      audit: () =>
        client.$fetch("/audit/logs", { query: { resource: "product", page: 2, from: "2026-01-01" } }),
    };
    expectTypeOf<Awaited<ReturnType<typeof calls.cacheStats>>>().toEqualTypeOf<ClientResult<CacheStats>>();
    expectTypeOf<Awaited<ReturnType<typeof calls.audit>>>().toEqualTypeOf<
      ClientResult<{ items: AuditEntry[]; pagination: Pagination }>
    >();
    expectTypeOf<Awaited<ReturnType<typeof calls.echo>>>().toEqualTypeOf<
      ClientResult<{ room: string; message: string; user: string | null; trace: string | null }>
    >();
    expectTypeOf<Awaited<ReturnType<typeof calls.stats>>>().toEqualTypeOf<ClientResult<{ rooms: number }>>();
    expectTypeOf<Awaited<ReturnType<typeof calls.ping>>>().toEqualTypeOf<ClientResult<{ pong: true }>>();
    expectTypeOf<Awaited<ReturnType<typeof calls.fetched>>>().toEqualTypeOf<
      ClientResult<{ rooms: number }>
    >();
    expectTypeOf<Awaited<ReturnType<typeof calls.loose>>>().toEqualTypeOf<ClientResult<{ custom: number }>>();
  });

  it("refuse what does not fit", () => {
    const never = () => {
      // @ts-expect-error the audit log has no such filter
      void client.$fetch("/audit/logs", { query: { colour: "red" } });
      // @ts-expect-error page is a number
      void client.$fetch("/audit/logs", { query: { page: "two" } });
      // @ts-expect-error create requires name
      void client.product.create({ price: 5 });
      // @ts-expect-error price must be a number
      void client.product.create({ name: "Hat", price: "5" });
      // @ts-expect-error unknown key
      void client.product.create({ name: "Hat", price: 5, colour: "red" });
      // @ts-expect-error status is an enum
      void client.product.update("id", { status: "gone" });
      // @ts-expect-error id is not writable on update
      void client.product.update("id", { id: "other" });
      // @ts-expect-error timestamps are server-managed
      void client.product.create({ name: "Hat", price: 5, createdAt: "2020-01-01" });
      // @ts-expect-error sortBy must name a sortable field
      void client.product.list({ sortBy: "colour" });
      // @ts-expect-error ids are strings
      void client.product.read(42);
      // @ts-expect-error no such resource
      void client.widget.read("id");
      // @ts-expect-error no such method on a resource
      void client.product.upsert({});
      // @ts-expect-error plugin method input is checked: message is required
      void client.echo({ room: "r" });
      // @ts-expect-error plugin method input is checked: times is a number
      void client.echo({ room: "r", message: "m", times: "2" });
      // @ts-expect-error no such plugin method
      void client.uploadFile({});
    };
    expect(typeof never).toBe("function");
  });

  it("type a record's history from the record, where the app has audit()", () => {
    type Entry = HistoryEntry<Product>;
    const calls = {
      first: () => client.product.history("id"),
      next: () => client.product.history("id", { cursor: "h1.x", limit: 20 }),
    };
    expectTypeOf<Awaited<ReturnType<typeof calls.first>>>().toEqualTypeOf<ClientResult<ListResult<Entry>>>();
    expectTypeOf<Entry["before"]>().toEqualTypeOf<Partial<Product> | null>();
    expectTypeOf<Entry["after"]>().toEqualTypeOf<Partial<Product> | null>();
    expectTypeOf<Entry["operation"]>().toEqualTypeOf<"create" | "update" | "delete">();
    expectTypeOf<keyof NonNullable<Entry["changes"]>>().toEqualTypeOf<keyof Product>();
    const noAudit = () =>
      crudkit({ database: { provider: "sqlite", url: ":memory:" }, resources: [clientProduct] });
    const plain = createClient<ReturnType<typeof noAudit>>({ baseURL: "http://127.0.0.1:1/api" });
    const never = () => {
      // @ts-expect-error the id is required
      void client.product.history();
      // @ts-expect-error ids are strings
      void client.product.history(42);
      // @ts-expect-error limit is a number
      void client.product.history("id", { limit: "ten" });
      // @ts-expect-error a history pages by cursor, not by page number
      void client.product.history("id", { page: 2 });
      // @ts-expect-error a history entry holds no field the record lacks
      void calls.first().then(({ data }) => data?.items[0]?.after?.colour);
      // @ts-expect-error without audit() on the server there is no history
      void plain.product.history("id");
    };
    expect([typeof never, Object.keys(calls).length, typeof plain.product.read]).toEqual([
      "function",
      2,
      "function",
    ]);
  });

  it("accept a Date or an ISO string for date fields", () => {
    const calls = () => [
      client.person.create({ name: "A", born: new Date() }),
      client.person.create({ name: "B", born: "2000-01-01" }),
    ];
    expect(typeof calls).toBe("function");
  });
});
