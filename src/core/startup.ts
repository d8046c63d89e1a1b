// The app's startup (migrations, plugin init) as a gate every request passes: free once open,
// a wait while starting, and a 503 (cause logged once) if startup failed.

import { APIError } from "./errors.ts";

export type StartupGate = () => Promise<void> | undefined;

export function startupGate(
  ready: Promise<void>,
  log: (message: string, error: unknown) => void,
): StartupGate {
  let open = false;
  let failureLogged = false;
  ready.then(
    () => {
      open = true;
    },
    () => {},
  );
  const wait = async () => {
    try {
      await ready;
    } catch (error) {
      if (!failureLogged) log("crudkit: startup failed (migrations or plugin init)", error);
      failureLogged = true;
      throw new APIError("SERVICE_UNAVAILABLE", "The service could not start; try again later.");
    }
  };
  // Once open, no promise is made per request.
  return () => (open ? undefined : wait());
}
