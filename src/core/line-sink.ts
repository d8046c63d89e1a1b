// Log lines to a file descriptor (stderr) without ever blocking a request. Node writes to a pipe
// synchronously: a reader that stops reading (a stalled log shipper, a full pipe) would stop the
// event loop with it. Here lines queue in memory and go out through asynchronous writes, one at a
// time; past a cap the newest lines are dropped and counted, and the count is written when the
// descriptor takes lines again.

import { write as writeToFd } from "node:fs";

/** How long a line may wait for others to go out with it: a warning, an error, any line of yours. */
const GATHER_MS = 10;
/**
 * How long request lines may wait: a write is a system call and a trip through libuv's thread
 * pool (about 50 µs of CPU in all, measured on a 2-core machine, against 15 µs written
 * synchronously), so under load one write per 50 ms instead of per 10 ms is about 0.4 µs less a
 * request (a CPU profile of the example app at 10,000 requests/s). A line of another kind that
 * comes meanwhile brings the write forward to its own GATHER_MS.
 */
const REQUEST_GATHER_MS = 50;
/** Queued bytes that go out at once, without waiting for more. */
const FULL_WRITE = 256 * 1024;
/**
 * The buffer lines are written into at first; it grows up to the cap while the reader lags. 50 ms
 * of request lines at 20,000 requests/s (about 250 bytes each) fit in it.
 */
const FIRST_BUFFER = 512 * 1024;

export interface LineSink {
  /** Queues one line (with its newline); never waits. */
  write(line: string): void;
  /**
   * Queues one line (with its newline) that `fill` writes as bytes from `at` into `into`, answering
   * where it stopped, in `most` bytes at most; never waits. No text is made for the line, nor
   * encoded: the one line every request writes costs less that way (request-line.ts). `fill`
   * runs before the call returns. A line that comes out longer than `most` is dropped. A sink of
   * your own may leave this and writeLater out: request lines then come to `write` as texts.
   */
  writeWith?<T>(most: number, fill: (into: Buffer, at: number, item: T) => number, item: T): void;
  /**
   * Runs `fill` once, just before the queued lines next go out (or at a flush): the lines it
   * writes go with them. Lines made together cost less than one at a time (request-line.ts).
   */
  writeLater?(fill: () => void): void;
  /** Resolves once every queued line was written (or dropped). */
  flush(): Promise<void>;
}

export interface LineSinkOptions {
  /** @default 2 (stderr) */
  fd?: number;
  /** Bytes queued at most while the descriptor is not taking them. @default 4 MiB */
  maxQueuedBytes?: number;
}

/**
 * @example
 * const sink = lineSink();
 * sink.write('{"level":30,"msg":"request"}\n');
 */
