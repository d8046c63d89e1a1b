// Requests being answered, counted so that closing the app can wait for them: a client that hangs
// up mid-request closes its connection, but its handler still holds a database connection.

export class InFlight {
  #count = 0;
  #waiting: (() => void)[] = [];

  begin(): void {
    this.#count++;
  }

  end(): void {
    if (--this.#count === 0) for (const resolve of this.#waiting.splice(0)) resolve();
  }

  /** Resolves once nothing is in flight, or after `limit` ms, whichever comes first. */
  settled(limit: number): Promise<void> {
    if (this.#count === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, limit);
      timer.unref();
      this.#waiting.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }
}
