// jwt(): tokens made here with jose, verified by the plugin with a secret, a PEM public key, or a
// JWKS served on 127.0.0.1 whose keys rotate.

import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { type CrudkitPlugin, crudkit } from "crudkit-api";
import { type JwtOptions, jwt } from "crudkit-api/plugins";
import { exportJWK, exportSPKI, generateKeyPair, type JWK, type JWTPayload, SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, expectNoLeak } from "./helpers.ts";

const SECRET = "a test secret that is at least thirty-two bytes long";
const encoder = new TextEncoder();

const whoami: CrudkitPlugin = {
  id: "whoami",
  endpoints: [{ method: "GET", path: "/whoami", handler: async (ctx) => ({ user: await ctx.getUser() }) }],
};

function appWith(options: JwtOptions) {
  return crudkit({
    database: { provider: "sqlite", url: ":memory:" },
    resources: [],
    plugins: [jwt(options), whoami],
  });
}

type App = ReturnType<typeof appWith>;

async function whoIs(app: App, authorization?: string) {
  const response = await call(app, "GET", "/api/whoami", authorization ? { headers: { authorization } } : {});
  expectNoLeak(response.text);
  return response;
}

function claims(extra: JWTPayload = {}) {
  return new SignJWT({ roles: ["editor"], ...extra })
    .setSubject("user-1")
    .setIssuer("https://issuer.test")
    .setAudience("crudkit-api")
    .setIssuedAt()
    .setExpirationTime("5m");
}

describe("jwt() with an async user mapper (issue 45)", () => {
  const app = appWith({
    secret: SECRET,
    // A mapper may look the user up (a profile, a tenant) before the request goes on.
    user: async (payload) => {
      await new Promise((resolve) => setTimeout(resolve, 5));
      return payload.sub === "nobody" ? null : { id: `db:${payload.sub}`, roles: ["looked-up"] };
    },
  });
  afterAll(() => app.close());
  const sign = (token: SignJWT) => token.setProtectedHeader({ alg: "HS256" }).sign(encoder.encode(SECRET));

  it("waits for the mapper's user", async () => {
    const response = await whoIs(app, `Bearer ${await sign(claims())}`);
    expect(response.status).toBe(200);
    expect(response.body.user).toEqual({ id: "db:user-1", roles: ["looked-up"] });
  });

  it("a mapper that finds nobody is a 401, as a token without a subject", async () => {
    const response = await whoIs(app, `Bearer ${await sign(claims().setSubject("nobody"))}`);
    expect(response.status).toBe(401);
  });
});

describe("jwt() with a shared secret (HS256)", () => {
  const app = appWith({ secret: SECRET, issuer: "https://issuer.test", audience: "crudkit-api" });
  const sign = (token: SignJWT, secret = SECRET) =>
    token.setProtectedHeader({ alg: "HS256" }).sign(encoder.encode(secret));
  afterAll(() => app.close());

  it("turns a valid Bearer token into the user from its claims", async () => {
    const response = await whoIs(app, `Bearer ${await sign(claims())}`);
    expect(response.status).toBe(200);
    expect(response.body.user).toMatchObject({ id: "user-1", roles: ["editor"], claims: { sub: "user-1" } });
  });

  it("treats a request without a token (or with another scheme) as anonymous", async () => {
    expect((await whoIs(app)).body).toEqual({ user: null });
    expect((await whoIs(app, "Basic dXNlcjpwYXNz")).body).toEqual({ user: null });
  });

  it("answers 401 for expired, forged, tampered, wrong-issuer, wrong-audience and malformed tokens", async () => {
    const valid = await sign(claims());
    const [header, payload] = valid.split(".");
    const otherPayload = Buffer.from(
      JSON.stringify({
        sub: "admin",
        roles: ["admin"],
        iss: "https://issuer.test",
        aud: "crudkit-api",
        exp: 9999999999,
      }),
    ).toString("base64url");
    const unsigned = `${Buffer.from('{"alg":"none"}').toString("base64url")}.${payload}.`;
    const cases: [string, string, RegExp][] = [
      ["expired", await sign(claims().setExpirationTime(Math.floor(Date.now() / 1000) - 60)), /expired/],
      ["not yet valid", await sign(claims().setNotBefore("10m")), /"nbf" claim/],
      ["forged", await sign(claims(), "another secret that is also long enough to use"), /not valid/],
      ["tampered", `${header}.${otherPayload}.${valid.split(".")[2]}`, /not valid/],
      ["wrong issuer", await sign(claims().setIssuer("https://evil.test")), /"iss" claim/],
      ["wrong audience", await sign(claims().setAudience("another-api")), /"aud" claim/],
      ["alg none", unsigned, /not valid/],
      ["garbage", "not.a.token", /not valid/],
      [
        "no subject",
        await sign(
          new SignJWT({}).setIssuer("https://issuer.test").setAudience("crudkit-api").setExpirationTime("5m"),
        ),
        /no user/,
      ],
    ];
    for (const [name, token, message] of cases) {
      const response = await whoIs(app, `Bearer ${token}`);
      expect(response.status, name).toBe(401);
      expect(response.body.code, name).toBe("UNAUTHORIZED");
      expect(response.body.message, name).toMatch(message);
    }
    for (const header of ["Bearer", "Bearer ", "Bearer a b", `Bearer ${"x".repeat(20000)}`]) {
      expect((await whoIs(app, header)).status, header.slice(0, 20)).toBe(401);
    }
  });

  it("refuses unsafe configuration", () => {
    expect(() => jwt({ secret: "short" })).toThrow(/at least 32 bytes/);
    expect(() => jwt({ secret: SECRET, jwksUrl: "http://127.0.0.1/jwks" })).toThrow(/exactly one/);
    expect(() => jwt({})).toThrow(/exactly one/);
  });
});

