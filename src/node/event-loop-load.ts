// Whether the event loop is busy: the share of the last 20 ms it spent working rather than waiting
// for I/O, from libuv's own accounting (performance.eventLoopUtilization). It is sampled only while
// someone asks; a quiet process stops sampling until the next question.

import { performance } from "node:perf_hooks";

const SAMPLE_MS = 20;
/** Busy from this share of a sample on, until a sample falls under BUSY_UNTIL (no flapping). */
const BUSY_FROM = 0.9;
const BUSY_UNTIL = 0.75;

let busy = false;
let asked = false;
let sampler: NodeJS.Timeout | undefined;
let previous = performance.eventLoopUtilization();

function sample(): void {
  const now = performance.eventLoopUtilization();
  const share = performance.eventLoopUtilization(now, previous).utilization;
  previous = now;
  busy = share >= (busy ? BUSY_UNTIL : BUSY_FROM);
  if (!asked) {
    clearInterval(sampler);
    sampler = undefined;
    busy = false;
  }
  asked = false;
}

/** True when the event loop worked through nearly all of the last sample (20 ms). */
export function eventLoopBusy(): boolean {
  asked = true;
  if (!sampler) {
    previous = performance.eventLoopUtilization();
    sampler = setInterval(sample, SAMPLE_MS);
    sampler.unref();
  }
  return busy;
}
