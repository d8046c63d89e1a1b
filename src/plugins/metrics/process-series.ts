// The process's series, under prom-client's default names (dashboards made for them work), read
// at a scrape. Not prom-client's collectDefaultMetrics(): its garbage-collection series observe
// every collection, which cost about 4 µs of CPU per request on a read by id (measured, 0.94 of
// the throughput without it); these cost nothing between scrapes but the event-loop delay
// monitor, a timer in libuv.

import { monitorEventLoopDelay } from "node:perf_hooks";
import type * as Prom from "prom-client";

export function processSeries(prom: typeof Prom, registry: Prom.Registry): { close(): void } {
  const registers = [registry];
  const counter = (name: string, help: string, read: () => number) =>
    new prom.Counter({
      name,
      help,
      registers,
      collect() {
        this.reset();
        this.inc(read());
      },
    });
  const gauge = (name: string, help: string, read: () => number) =>
    new prom.Gauge({
      name,
      help,
      registers,
      collect() {
        this.set(read());
      },
    });
  counter(
    "process_cpu_user_seconds_total",
    "User CPU time spent in seconds.",
    () => process.cpuUsage().user / 1e6,
  );
  counter(
    "process_cpu_system_seconds_total",
    "System CPU time spent in seconds.",
    () => process.cpuUsage().system / 1e6,
  );
  counter("process_cpu_seconds_total", "Total user and system CPU time spent in seconds.", () => {
    const { user, system } = process.cpuUsage();
    return (user + system) / 1e6;
  });
  gauge("process_resident_memory_bytes", "Resident memory size in bytes.", () => process.memoryUsage.rss());
  gauge(
    "nodejs_heap_size_total_bytes",
    "Process heap size from Node.js in bytes.",
    () => process.memoryUsage().heapTotal,
  );
  gauge(
    "nodejs_heap_size_used_bytes",
    "Process heap size used from Node.js in bytes.",
    () => process.memoryUsage().heapUsed,
  );
  gauge(
    "nodejs_external_memory_bytes",
    "Node.js external memory size in bytes.",
    () => process.memoryUsage().external,
  );
  const started = Math.round(Date.now() / 1000 - process.uptime());
  gauge(
    "process_start_time_seconds",
    "Start time of the process since unix epoch in seconds.",
    () => started,
  );

  // The event loop's delay since the last scrape, as prom-client names it.
  const delay = monitorEventLoopDelay({ resolution: 20 });
  delay.enable();
  // With no sample since the last reset (two scrapes within 20 ms), min reads as 2^63: say 0.
  const seconds = (nanos: number) => (delay.count > 0 && Number.isFinite(nanos) ? nanos / 1e9 : 0);
  const lag = (suffix: string, help: string, read: () => number) =>
    gauge(`nodejs_eventloop_lag_${suffix}_seconds`, help, () => seconds(read()));
  lag("min", "The minimum recorded event loop delay.", () => delay.min);
  lag("max", "The maximum recorded event loop delay.", () => delay.max);
  lag("mean", "The mean of the recorded event loop delays.", () => delay.mean);
  lag("p50", "The 50th percentile of the recorded event loop delays.", () => delay.percentile(50));
  lag("p90", "The 90th percentile of the recorded event loop delays.", () => delay.percentile(90));
  // The last one read ends the window: the next scrape reports the delays since.
  lag("p99", "The 99th percentile of the recorded event loop delays.", () => {
    const p99 = delay.percentile(99);
    delay.reset();
    return p99;
  });
  return { close: () => delay.disable() };
}
