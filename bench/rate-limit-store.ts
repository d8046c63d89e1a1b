// The memory rate-limit store's cost per new caller, empty against full (maxKeys 100,000): the
// eviction a full store does for every new caller must be constant time (issue 42 §8).
//   npx tsx bench/rate-limit-store.ts

import { memoryRateLimitStore } from "../src/plugins/rate-limit/store.ts";

const MAX = 100_000;
const CALLERS = 50_000;

async function perNewCaller(prefill: number): Promise<number> {
  const store = memoryRateLimitStore({ maxKeys: MAX });
  for (let i = 0; i < prefill; i++) await store.add(`fill-${i}`, 1, 60_000);
  const started = process.hrtime.bigint();
  for (let i = 0; i < CALLERS; i++) await store.add(`caller-${i}`, 1, 60_000);
  return Number(process.hrtime.bigint() - started) / 1000 / CALLERS;
}

const empty = await perNewCaller(0);
const full = await perNewCaller(MAX);
console.log("| store | µs per new caller |\n|---|---|");
console.log(`| empty (${CALLERS.toLocaleString("en")} callers) | ${empty.toFixed(2)} |`);
console.log(`| full at maxKeys ${MAX.toLocaleString("en")} | ${full.toFixed(2)} |`);
console.log(`full / empty: ${(full / empty).toFixed(2)}`);
