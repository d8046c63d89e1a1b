// A promise that gives up waiting: health checks and the read replicas' poller ask servers that
// may not answer at all.

/**
 * `promise`, or a rejection once `ms` passed (the timer never holds the process open).
 *
 * @example
 * await withTimeout(fetch("http://127.0.0.1:9/"), 2000); // rejects after 2 s: "no answer within 2000 ms"
 */
export function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
    timer.unref();
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
