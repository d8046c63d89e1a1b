// A client that streams an upload far over the limit and stops when the server answers: what a
// framework adapter must survive without buffering the body or leaving the client hanging.

import { request as httpRequest } from "node:http";

/**
 * Streams an upload of ~50 MB of base64 in 64 KB chunks, without a length, until the server
 * answers: how many bytes had gone out by then says whether the server streamed or buffered.
 */
export function streamOversizedUpload(
  url: string,
  key: Record<string, string>,
): Promise<{ status: number; sent: number; body: string }> {
  return new Promise((resolve, reject) => {
    let sent = 0;
    let answered = false;
    const req = httpRequest(`${url}/api/upload/file`, {
      method: "POST",
      headers: { ...key, "content-type": "application/json", "transfer-encoding": "chunked" },
    });
    req.on("response", (res) => {
      // Stop sending, read the answer to its end, then drop the connection. Destroying the
      // request at once would also cut a chunked answer whose body is still on its way (Next's).
      answered = true;
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (text: string) => (body += text));
      res.on("end", () => {
        resolve({ status: res.statusCode!, sent, body });
        req.destroy();
      });
    });
    req.on("error", (error) => (answered ? undefined : reject(error)));
    const chunk = Buffer.alloc(64 * 1024, "A");
    const head = Buffer.from('{"filename":"big.bin","mimeType":"application/octet-stream","file":"');
    req.write(head);
    sent += head.length;
    const pump = () => {
      while (!answered && sent < 50 * 1024 * 1024) {
        sent += chunk.length;
        if (!req.write(chunk)) return void req.once("drain", pump);
      }
      if (!answered) req.end('"}');
    };
    pump();
  });
}
