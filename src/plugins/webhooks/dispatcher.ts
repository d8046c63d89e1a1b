// The dispatcher each instance runs: it claims due events, sends them side by side, and settles
// each (delivered, due again after a wait, or dead). A write on this instance wakes it at once;
// events written elsewhere (another instance, before a restart) are found by a poll.

import type http from "node:http";
import type https from "node:https";
import { endSpan, startRootSpan, type Telemetry } from "../../kit/index.ts";
import type { ClaimedEvent, OutboxStore } from "./outbox-store.ts";
import type { RetrySchedule } from "./retry-schedule.ts";
import { type Outcome, send, type Target } from "./send.ts";
import { signatureHeaders } from "./signature.ts";

export interface DispatchTarget extends Target {
  keys: readonly Buffer[];
}

export interface DispatcherOptions {
  store: OutboxStore;
  targets: ReadonlyMap<string, DispatchTarget>;
  retry: RetrySchedule;
  /** Events sent at once. */
  concurrency: number;
  pollMs: number;
  timeoutMs: number;
  allowPrivateNetworks: boolean;
  agents: { http: http.Agent; https: https.Agent };
  log: (message: string, error?: unknown) => void;
  /** Counts deliveries and failures (metrics()). */
  count: Telemetry["count"];
  /** Each delivery is a trace of its own (`crudkit({ tracing })`). */
  tracing: boolean;
}

export class Dispatcher {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private closed = false;
  /** Only a started dispatcher sends on its own: the CLI's and a `deliver: false` instance's never do. */
  private started = false;
  /** Endpoints whose last attempt failed: a failure is logged when an endpoint starts failing, not each time. */
  private readonly failing = new Set<string>();

  constructor(private readonly options: DispatcherOptions) {}

  start(): void {
    this.started = true;
    this.timer = setInterval(() => this.wake(), this.options.pollMs);
    this.timer.unref();
    this.wake();
  }

  /** Sends what is due now; a call while a round runs makes it look again when done. */
  wake(): void {
    if (this.closed || !this.started) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.rounds().finally(() => {
      this.running = undefined;
    });
  }

  /** Runs until nothing is due (tests, `app.webhooks.flush()`). */
  async flush(): Promise<void> {
    await this.running;
    while (!this.closed && (await this.round()) > 0);
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    await this.running;
  }

  private async rounds(): Promise<void> {
    do {
      this.again = false;
      try {
        while (!this.closed && (await this.round()) > 0);
      } catch (error) {
        // The database went away: the next poll tries again, nothing is lost (the events stay due).
        this.options.log("crudkit: webhook dispatch could not read the outbox", error);
        return;
      }
    } while (this.again && !this.closed);
  }

  /** One claim and its deliveries; returns how many events it sent. */
  private async round(): Promise<number> {
    const { store, concurrency, timeoutMs } = this.options;
    // The claim outlives the longest attempt (twice, and 5 s for the settling), so no other instance
    // sends it while this one waits; an instance that died holding it leaves it due after that.
    const events = await store.claim(concurrency, timeoutMs * 2 + 5000);
    if (events.length === 0) return 0;
    const outcomes = await Promise.all(events.map((event) => this.attempt(event)));
    const delivered: string[] = [];
    const failures: Promise<void>[] = [];
    events.forEach((event, i) => {
      const outcome = outcomes[i]!;
      if (outcome.ok) {
        delivered.push(event.id);
        this.failing.delete(event.endpoint);
      } else failures.push(this.retryLater(event, outcome.reason));
    });
    await Promise.all([store.delivered(delivered), ...failures]);
    if (delivered.length > 0) this.options.count("webhooks.delivered", delivered.length);
    return events.length;
  }

  private attempt(event: ClaimedEvent): Promise<Outcome> {
    const target = this.options.targets.get(event.endpoint);
    // An endpoint no longer configured: its events wait (dead, after the attempts) for replay.
    if (!target) return Promise.resolve({ ok: false, reason: "endpoint not configured" });
    const timestamp = Math.floor(Date.now() / 1000);
    const headers = signatureHeaders(event.id, timestamp, event.body, target.keys);
    // Its own trace: a delivery runs after the request that made the event (never its URL or body).
    const span = this.options.tracing
      ? startRootSpan("crudkit.webhook.deliver", {
          "crudkit.webhook.endpoint": event.endpoint,
          "crudkit.webhook.attempt": event.attempt,
        })
      : undefined;
    // Whatever goes wrong in one attempt fails that event only: the round still settles the rest.
    const sending = send(target, headers, event.body, this.options).catch(
      (): Outcome => ({ ok: false, reason: "not sent" }),
    );
    if (!span) return sending;
    return sending.then(
      (outcome) => {
        endSpan(span, outcome.ok ? undefined : new Error("delivery failed"));
        return outcome;
      },
      (error: unknown) => {
        endSpan(span, error);
        throw error;
      },
    );
  }

  private async retryLater(event: ClaimedEvent, reason: string): Promise<void> {
    const { retry, log } = this.options;
    const last = event.attempt >= retry.attempts;
    const retryAt = last ? undefined : new Date(Date.now() + retry.delayAfter(event.attempt));
    await this.options.store.failed(event.id, reason, retryAt);
    this.options.count(last ? "webhooks.dead" : "webhooks.failed");
    if (last)
      log(
        `crudkit: webhook event ${event.id} to endpoint "${event.endpoint}" is dead after ${event.attempt} attempts (${reason}); ` +
          "`crudkit webhooks replay` sends it again",
      );
    else if (!this.failing.has(event.endpoint)) {
      this.failing.add(event.endpoint);
      log(`crudkit: webhook endpoint "${event.endpoint}" failed (${reason}); retrying with backoff`);
    }
  }
}
