// Issue 42, the smaller holes, each written as the attack: plugin order changing what an
// Idempotency-Key does (§6), a 3 MB 400 for a body of 60,000 unknown keys (§12), authenticated
// answers without `Cache-Control: private, no-store` and the example page without a CSP (§13).

import { apiKey, type CrudkitPlugin, crudkit, MemoryStorage } from "crudkit-api";
import { audit, cache, idempotency, rateLimit, upload } from "crudkit-api/plugins";
import { describe, expect, it } from "vitest";
import { createExampleApp } from "../examples/app.ts";
import { withSite } from "../examples/site.ts";
import { appPerDialect, forEachDialect } from "./dialects.ts";
import { openProduct } from "./fixtures.ts";
import { call, tempUploadDirs } from "./helpers.ts";

function permutations<T>(items: readonly T[]): T[][] {
  if (items.length <= 1) return [[...items]];
  return items.flatMap((item, i) =>
    permutations([...items.slice(0, i), ...items.slice(i + 1)]).map((rest) => [item, ...rest]),
  );
}

const keys = apiKey({ keys: { "user-key": { id: "u" } } });
const user = { "x-api-key": "user-key" };

// Each on SQLite and PostgreSQL: the attacks do not depend on the engine, the apps run on both.
forEachDialect(
  (dialect) => {
    describe("§6 plugin order never changes what an Idempotency-Key does", () => {
      const makers: [string, () => CrudkitPlugin][] = [
        ["idempotency", () => idempotency()],
        ["rateLimit", () => rateLimit({ max: 1000 })],
        ["cache", () => cache()],
        ["audit", () => audit()],
      ];
      it.each(permutations(makers).map((order) => [order.map(([name]) => name).join(" → "), order] as const))(
        "%s: the same key twice creates one record and replays the first answer",
        async (_, order) => {
          const app = crudkit({
            database: await dialect.fresh(),
            autoMigrate: true,
            resources: [openProduct],
            plugins: [keys, ...order.map(([, make]) => make())],
          });
          try {
            const headers = { ...user, "idempotency-key": "order-test-1" };
            const first = await call(app, "POST", "/api/product", {
              headers,
              body: { name: "Hat", price: 5 },
            });
            const again = await call(app, "POST", "/api/product", {
              headers,
              body: { name: "Hat", price: 5 },
            });
            expect(first.status).toBe(201);
            expect(again.status).toBe(201);
            expect(again.headers.get("idempotent-replayed")).toBe("true");
            expect(again.body.id).toBe(first.body.id);
            expect((await call(app, "GET", "/api/products", { headers: user })).body.items).toHaveLength(1);
          } finally {
            await app.close();
          }
        },
      );
    });

    describe("§12 a body of 60,000 unknown keys", () => {
      const app = appPerDialect(dialect, (database) =>
        crudkit({
          database,
          autoMigrate: true,
          resources: [openProduct],
        }),
      );

      it("gets a short 400 listing the first 50 and counting the rest", async () => {
        const body: Record<string, number> = { name: 1 as never, price: 1 };
        for (let i = 0; i < 60_000; i++) body[`k${i}`] = i;
        const raw = JSON.stringify(body);
        expect(raw.length).toBeGreaterThan(600_000);
        const res = await call(app, "POST", "/api/product", {
          rawBody: raw,
          headers: { "content-type": "application/json" },
        });
        expect(res.status).toBe(400);
        expect(res.body.code).toBe("VALIDATION_ERROR");
        expect(res.body.details).toHaveLength(50);
        expect(res.body.message).toMatch(/and 59999 more; the first 50 are listed/);
        expect(res.text.length).toBeLessThan(10_000);
      });

      it("a 10 KB key is clipped in the answer", async () => {
        const res = await call(app, "POST", "/api/product", {
          body: { name: "a", price: 1, ["x".repeat(10_000)]: 1 },
        });
        expect(res.status).toBe(400);
        expect(res.text.length).toBeLessThan(1_000);
      });
    });

    describe("§13 what answers tell caches and browsers", () => {
      const app = appPerDialect(dialect, (database) =>
        crudkit({
          database,
          autoMigrate: true,
          resources: [openProduct],
          plugins: [keys],
        }),
      );

      it("an answer for an identified caller is private, no-store; an anonymous one is not marked", async () => {
        const created = await call(app, "POST", "/api/product", {
          headers: user,
          body: { name: "Hat", price: 5 },
        });
        expect(created.headers.get("cache-control")).toBe("private, no-store");
        for (const path of ["/api/products", `/api/product/${created.body.id}`]) {
          expect((await call(app, "GET", path, { headers: user })).headers.get("cache-control")).toBe(
            "private, no-store",
          );
          expect((await call(app, "GET", path)).headers.get("cache-control")).toBeNull();
        }
      });

      it("the example page and client.js carry a CSP, nosniff and frame-ancestors", async () => {
        const { uploadDir, spoolDir } = tempUploadDirs();
        const example = createExampleApp({
          database: await dialect.fresh(),
          apiKey: "k",
          userApiKey: "u",
          uploadDir,
          spoolDir,
          cache: false,
          audit: false,
          realtime: false,
        });
        const site = await withSite(example, uploadDir);
        try {
          for (const path of ["/", "/client.js"]) {
            const res = await site.handler(new Request(`http://localhost${path}`));
            expect(res.status).toBe(200);
            const csp = res.headers.get("content-security-policy") ?? "";
            expect(csp).toContain("default-src 'self'");
            expect(csp).toContain("frame-ancestors 'none'");
            expect(csp).not.toContain("unsafe-inline");
            expect(res.headers.get("x-content-type-options")).toBe("nosniff");
          }
        } finally {
          await example.close();
        }
      });
    });

    describe("§9 failed authentication is rate-limited per address", () => {
      const app = appPerDialect(dialect, (database) =>
        crudkit({
          database,
          autoMigrate: true,
          resources: [openProduct],
          plugins: [keys, rateLimit({ max: 5 })],
        }),
      );
      const from = (ip: string, key: string) =>
        app.handler(new Request("http://localhost/api/products", { headers: { "x-api-key": key } }), { ip });

      it("ten wrong keys: five 401s, then 429s, even for the right key, from that address only", async () => {
        const statuses: number[] = [];
        for (let i = 0; i < 10; i++) statuses.push((await from("127.0.0.9", `guess-${i}`)).status);
        expect(statuses).toEqual([401, 401, 401, 401, 401, 429, 429, 429, 429, 429]);
        const right = await from("127.0.0.9", "user-key");
        expect(right.status).toBe(429);
        expect(right.headers.get("retry-after")).toMatch(/^\d+$/);
        expect((await from("127.0.0.10", "user-key")).status).toBe(200);
      });
    });

    describe("§7 the client address is the one trusted proxies name, read from the right", () => {
      const app = appPerDialect(dialect, (database) =>
        crudkit({
          database,
          autoMigrate: true,
          resources: [openProduct],
          trustProxy: ["127.0.0.1"],
          plugins: [rateLimit({ max: 2, by: "ip" }), audit({ access: { read: true } })],
        }),
      );
      const through = (forwardedFor: string, socket = "127.0.0.1") =>
        app.handler(
          new Request("http://localhost/api/product", {
            method: "POST",
            headers: { "content-type": "application/json", "x-forwarded-for": forwardedFor },
            body: JSON.stringify({ name: "n", price: 1 }),
          }),
          { ip: socket },
        );

      it("a client's own X-Forwarded-For entries change neither its bucket nor its audited address", async () => {
        // The proxy appends the real client (203.0.113.9); the client wrote the rest.
        const statuses = [];
        for (const spoofed of ["6.6.6.6", "7.7.7.7", "8.8.8.8"])
          statuses.push((await through(`${spoofed}, 203.0.113.9`)).status);
        expect(statuses).toEqual([201, 201, 429]);
        // Another client behind the same proxy has a bucket of its own.
        expect((await through("203.0.113.10")).status).toBe(201);
        // From an address that is not a trusted proxy, the header is ignored.
        expect((await through("203.0.113.77", "198.51.100.1")).status).toBe(201);
        const logs = await call(app, "GET", "/api/audit/logs?limit=10");
        const ips = new Set((logs.body.items as { ip: string }[]).map((e) => e.ip));
        expect(ips).toEqual(new Set(["203.0.113.9", "203.0.113.10", "198.51.100.1"]));
      });

      it("IPv6 callers share their /64; IPv4-mapped addresses stay their own", async () => {
        const v6 = crudkit({
          database: await dialect.fresh(),
          autoMigrate: true,
          resources: [openProduct],
          plugins: [rateLimit({ max: 2, by: "ip" })],
        });
        try {
          const from = (ip: string) => v6.handler(new Request("http://localhost/api/products"), { ip });
          expect((await from("2001:db8:1:2::1")).status).toBe(200);
          expect((await from("2001:db8:1:2:ffff::9")).status).toBe(200);
          expect((await from("2001:db8:1:2::abcd")).status).toBe(429);
          expect((await from("2001:db8:1:3::1")).status).toBe(200);
          expect((await from("::ffff:127.0.0.5")).status).toBe(200);
          expect((await from("::ffff:127.0.0.6")).status).toBe(200);
        } finally {
          await v6.close();
        }
      });

      it("a bad trust list is a startup error, and audit({ trustProxy }) points to crudkit({ trustProxy })", () => {
        expect(() =>
          crudkit({
            database: { provider: "sqlite", url: ":memory:" },
            resources: [],
            trustProxy: ["not-an-ip"],
          }),
        ).toThrow(/trustProxy: "not-an-ip"/);
        expect(() => audit({ trustProxy: true } as never)).toThrow(/crudkit\(\{ trustProxy/);
      });
    });

    describe("§14 uploads: the body parser agrees with JSON.parse, and real files are not refused as spoofed", () => {
      const app = appPerDialect(dialect, (database) =>
        crudkit({
          database,
          autoMigrate: true,
          resources: [],
          plugins: [keys, upload({ storage: new MemoryStorage(), access: { upload: true, read: true } })],
        }),
      );
      const send = (raw: string) =>
        call(app, "POST", "/api/upload/file", {
          headers: { ...user, "content-type": "application/json" },
          rawBody: raw,
        });

      it("an escaped quote inside the base64 string is refused, as JSON.parse reads on past it", async () => {
        // Eight base64 characters (a whole group), then an escaped quote: an earlier parser ended the
        // string there and stored "hello!", while JSON.parse finds no end to it.
        const raw = '{"filename":"a.txt","mimeType":"text/plain","file":"aGVsbG8h\\"}';
        expect(() => JSON.parse(raw)).toThrow();
        const res = await send(raw);
        expect(res.status).toBe(400);
        const smuggled = '{"filename":"a.txt","mimeType":"text/plain","file":"aGVsbG8h\\",\\"x\\":\\"y"}';
        expect((await send(smuggled)).status).toBe(400);
      });

      it("an MP3 without an ID3 tag and an empty zip are accepted as what they are", async () => {
        const mp3 = Buffer.concat([Buffer.from([0xff, 0xfb, 0x90, 0x64]), Buffer.alloc(400)]);
        const zip = Buffer.from([0x50, 0x4b, 0x05, 0x06, ...Array(18).fill(0)]);
        for (const [file, mimeType, filename] of [
          [mp3, "audio/mpeg", "song.mp3"],
          [zip, "application/zip", "empty.zip"],
        ] as const) {
          const res = await send(JSON.stringify({ filename, mimeType, file: file.toString("base64") }));
          expect(res.status, res.text).toBe(201);
        }
        // A GIF declared as MP3 is still refused.
        const gif = Buffer.from("GIF89a0000000000");
        expect(
          (
            await send(
              JSON.stringify({ filename: "x.mp3", mimeType: "audio/mpeg", file: gif.toString("base64") }),
            )
          ).status,
        ).toBe(415);
      });
    });
  },
  ["sqlite", "postgres"],
);
