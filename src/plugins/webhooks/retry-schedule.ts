// When a failed delivery is tried again: capped exponential backoff with jitter. With the
// defaults (12 attempts, the first retry after 5 s, each wait three times the one before, at most
// 6 h), the retries come after about 5 s, 15 s, 45 s, 2 min, 7 min, 20 min, 1 h, 3 h, then every
// 6 h: about 23 hours from the first attempt to the last. Each wait is drawn from 80–120% of its
// value, so receivers that came back are not hit by every instance's retries in the same second.

import { ConfigError } from "../../core/errors.ts";

export interface RetryOptions {
  /** Attempts in all, the first included; after the last the event is dead-lettered. @default 12 */
  attempts?: number;
  /** Seconds before the first retry. @default 5 */
  firstDelay?: number;
  /** The longest wait between two attempts, in seconds. @default 21600 (6 hours) */
  maxDelay?: number;
}

export interface RetrySchedule {
  attempts: number;
  /** Milliseconds to wait after failed attempt number `attempt` (1-based). */
  delayAfter(attempt: number): number;
}

const GROWTH = 3;

export function retrySchedule(options: RetryOptions = {}): RetrySchedule {
  const attempts = options.attempts ?? 12;
  const first = options.firstDelay ?? 5;
  const max = options.maxDelay ?? 6 * 60 * 60;
  if (!Number.isInteger(attempts) || attempts < 1 || attempts > 100)
    throw new ConfigError("webhooks(): retry.attempts must be a whole number from 1 to 100.");
  if (!(first > 0) || !(max >= first) || !Number.isFinite(max))
    throw new ConfigError(
      "webhooks(): retry.firstDelay must be above 0 seconds, and retry.maxDelay at least firstDelay.",
    );
  return {
    attempts,
    delayAfter(attempt) {
      const seconds = Math.min(first * GROWTH ** (attempt - 1), max);
      return Math.round(seconds * 1000 * (0.8 + Math.random() * 0.4));
    },
  };
}
