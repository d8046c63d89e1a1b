// One delivery attempt: a POST of the signed body, with a deadline, reading at most a few KB of
// the answer, following no redirect. The outcome is a short reason a log or `webhooks status`
// may show: never the URL (a Slack-style URL holds its secret in its path), a header or a body.

import http from "node:http";
import https from "node:https";
import { isIP } from "node:net";
import { guardedLookup, hostOf, isPrivateAddress } from "./address-guard.ts";

/** Bytes of an answer read before the connection is dropped: only its status matters. */
const ANSWER_LIMIT = 4096;

export interface Target {
  url: URL;
  headers: Readonly<Record<string, string>>;
}

export interface SendOptions {
  timeoutMs: number;
  allowPrivateNetworks: boolean;
  agents: { http: http.Agent; https: https.Agent };
}

/** `ok`, or why not: `status 500`, `redirect 301`, `timeout`, `private address`, `ECONNREFUSED`… */
export type Outcome = { ok: true } | { ok: false; reason: string };

export function send(target: Target, headers: Record<string, string>, body: string, options: SendOptions) {
  return new Promise<Outcome>((resolve) => {
    const { url } = target;
    const host = hostOf(url);
    // A literal address is connected to without a lookup: judged here, on every attempt.
    if (!options.allowPrivateNetworks && isIP(host) !== 0 && isPrivateAddress(host))
      return resolve({ ok: false, reason: "private address" });
    const secure = url.protocol === "https:";
    let settled = false;
    const settle = (outcome: Outcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(outcome);
    };
    let request: http.ClientRequest;
    try {
      request = (secure ? https : http).request(
        url,
        {
          method: "POST",
          agent: secure ? options.agents.https : options.agents.http,
          lookup: options.allowPrivateNetworks ? undefined : guardedLookup,
          headers: {
            ...target.headers,
            ...headers,
            "content-type": "application/json",
            "content-length": String(Buffer.byteLength(body)),
            "user-agent": "crudkit-webhooks",
          },
        },
        (response) => {
          const status = response.statusCode ?? 0;
          let read = 0;
          response.on("data", (chunk: Buffer) => {
            read += chunk.length;
            if (read > ANSWER_LIMIT) response.destroy();
          });
          response.on("error", () => {});
          response.on("close", () => settle(outcomeOf(status)));
          response.on("end", () => settle(outcomeOf(status)));
        },
      );
    } catch (error) {
      // Refused before anything was sent (a header Node will not write, say): this attempt failed,
      // not the others of its round.
      return resolve({
        ok: false,
        reason: `not sent (${(error as NodeJS.ErrnoException).code ?? "invalid request"})`,
      });
    }
    const timer = setTimeout(() => {
      settle({ ok: false, reason: "timeout" });
      request.destroy();
    }, options.timeoutMs);
    request.on("error", (error: NodeJS.ErrnoException) =>
      settle({
        ok: false,
        reason: error.code === "EPRIVATE" ? "private address" : (error.code ?? "connection failed"),
      }),
    );
    request.end(body);
  });
}

function outcomeOf(status: number): Outcome {
  if (status >= 200 && status < 300) return { ok: true };
  if (status >= 300 && status < 400) return { ok: false, reason: `redirect ${status} (not followed)` };
  return { ok: false, reason: `status ${status}` };
}
