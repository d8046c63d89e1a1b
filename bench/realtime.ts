// `npm run bench -- --realtime`: 1,000 event-stream subscribers on one instance of the example
// API, 100 product creates per second; how long each event takes from the write's request to each
// subscriber (p50, p99, max), whether every subscriber got every event, and the server's RSS
// before, after and at its peak. Target (issue 15): p99 ≤ 100 ms.
//   --subscribers <n> (1000)  --rate <writes/s> (100)  --duration <s> (10)

import { readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { HEADERS, peakRss, start, stop } from "./servers.ts";

export interface RealtimeBenchOptions {
  subscribers: number;
  rate: number;
  seconds: number;
}

const rssOf = (pid: number) => {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  return Math.round(Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024);
};

export async function runRealtime({ subscribers, rate, seconds }: RealtimeBenchOptions): Promise<boolean> {
  const dir = await mkdtemp(join(tmpdir(), "crudkit-bench-rt-"));
  const api = await start("api", "examples/server.ts", dir, {
    audit: "off",
    cache: "off",
    realtime: "on",
    maxConnections: subscribers + 256,
  });
  const { hostname, port } = new URL(api.url);
  const sent = new Map<number, number>();
  const latencies: number[] = [];
  const sockets: Socket[] = [];
  let connected = 0;
  try {
    for (let i = 0; i < subscribers; i++) {
      const socket = connect(Number(port), hostname);
      sockets.push(socket);
      socket.setEncoding("utf8");
      let carry = "";
      let open = false;
      socket.on("data", (chunk: string) => {
        const now = performance.now();
        const text = carry + chunk;
        if (!open && text.includes(": connected")) {
          open = true;
          connected++;
        }
        const found = /"name":"rt-(\d+)"/g;
        let end = 0;
        for (let match = found.exec(text); match; match = found.exec(text)) {
          const at = sent.get(Number(match[1]));
          if (at !== undefined) latencies.push(now - at);
          end = match.index + match[0].length;
        }
        carry = text.slice(Math.max(end, text.length - 64));
      });
      socket.on("error", () => {});
      socket.write(
        `GET /api/products/events HTTP/1.1\r\nHost: ${hostname}\r\nAccept: text/event-stream\r\nx-api-key: ${HEADERS["x-api-key"]}\r\n\r\n`,
      );
      if (i % 100 === 99) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    for (let wait = 0; connected < subscribers && wait < 300; wait++)
      await new Promise((resolve) => setTimeout(resolve, 100));
    const rssBefore = rssOf(api.process.pid!);
    const writes = Math.round(rate * seconds);
    const begin = performance.now();
    const pending: Promise<unknown>[] = [];
    let failed = 0;
    for (let k = 0; k < writes; k++) {
      const due = begin + (k * 1000) / rate;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      sent.set(k, performance.now());
      pending.push(
        fetch(`${api.url}/api/product`, {
          method: "POST",
          headers: HEADERS,
          body: JSON.stringify({ name: `rt-${k}`, price: 1 }),
        }).then(
          async (r) => {
            await r.arrayBuffer();
            if (r.status !== 201) failed++;
          },
          () => failed++,
        ),
      );
    }
    await Promise.all(pending);
    const expected = writes * subscribers;
    for (let wait = 0; latencies.length < expected && wait < 100; wait++)
      await new Promise((resolve) => setTimeout(resolve, 100));
    const rssAfter = rssOf(api.process.pid!);
    latencies.sort((a, b) => a - b);
    const at = (q: number) =>
      latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? Number.NaN;
    const rows = [
      [
        "subscribers",
        "writes/s",
        "writes",
        "events due",
        "delivered",
        "p50",
        "p99",
        "max",
        "RSS before",
        "after",
        "peak",
      ],
      [
        String(connected),
        String(rate),
        String(writes),
        String(expected),
        String(latencies.length),
        `${at(0.5).toFixed(1)} ms`,
        `${at(0.99).toFixed(1)} ms`,
        `${(latencies.at(-1) ?? Number.NaN).toFixed(1)} ms`,
        `${rssBefore} MiB`,
        `${rssAfter} MiB (+${rssAfter - rssBefore})`,
        `${peakRss(api.process)} MiB`,
      ],
    ];
    const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
    console.log("\nrealtime: event delivery from the write's request to each subscriber");
    for (const row of rows) console.log(row.map((cell, i) => cell.padEnd(widths[i]!)).join("  "));
    const ok = connected === subscribers && latencies.length === expected && at(0.99) <= 100 && failed === 0;
    if (!ok)
      console.log(
        `realtime target missed: p99 ${at(0.99).toFixed(1)} ms (target 100), ${latencies.length}/${expected} delivered, ${failed} failed writes`,
      );
    return ok;
  } finally {
    for (const socket of sockets) socket.destroy();
    await stop(api);
    await rm(dir, { recursive: true, force: true });
  }
}