export function lineSink(options: LineSinkOptions = {}): LineSink {
  const fd = options.fd ?? 2;
  const maxQueued = options.maxQueuedBytes ?? 4 * 1024 * 1024;
  // Lines are encoded into `filling` as they come, and go out from it in one write while the next
  // ones fill the other buffer: no array of lines, no joined text, no buffer made per write
  // (their garbage was a fifth of a request line's cost, measured in a CPU profile).
  let filling = Buffer.allocUnsafe(Math.min(FIRST_BUFFER, maxQueued));
  let used = 0;
  let spare: typeof filling | undefined;
  let dropped = 0;
  let writing = false;
  const drained: (() => void)[] = [];
  const deferred = new Set<() => void>();

  /** Whether `bytes` more fit under the cap, the buffer grown when needed. */
  const room = (bytes: number): boolean => {
    if (used + bytes <= filling.length) return true;
    if (used + bytes > maxQueued) return false;
    const grown = Buffer.allocUnsafe(Math.min(maxQueued, Math.max(filling.length * 2, used + bytes)));
    filling.copy(grown, 0, 0, used);
    filling = grown;
    return true;
  };
  // The next write's timer; none while a write is under way: its end decides.
  const next = new NextWrite(() => pump());
  const later = (wait = GATHER_MS) => {
    if (writing && !next.pending) return;
    if (used >= FULL_WRITE) {
      next.cancel();
      return pump();
    }
    writing = true;
    next.within(wait);
  };
  const settle = (sent: typeof filling) => {
    writing = false;
    // The buffer just written is the next one filled; one grown in a burst is let go.
    if (sent.length <= FIRST_BUFFER) spare = sent;
    // Lines that came during the write wait for others too: pumping them at once made a write
    // for every few lines under load (a system call and a trip through the thread pool each:
    // about 1.5 µs a request, measured in a CPU profile of `npm run bench -- --logs`).
    if (used > 0 || dropped > 0 || deferred.size > 0) {
      if (used >= FULL_WRITE || drained.length > 0) return pump();
      return later(deferred.size > 0 && used === 0 && dropped === 0 ? REQUEST_GATHER_MS : GATHER_MS);
    }
    for (const done of drained.splice(0)) done();
  };
  const pump = () => {
    writing = true;
    if (deferred.size > 0) {
      const fills = [...deferred];
      deferred.clear();
      for (const fill of fills) {
        // A fill that throws loses its own lines only: the write goes on.
        try {
          fill();
        } catch {}
      }
    }
    const whole = filling;
    let bytes: Buffer = whole.subarray(0, used);
    if (dropped > 0) {
      const notice = `${JSON.stringify({ level: 40, time: Date.now(), msg: `crudkit: ${dropped} log lines were dropped: the log's reader was not taking them` })}\n`;
      bytes = Buffer.concat([bytes, Buffer.from(notice)]);
      dropped = 0;
    }
    filling = spare ?? Buffer.allocUnsafe(Math.min(FIRST_BUFFER, maxQueued));
    spare = undefined;
    used = 0;
    writeFully(fd, bytes, () => settle(whole));
  };

  return {
    write(line) {
      // At most 3 bytes per UTF-16 unit: the exact count is taken only near the buffer's end.
      if (used + line.length * 3 > filling.length && !room(Buffer.byteLength(line))) {
        // The count goes out with the next write, even when no other line comes.
        dropped++;
        return later();
      }
      used += filling.write(line, used);
      // Lines of the next few milliseconds go out in one write: a write per line is a system
      // call and a trip through libuv's thread pool each (measured: 0.80 of the throughput of
      // no log on reads, against 0.9 and more batched).
      later();
    },
    writeWith(most, fill, item) {
      if (used + most > filling.length && !room(most)) {
        dropped++;
        return later();
      }
      const end = fill(filling, used, item);
      // Past `most` (or the buffer's end, where writes go nowhere): its bytes are not trusted.
      if (end - used > most || end > filling.length) dropped++;
      else used = end;
      later(REQUEST_GATHER_MS);
    },
    writeLater(fill) {
      deferred.add(fill);
      later(REQUEST_GATHER_MS);
    },
    flush() {
      if (!writing && used === 0 && dropped === 0 && deferred.size === 0) return Promise.resolve();
      const flushed = new Promise<void>((resolve) => drained.push(resolve));
      // Waiting lines go out now, not when their gathering ends.
      if (next.cancel()) pump();
      return flushed;
    },
  };
}

/** Writes all of `bytes` to `fd`, then calls `done`; a failure drops them. */
function writeFully(fd: number, bytes: Buffer, done: () => void): void {
  writeToFd(fd, bytes, 0, bytes.length, null, (error, written) => {
    // A descriptor in non-blocking mode that is full: try again shortly. Any other failure
    // (closed) drops the chunk: logging must not take the app down.
    if (error && (error as NodeJS.ErrnoException).code === "EAGAIN") {
      setTimeout(() => writeFully(fd, bytes, done), 10).unref();
      return;
    }
    if (!error && written < bytes.length) return writeFully(fd, bytes.subarray(written), done);
    done();
  });
}

/** The timer of a sink's next write: due after the shortest wait asked for since it was set. */
class NextWrite {
  #timer: ReturnType<typeof setTimeout> | undefined;
  #wait = 0;
  #due = 0;

  constructor(private readonly run: () => void) {}

  get pending(): boolean {
    return this.#timer !== undefined;
  }

  /** Runs the write within `wait` ms: now set, or brought forward. */
  within(wait: number): void {
    if (this.#timer !== undefined) {
      // As long a wait as the one that set the timer (the common case): nothing to change,
      // without reading the clock.
      if (wait >= this.#wait || this.#due <= Date.now() + wait) return;
      clearTimeout(this.#timer);
    }
    this.#wait = wait;
    this.#due = Date.now() + wait;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.run();
    }, wait);
  }

  /** Clears the timer; whether one was set. */
  cancel(): boolean {
    if (this.#timer === undefined) return false;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    return true;
  }
}