describe("jwt() with a public key (RS256 PEM)", () => {
  it("accepts tokens of the key's pair and refuses an HS256 token signed with the public key itself", async () => {
    const { publicKey, privateKey } = await generateKeyPair("RS256", { extractable: true });
    const pem = await exportSPKI(publicKey);
    const app = appWith({ publicKey: pem });
    try {
      const token = await claims().setProtectedHeader({ alg: "RS256" }).sign(privateKey);
      expect((await whoIs(app, `Bearer ${token}`)).body.user.id).toBe("user-1");
      // The classic algorithm confusion: the public key used as an HMAC secret.
      const confused = await claims().setProtectedHeader({ alg: "HS256" }).sign(encoder.encode(pem));
      expect((await whoIs(app, `Bearer ${confused}`)).status).toBe(401);
    } finally {
      await app.close();
    }
  });
});

describe("jwt() with a JWKS URL on 127.0.0.1", () => {
  let server: Server;
  let jwksUrl: string;
  let published: JWK[] = [];
  let fetches = 0;
  let failing = false;
  let app: App;
  const keys: Record<string, { privateKey: CryptoKey; jwk: JWK; alg: string }> = {};

  async function addKey(kid: string, alg: "RS256" | "ES256") {
    const pair = await generateKeyPair(alg, { extractable: true });
    keys[kid] = {
      privateKey: pair.privateKey,
      jwk: { ...(await exportJWK(pair.publicKey)), kid, alg, use: "sig" },
      alg,
    };
  }
  const signWith = (kid: string) =>
    claims().setProtectedHeader({ alg: keys[kid]!.alg, kid }).sign(keys[kid]!.privateKey);

  beforeAll(async () => {
    await addKey("rsa-1", "RS256");
    await addKey("ec-1", "ES256");
    await addKey("rsa-2", "RS256");
    published = [keys["rsa-1"]!.jwk, keys["ec-1"]!.jwk];
    server = createServer((_request, response) => {
      fetches++;
      if (failing) {
        response.writeHead(500).end("down");
        return;
      }
      response
        .writeHead(200, { "content-type": "application/json" })
        .end(JSON.stringify({ keys: published }));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    jwksUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/.well-known/jwks.json`;
    app = appWith({ jwksUrl, issuer: "https://issuer.test", audience: "crudkit-api", jwks: { cooldown: 0 } });
  });
  afterAll(async () => {
    await app?.close();
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
  });

  it("verifies RS256 and ES256 tokens with keys fetched once and cached", async () => {
    for (let i = 0; i < 3; i++) {
      expect((await whoIs(app, `Bearer ${await signWith("rsa-1")}`)).body.user.id).toBe("user-1");
      expect((await whoIs(app, `Bearer ${await signWith("ec-1")}`)).body.user.id).toBe("user-1");
    }
    expect(fetches).toBe(1);
  });

  it("follows a key rotation: a new key is fetched, a retired key stops working", async () => {
    published = [keys["rsa-2"]!.jwk, keys["ec-1"]!.jwk];
    const rotated = await whoIs(app, `Bearer ${await signWith("rsa-2")}`);
    expect(rotated.status).toBe(200);
    expect(fetches).toBe(2);
    const retired = await whoIs(app, `Bearer ${await signWith("rsa-1")}`);
    expect(retired.status).toBe(401);
  });

  it("answers 503, not 401, when the key server fails", async () => {
    const fresh = appWith({ jwksUrl, jwks: { cooldown: 0 } });
    failing = true;
    try {
      const response = await whoIs(fresh, `Bearer ${await signWith("ec-1")}`);
      expect(response.status).toBe(503);
      expect(response.body.code).toBe("SERVICE_UNAVAILABLE");
    } finally {
      failing = false;
      await fresh.close();
    }
    const unreachable = appWith({ jwksUrl: "http://127.0.0.1:1/jwks.json" });
    try {
      expect((await whoIs(unreachable, `Bearer ${await signWith("ec-1")}`)).status).toBe(503);
    } finally {
      await unreachable.close();
    }
  });
});
