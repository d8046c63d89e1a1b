// Answers for requests Node's HTTP parser refuses before any listener runs (malformed HTTP,
// headers over the size limit, a request that outlasted its timeout). Node's own answer has an
// empty body; these carry the JSON error body like every other answer.

import { STATUS_CODES } from "node:http";
import type { Duplex } from "node:stream";
import { APIError } from "../core/errors.ts";

function answerFor(error: NodeJS.ErrnoException): APIError {
  switch (error.code) {
    case "HPE_HEADER_OVERFLOW":
      return new APIError("HEADERS_TOO_LARGE", "The request's headers are larger than the server accepts.");
    case "ERR_HTTP_REQUEST_TIMEOUT":
      return new APIError("REQUEST_TIMEOUT", "The request was not received in time.");
    default:
      return new APIError("BAD_REQUEST", "The request is not valid HTTP.");
  }
}

/** The server's `clientError` listener. */
export function answerClientError(error: NodeJS.ErrnoException, socket: Duplex): void {
  const response = (socket as { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  // A reset connection, or one whose answer has begun, can only be closed.
  if (error.code === "ECONNRESET" || !socket.writable || response?.headersSent) {
    socket.destroy();
    return;
  }
  const answer = answerFor(error);
  const body = JSON.stringify(answer.toJSON());
  socket.end(
    `HTTP/1.1 ${answer.status} ${STATUS_CODES[answer.status]}\r\n` +
      "content-type: application/json\r\n" +
      `content-length: ${Buffer.byteLength(body)}\r\n` +
      "connection: close\r\n\r\n" +
      body,
  );
}
