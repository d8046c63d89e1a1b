// Record ids: UUIDv7 (RFC 9562), time-ordered so new keys land at the end of the primary key B-tree.

import { randomFillSync } from "node:crypto";

const POOL_SIZE = 16 * 256;
const pool = Buffer.allocUnsafe(POOL_SIZE);
let offset = POOL_SIZE;
const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));

export function uuidv7(): string {
  if (offset + 16 > POOL_SIZE) {
    randomFillSync(pool);
    offset = 0;
  }
  const b = pool.subarray(offset, offset + 16);
  offset += 16;
  const ms = Date.now();
  // 48-bit big-endian Unix milliseconds, then version 7 and variant 0b10.
  const high = Math.floor(ms / 0x100000000);
  b[0] = (high >>> 8) & 0xff;
  b[1] = high & 0xff;
  b[2] = (ms >>> 24) & 0xff;
  b[3] = (ms >>> 16) & 0xff;
  b[4] = (ms >>> 8) & 0xff;
  b[5] = ms & 0xff;
  b[6] = 0x70 | (b[6]! & 0x0f);
  b[8] = 0x80 | (b[8]! & 0x3f);
  const h = (i: number) => HEX[b[i]!];
  return `${h(0)}${h(1)}${h(2)}${h(3)}-${h(4)}${h(5)}-${h(6)}${h(7)}-${h(8)}${h(9)}-${h(10)}${h(11)}${h(12)}${h(13)}${h(14)}${h(15)}`;
}
