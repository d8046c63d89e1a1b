// Record ids: UUIDv7 (RFC 9562), time-ordered so new keys land at the end of the primary key
// B-tree. Within one millisecond a 12-bit counter in `rand_a` keeps ids from this process
// increasing (RFC 9562 §6.2, method 1), so "newest first" holds even for same-millisecond writes.

import { randomFillSync } from "node:crypto";

const POOL_SIZE = 16 * 256;
const pool = Buffer.allocUnsafe(POOL_SIZE);
let offset = POOL_SIZE;
const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));
const COUNTER_MAX = 0xfff;

let lastMs = 0;
let counter = 0;

export function uuidv7(): string {
  if (offset + 16 > POOL_SIZE) {
    randomFillSync(pool);
    offset = 0;
  }
  const b = pool.subarray(offset, offset + 16);
  offset += 16;
  let ms = Date.now();
  if (ms > lastMs) {
    // A fresh millisecond starts the counter in its lower half, leaving room to count up.
    counter = ((b[6]! << 8) | b[7]!) & 0x7ff;
  } else {
    ms = lastMs;
    counter++;
    if (counter > COUNTER_MAX) {
      ms++;
      counter = 0;
    }
  }
  lastMs = ms;
  // 48-bit big-endian Unix milliseconds, version 7 + 12-bit counter, variant 0b10 + random.
  const high = Math.floor(ms / 0x100000000);
  b[0] = (high >>> 8) & 0xff;
  b[1] = high & 0xff;
  b[2] = (ms >>> 24) & 0xff;
  b[3] = (ms >>> 16) & 0xff;
  b[4] = (ms >>> 8) & 0xff;
  b[5] = ms & 0xff;
  b[6] = 0x70 | (counter >>> 8);
  b[7] = counter & 0xff;
  b[8] = 0x80 | (b[8]! & 0x3f);
  const h = (i: number) => HEX[b[i]!];
  return `${h(0)}${h(1)}${h(2)}${h(3)}-${h(4)}${h(5)}-${h(6)}${h(7)}-${h(8)}${h(9)}-${h(10)}${h(11)}${h(12)}${h(13)}${h(14)}${h(15)}`;
}
