// A real webhook receiver on 127.0.0.1 for the tests: it records each request (headers and body),
// verifies nothing itself, and answers what the test says (a status, a redirect, or silence). It
// can go away (its port refuses connections) and come back on the same port.

import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface Delivery {
  id: string;
  timestamp: string;
  signature: string;
  headers: Record<string, string>;
  body: string;
  /** When it arrived (ms since 1970). */
  at: number;
  payload: { type: string; timestamp: string; data: Record<string, any> };
}

export interface Receiver {
  url: string;
  port: number;
  /** Requests answered with a 2xx, in the order they arrived. */
  deliveries: Delivery[];
  /** Requests answered with anything else. */
  refused: Delivery[];
  /** What the next requests get: a status (200 by default), or a function deciding per request. */
  answer: number | ((delivery: Delivery) => number | "hang");
  /** Closes the port (connections are refused) until `up()`. */
  down(): Promise<void>;
  up(): Promise<void>;
  /** Resolves when `count` deliveries arrived (rejects after `ms`). */
  waitFor(count: number, ms?: number): Promise<void>;
  close(): Promise<void>;
}

export async function startReceiver(port = 0): Promise<Receiver> {
  let server: Server | undefined;
  const waiters: (() => void)[] = [];
  const receiver: Receiver = {
    url: "",
    port,
    deliveries: [],
    refused: [],
    answer: 200,
    async down() {
      const s = server;
      server = undefined;
      if (!s) return;
      await new Promise<void>((resolve) => {
        s.close(() => resolve());
        s.closeAllConnections();
      });
    },
    async up() {
      server = createServer(handle);
      server.keepAliveTimeout = 1000;
      await new Promise<void>((resolve) => server!.listen(receiver.port, "127.0.0.1", resolve));
      receiver.port = (server.address() as AddressInfo).port;
      receiver.url = `http://127.0.0.1:${receiver.port}/hooks`;
    },
    waitFor(count, ms = 20_000) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`${receiver.deliveries.length} of ${count} deliveries within ${ms} ms`)),
          ms,
        );
        const check = () => {
          if (receiver.deliveries.length >= count) {
            clearTimeout(timer);
            resolve();
          } else waiters.push(check);
        };
        check();
      });
    },
    close: () => receiver.down(),
  };

  async function handle(request: IncomingMessage, response: import("node:http").ServerResponse) {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString("utf8");
    const header = (name: string) => String(request.headers[name] ?? "");
    const delivery: Delivery = {
      id: header("webhook-id"),
      timestamp: header("webhook-timestamp"),
      signature: header("webhook-signature"),
      headers: Object.fromEntries(Object.entries(request.headers).map(([k, v]) => [k, String(v)])),
      body,
      at: Date.now(),
      payload: JSON.parse(body),
    };
    const answer = typeof receiver.answer === "function" ? receiver.answer(delivery) : receiver.answer;
    if (answer === "hang") return; // never answers: the sender's timeout ends it
    if (answer >= 200 && answer < 300) receiver.deliveries.push(delivery);
    else receiver.refused.push(delivery);
    response.writeHead(answer, answer >= 300 && answer < 400 ? { location: "http://169.254.169.254/" } : {});
    response.end("ok");
    for (const wake of waiters.splice(0)) wake();
  }
  await receiver.up();
  return receiver;
}
