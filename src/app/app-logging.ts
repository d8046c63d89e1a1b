// Where an app's reports go: errors the caller must not see (`log`), and with `requestLogs` one
// line per request. A `log` function given gets every error as it happens; otherwise errors go
// through the flood guard, to the `logger` given, to the JSON logger `requestLogs` makes, or to
// stderr as text.

import type { RequestObservers } from "../core/answered-requests.ts";
import { floodGuarded, type GuardedLog, type LogFields } from "../core/flood-guard.ts";
import { jsonLogger, type Logger, requestLog } from "../core/logger.ts";
import type { Log } from "../resource/runtime.ts";

export interface LoggingOptions {
  log?: Log | undefined;
  logger?: Logger | undefined;
  requestLogs?: boolean | undefined;
}

export interface AppLogging {
  log: Log;
  /**
   * The request log, when `requestLogs` is on: told later when its lines go to crudkit's own
   * sink, where they wait for its next write anyway; a logger of yours gets each line at once.
   */
  observe: RequestObservers | undefined;
  /** Writes what the flood guard and the logger still hold (app.close()). */
  close(): Promise<void>;
}

export function appLogging(options: LoggingOptions): AppLogging {
  const made = options.logger === undefined && options.requestLogs ? jsonLogger() : undefined;
  const logger = options.logger ?? made;
  let guarded: GuardedLog | undefined;
  if (!options.log) guarded = floodGuarded(logger ? toLogger(logger) : toStderr);
  return {
    log: options.log ?? guarded!,
    observe: options.requestLogs && logger ? requestLog(logger) : undefined,
    async close() {
      guarded?.close();
      // The logger's last lines (ours, or pino's, which has a flush too), for 2 s at most: a
      // stalled stderr must not hold app.close() for ever.
      const flushing = (logger as { flush?: () => unknown } | undefined)?.flush?.();
      if (flushing instanceof Promise) {
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([
          flushing.catch(() => {}),
          new Promise((resolve) => {
            timer = setTimeout(resolve, 2000);
            timer.unref();
          }),
        ]);
        clearTimeout(timer);
      }
    },
  };
}

/** An error report as a logger's error line: the cause under `err`, as pino names it. */
function toLogger(logger: Logger): Log {
  return (message, error, fields) => {
    const line: { err?: unknown } & LogFields = {};
    if (error !== undefined) line.err = error;
    if (fields?.requestId) line.requestId = fields.requestId;
    logger.error(line, message);
  };
}

function toStderr(message: string, error?: unknown, fields?: LogFields): void {
  const line = fields?.requestId ? `${message} (request ${fields.requestId})` : message;
  if (error === undefined) console.error(line);
  else console.error(line, error);
}
