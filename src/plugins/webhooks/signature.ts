// Standard Webhooks signatures (https://www.standardwebhooks.com): each POST carries
// `webhook-id`, `webhook-timestamp` (seconds) and `webhook-signature`, a space-separated list of
// `v1,<base64 HMAC-SHA256 of "id.timestamp.body">`, one per secret, so a receiver that holds any
// of them (the old one during a rotation, or the new one) verifies with `standardwebhooks` or svix.

import { createHmac } from "node:crypto";
import { ConfigError } from "../../core/errors.ts";

const PREFIX = "whsec_";

/**
 * The key bytes of a secret written as Standard Webhooks writes them: `whsec_` and the key in
 * base64, 24 to 64 bytes (generate one with `"whsec_" + randomBytes(32).toString("base64")`).
 */
export function secretKey(endpoint: string, secret: unknown): Buffer {
  const where = `webhooks(): endpoint "${endpoint}"`;
  if (typeof secret !== "string" || !secret.startsWith(PREFIX))
    throw new ConfigError(
      `${where} needs its secret as "whsec_" followed by base64 (24 to 64 random bytes), as Standard Webhooks receivers expect.`,
    );
  const base64 = secret.slice(PREFIX.length);
  const key = Buffer.from(base64, "base64");
  // Buffer.from skips what is not base64: compare back so a typo is not a shorter key in silence.
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(base64) || key.length < 24 || key.length > 64)
    throw new ConfigError(`${where}: its secret is not "whsec_" followed by 24 to 64 bytes in base64.`);
  return key;
}

/** The three headers that sign `body` as the message `id`, at `timestamp` (seconds since 1970). */
export function signatureHeaders(
  id: string,
  timestamp: number,
  body: string,
  keys: readonly Buffer[],
): Record<string, string> {
  const signed = `${id}.${timestamp}.${body}`;
  return {
    "webhook-id": id,
    "webhook-timestamp": String(timestamp),
    "webhook-signature": keys
      .map((key) => `v1,${createHmac("sha256", key).update(signed).digest("base64")}`)
      .join(" "),
  };
}
