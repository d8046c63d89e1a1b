// The requests answered, told to their observers (the request log, metrics, a plugin's
// `observe`). Told one at a time, at the end of each request, their record and the observers'
// work cost about three times what the same work costs in a loop: by the end of a request, little
// of the observers' code and data is still in the CPU's caches (measured inside the example app
// under load, the server on one CPU: 1.5 to 2 µs a read against 0.45 µs; an observer doing
// nothing at all cost 0.974 of the throughput of none, told together 0.997). So when every
// observer may be told later (`observeLater`: what it makes is read later, at a scrape or the
// log's next write), the requests answered in one turn of the event loop wait as their parts, in
// arrays kept from turn to turn, and are told together at its end (setImmediate), in the order
// they were answered. A record is then made and dropped at once: none outlives the young
// generation (records kept 50 ms cost more collecting than they saved, request-line.ts).

import type { Endpoint } from "./endpoint.ts";
import type { RequestRecord } from "./http-handler.ts";
import { answerBytes } from "./respond.ts";

/** What answering a request found out along the way, for its record. */
export interface Seen {
  route?: string;
  endpoint?: Endpoint;
  ctx?: { readonly userId?: string | undefined };
  code?: string;
  /** With read replicas: the primary's position after this request's write (read-routing.ts). */
  position?: string | undefined;
}

/** The observers of an app's requests: told at once, or (every one allowing it) later, together. */
export interface RequestObservers {
  observe: (record: RequestRecord) => void;
  /** Every observer may be told at the end of the event loop's turn. */
  later: boolean;
  /** Takes the function telling those waiting, for the observer's own flush (jsonLogger's). */
  settledBy?: (settle: () => void) => void;
}

export interface AnsweredRequests {
  /** A request was answered: its observers are told now, or at the end of this turn. */
  answered(request: Request, response: Response, requestId: string, seen: Seen, durationMs: number): void;
  /** Tells the observers of every request answered and not told yet (a scrape, app.close()). */
  settle(): void;
}

/** Requests waiting at most: past this many they are told at once. */
const MAX_WAITING = 256;

/**
 * @example
 * const answered = answeredRequests({ observe: (record) => console.log(record.route), later: true });
 * const request = new Request("http://localhost/api/product/1");
 * answered.answered(request, new Response("{}"), "r1", { route: "/api/product/:id" }, 1.25);
 * answered.settle(); // logs "/api/product/:id" now, not at the end of the turn
 */
export function answeredRequests(observers: RequestObservers): AnsweredRequests {
  const { observe } = observers;
  const tell = (record: RequestRecord) => {
    // An observer that throws must not turn an answer already made into a failure, nor keep the
    // others waiting.
    try {
      observe(record);
    } catch {}
  };
  if (!observers.later)
    return {
      answered: (request, response, requestId, seen, durationMs) =>
        tell(recordOf(request, response, requestId, seen, durationMs)),
      settle() {},
    };
  let count = 0;
  const requests: (Request | undefined)[] = [];
  const responses: (Response | undefined)[] = [];
  const ids: string[] = [];
  const seens: (Seen | undefined)[] = [];
  const durations = new Float64Array(MAX_WAITING);
  const settle = () => {
    // Counted out first: an observer that settles again (a scrape's) finds none waiting. A request
    // is answered after an await, never while its observers are being told.
    const waiting = count;
    count = 0;
    for (let i = 0; i < waiting; i++) {
      const request = requests[i]!;
      const response = responses[i]!;
      const seen = seens[i]!;
      requests[i] = responses[i] = seens[i] = undefined;
      const requestId = ids[i]!;
      ids[i] = "";
      tell(recordOf(request, response, requestId, seen, durations[i]!));
    }
  };
  return {
    answered(request, response, requestId, seen, durationMs) {
      const i = count++;
      if (i === 0) setImmediate(settle);
      requests[i] = request;
      responses[i] = response;
      ids[i] = requestId;
      seens[i] = seen;
      durations[i] = durationMs;
      if (count === MAX_WAITING) settle();
    },
    settle,
  };
}

/**
 * What a request log line or a metric says about one request: nothing from its body, query or
 * headers beyond the method.
 */
function recordOf(
  request: Request,
  response: Response,
  requestId: string,
  seen: Seen,
  durationMs: number,
): RequestRecord {
  const record: RequestRecord = {
    method: request.method,
    route: seen.route ?? "unmatched",
    status: response.status,
    durationMs: Math.round(durationMs * 1000) / 1000,
    requestId,
  };
  const bytes = answerBytes(response);
  if (bytes !== undefined) record.bytes = bytes;
  const userId = seen.ctx?.userId;
  if (userId !== undefined) record.userId = userId;
  const resource = seen.endpoint?.doc?.resource;
  if (resource) {
    record.resource = resource.name;
    record.operation = resource.operation;
  }
  if (seen.code) record.code = seen.code;
  return record;
}
