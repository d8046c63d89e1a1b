// Issue 42 §8, written as the attack: at `maxKeys` the memory store scanned every counter for each
// new caller (about 1.7 ms each at 100,000), a CPU lever for anyone with many addresses. Now a new
// caller on a full store drops the oldest counter in constant time. The timing bound below is
// three orders of magnitude from the old cost, not a benchmark (that is bench/rate-limit-store.ts).

import { memoryRateLimitStore } from "crudkit-api/plugins";
import { describe, expect, it } from "vitest";

describe("memoryRateLimitStore at maxKeys", () => {
  it("takes 20,000 new callers on a full store of 100,000 in well under a second each thousand", async () => {
    const store = memoryRateLimitStore({ maxKeys: 100_000 });
    for (let i = 0; i < 100_000; i++) await store.add(`fill-${i}`, 1, 60_000);
    const started = performance.now();
    for (let i = 0; i < 20_000; i++) await store.add(`new-${i}`, 1, 60_000);
    const perCaller = (performance.now() - started) / 20_000;
    // The old scan: ~1,700 µs per new caller here. Constant time: a few µs.
    expect(perCaller).toBeLessThan(100 / 1000);
  }, 60_000);

  it("drops the oldest counters first and keeps counting the newest", async () => {
    const store = memoryRateLimitStore({ maxKeys: 3 });
    for (const key of ["a", "b", "c"]) await store.add(key, 1, 60_000);
    expect((await store.add("c", 1, 60_000)).total).toBe(2);
    await store.add("d", 1, 60_000); // full: "a" goes
    expect((await store.add("b", 1, 60_000)).total).toBe(2);
    expect((await store.add("a", 1, 60_000)).total).toBe(1); // counted anew; full: "b" goes
    expect((await store.add("d", 1, 60_000)).total).toBe(2);
    expect((await store.add("c", 1, 60_000)).total).toBe(3);
  });

  it("lets expired counters go before live ones", async () => {
    const store = memoryRateLimitStore({ maxKeys: 2 });
    await store.add("old", 1, 1); // a 1 ms window, over at once
    await store.add("live", 1, 60_000);
    await new Promise((resolve) => setTimeout(resolve, 5));
    await store.add("new", 1, 60_000);
    expect((await store.add("live", 1, 60_000)).total).toBe(2);
  });
});
