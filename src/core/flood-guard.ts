// The default log's guard against floods. When the database goes away under load, every request
// that meets it reports the same thing: 1,136 lines in 4 s, measured, one per request. Through the
// guard a message that repeats is written once when it starts, then as one summary line per
// window while it goes on, then once when it has not come back for a whole window. A stack is
// written once per distinct error (its name and message), never again in that app's life.

/** What a line says besides its message: the request it came from. */
export interface LogFields {
  requestId?: string;
}

/** How an app reports what its callers must not see (the `log` option's shape). */
type Write = (message: string, error?: unknown, fields?: LogFields) => void;

export interface FloodGuardOptions {
  /** How long a summary covers, and how long a message must stay away to count as over. @default 5000 */
  windowMs?: number;
  /** @internal For tests. */
  now?: () => number;
}

/** A message that is repeating: when it started, how often it came in all and since the last line. */
interface Episode {
  message: string;
  /** The distinct errors seen in it (each written once). */
  errors: Set<string>;
  started: number;
  last: number;
  total: number;
  unwritten: number;
}

/** Distinct errors whose stack was written, remembered at most. */
const MAX_STACKS = 1000;
/** Distinct errors written within one episode at most; more are counted only. */
const MAX_ERRORS_PER_EPISODE = 10;

/** What tells two errors apart: their name and message. */
function signatureOf(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

export interface GuardedLog extends Write {
  /** Writes the summaries due, and ends the episodes that went quiet (the guard's timer calls it). */
  tick(): void;
  /** Stops the timer, writing what is still unwritten. */
  close(): void;
}

/**
 * Wraps `write` (a line to stderr, say) so that a repeating message is written a few times, not
 * once per occurrence.
 *
 * @example
 * const log = floodGuarded((message, error) => console.error(message, error));
 * const refused = new Error("connect ECONNREFUSED 127.0.0.1:5432");
 * log("crudkit: the database is unavailable", refused); // written, with the stack
 * log("crudkit: the database is unavailable", refused); // counted; summed up within 5 s
 */
export function floodGuarded(write: Write, options: FloodGuardOptions = {}): GuardedLog {
  const windowMs = options.windowMs ?? 5000;
  const now = options.now ?? Date.now;
  const episodes = new Map<string, Episode>();
  const stacksWritten = new Set<string>();
  let timer: NodeJS.Timeout | undefined;

  const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
  const count = (n: number) => n.toLocaleString("en-US");
  const more = (n: number) => `${count(n)} more ${n === 1 ? "time" : "times"}`;

  const tick = () => {
    const at = now();
    for (const [key, episode] of episodes) {
      const { message } = episode;
      if (episode.unwritten > 0) {
        write(`${message}: ${more(episode.unwritten)} in the last ${seconds(windowMs)}`);
        episode.unwritten = 0;
      } else if (at - episode.last >= windowMs) {
        episodes.delete(key);
        // A message that came once is not an episode: nothing to close.
        if (episode.total === 1) continue;
        write(
          `${message}: not seen again for ${seconds(at - episode.last)}; it went on for ` +
            `${seconds(episode.last - episode.started)}, ${count(episode.total)} times in all`,
        );
      }
    }
    if (episodes.size === 0 && timer) {
      clearInterval(timer);
      timer = undefined;
    }
  };

  /** A line for an error: its stack the first time ever, its name and message after that. */
  const written = (message: string, error: unknown, signature: string, fields?: LogFields) => {
    if (error === undefined) return write(message, undefined, fields);
    if (stacksWritten.has(signature)) return write(`${message}: ${signature}`, undefined, fields);
    // Bounded: errors whose text varies (an id in it) must not grow it for ever.
    if (stacksWritten.size >= MAX_STACKS) stacksWritten.delete(stacksWritten.values().next().value!);
    stacksWritten.add(signature);
    write(message, error, fields);
  };

  const log = ((message: string, error?: unknown, fields?: LogFields) => {
    const at = now();
    const signature = error === undefined ? "" : signatureOf(error);
    const episode = episodes.get(message);
    if (episode) {
      episode.total++;
      episode.last = at;
      // A new error under a repeating message (a generic one, "the server could not complete the
      // request") is written once, not only counted into the summary.
      if (signature && !episode.errors.has(signature) && episode.errors.size < MAX_ERRORS_PER_EPISODE) {
        episode.errors.add(signature);
        return written(message, error, signature, fields);
      }
      episode.unwritten++;
      return;
    }
    episodes.set(message, {
      message,
      started: at,
      last: at,
      total: 1,
      unwritten: 0,
      errors: new Set(signature ? [signature] : []),
    });
    if (!timer) {
      timer = setInterval(tick, windowMs);
      timer.unref();
    }
    // The first line of an episode names the request it came from; the summaries count many.
    written(message, error, signature, fields);
  }) as GuardedLog;
  log.tick = tick;
  log.close = () => {
    for (const episode of episodes.values())
      if (episode.unwritten > 0) write(`${episode.message}: ${more(episode.unwritten)}`);
    episodes.clear();
    clearInterval(timer);
    timer = undefined;
  };
  return log;
}
