// jwt(): the caller from a Bearer token, verified with jose against a shared secret, a public key
// or a JWKS URL (fetched, cached, and fetched again when a token names a key it has not seen,
// which is how key rotation reaches us). No token → anonymous; a bad one → 401.

import { createPublicKey, type KeyObject } from "node:crypto";
import {
  createRemoteJWKSet,
  type JWK,
  type JWTPayload,
  type JWTVerifyGetKey,
  type JWTVerifyOptions,
  errors as joseErrors,
  jwtVerify,
} from "jose";
import { APIError } from "../../core/errors.ts";
import type { MaybePromise, User } from "../../core/identity.ts";
import { checkOptionKeys, optionKeys } from "../../core/option-keys.ts";
import type { CrudkitPlugin } from "../../core/plugin.ts";

export interface JwtOptions {
  /** Shared secret for HS256/384/512. */
  secret?: string | Uint8Array;
  /** Public key (PEM, JWK or KeyObject) for RS*, PS*, ES* and EdDSA tokens. */
  publicKey?: string | JWK | KeyObject;
  /** Where the issuer publishes its keys. */
  jwksUrl?: string | URL;
  /** Required `iss`. */
  issuer?: string | readonly string[];
  /** Required `aud` (one of). */
  audience?: string | readonly string[];
  /** Algorithms accepted. @default HS256/384/512 for a secret; RS*, PS*, ES*, EdDSA for keys */
  algorithms?: readonly string[];
  /** Seconds of clock difference tolerated for `exp` and `nbf`. @default 5 */
  clockTolerance?: number;
  /** JWKS caching: how long keys are trusted, and the least time between two fetches, in ms. */
  jwks?: { cacheMaxAge?: number; cooldown?: number; timeout?: number };
  /** Maps verified claims to the user. @default `{ id: sub, roles: roles ?? [], claims }` */
  user?: (claims: JWTPayload) => MaybePromise<User | null>;
}

const ASYMMETRIC = ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"];

const JWT_OPTION_KEYS = optionKeys<JwtOptions>()(
  "secret publicKey jwksUrl issuer audience algorithms clockTolerance jwks user",
);

/**
 * Identifies callers by a bearer JWT, checked with a secret, a public key or a JWKS URL, and its
 * issuer, audience and expiry; a bad token answers 401.
 *
 * @example
 * jwt({ jwksUrl: "https://auth.example.com/.well-known/jwks.json", issuer: "https://auth.example.com", audience: "api" })
 */
export function jwt(options: JwtOptions) {
  checkOptionKeys(options, JWT_OPTION_KEYS, "jwt()");
  const sources = [options.secret, options.publicKey, options.jwksUrl].filter((s) => s !== undefined);
  if (sources.length !== 1) throw new Error("jwt(): give exactly one of secret, publicKey or jwksUrl.");
  const key = verificationKey(options);
  const verifyOptions: JWTVerifyOptions = {
    algorithms: [
      ...(options.algorithms ?? (options.secret !== undefined ? ["HS256", "HS384", "HS512"] : ASYMMETRIC)),
    ],
    clockTolerance: options.clockTolerance ?? 5,
    ...(options.issuer ? { issuer: options.issuer as string | string[] } : {}),
    ...(options.audience ? { audience: options.audience as string | string[] } : {}),
  };
  const toUser = options.user ?? defaultUser;

  return {
    securitySchemes: { BearerJWT: { type: "http", scheme: "bearer", bearerFormat: "JWT" } },
    id: "jwt",
    async identify(request: Request): Promise<User | null> {
      const header = request.headers.get("authorization");
      if (header === null) return null;
      const [scheme, token, ...rest] = header.trim().split(/\s+/);
      // Another scheme (Basic, say) is not ours to judge.
      if (scheme?.toLowerCase() !== "bearer") return null;
      if (!token || rest.length > 0 || token.length > 16384)
        throw new APIError("UNAUTHORIZED", "The Authorization header must be `Bearer <token>`.");
      let claims: JWTPayload;
      try {
        claims = (await jwtVerify(token, key as never, verifyOptions)).payload;
      } catch (error) {
        throw rejection(error);
      }
      const user = await toUser(claims);
      if (!user?.id) throw new APIError("UNAUTHORIZED", "The token names no user (no `sub` claim).");
      return user;
    },
  } satisfies CrudkitPlugin;
}

function verificationKey(options: JwtOptions): Uint8Array | KeyObject | JWTVerifyGetKey {
  if (options.secret !== undefined) {
    const secret =
      typeof options.secret === "string" ? new TextEncoder().encode(options.secret) : options.secret;
    // HS256 with fewer than 32 bytes of secret can be brute-forced.
    if (secret.byteLength < 32) throw new Error("jwt(): the secret must be at least 32 bytes.");
    return secret;
  }
  if (options.publicKey !== undefined) {
    const pk = options.publicKey;
    if (typeof pk === "string") return createPublicKey(pk);
    if ("kty" in pk) return createPublicKey({ key: pk as never, format: "jwk" });
    return pk as KeyObject;
  }
  return createRemoteJWKSet(new URL(options.jwksUrl!), {
    cacheMaxAge: options.jwks?.cacheMaxAge ?? 10 * 60 * 1000,
    cooldownDuration: options.jwks?.cooldown ?? 30 * 1000,
    timeoutDuration: options.jwks?.timeout ?? 5000,
  });
}

function defaultUser(claims: JWTPayload): User | null {
  if (typeof claims.sub !== "string" || claims.sub === "") return null;
  const roles = Array.isArray(claims.roles)
    ? claims.roles.filter((r): r is string => typeof r === "string")
    : [];
  return { id: claims.sub, roles, claims };
}

/** What the caller is told: never jose's internals, and no 401 when it is the key server that failed. */
function rejection(error: unknown): APIError {
  if (error instanceof joseErrors.JWTExpired) return new APIError("UNAUTHORIZED", "The token has expired.");
  if (error instanceof joseErrors.JWTClaimValidationFailed) {
    const claim = /^[a-z]{2,5}$/.test(error.claim) ? error.claim : "a";
    return new APIError("UNAUTHORIZED", `The token's "${claim}" claim is not valid.`);
  }
  if (
    error instanceof joseErrors.JWKSTimeout ||
    error instanceof joseErrors.JWKSInvalid ||
    isFetchFailure(error)
  )
    return new APIError("SERVICE_UNAVAILABLE", "The token's signing keys could not be fetched; try again.");
  return new APIError("UNAUTHORIZED", "The token is not valid.");
}

function isFetchFailure(error: unknown): boolean {
  return (
    error instanceof TypeError ||
    (error instanceof joseErrors.JOSEError &&
      error.code === "ERR_JOSE_GENERIC" &&
      /Key Set|JWKS|fetch/i.test(error.message))
  );
}
