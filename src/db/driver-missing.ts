import { APIError } from "../core/errors.ts";

/** A driver that is not installed: said once in the log, answered as 503 to requests. */
export function driverMissing(driver: string, provider: string, cause: unknown): never {
  throw new APIError("SERVICE_UNAVAILABLE", `The database driver is not installed.`, {
    cause: new Error(`database provider "${provider}" needs the "${driver}" package: npm install ${driver}`, {
      cause,
    }),
  });
}
