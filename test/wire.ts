// Talking to a listening server below fetch: raw bytes on a socket (malformed requests fetch
// refuses to send), and answers parsed just enough to check status, headers and body.

import { connect, type Socket } from "node:net";

export interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Sends `head` (and `body`) as written, and reads until the server closes or the answer is complete. */
export function rawRequest(url: string, head: string, body: Buffer | string = ""): Promise<RawAnswer> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    const finish = () => {
      socket.destroy();
      const answer = parseAnswer(Buffer.concat(chunks));
      if (answer) resolve(answer);
      else reject(new Error(`no answer: ${JSON.stringify(Buffer.concat(chunks).toString("latin1"))}`));
    };
    socket.on("data", (chunk) => {
      chunks.push(chunk);
      if (isComplete(Buffer.concat(chunks))) finish();
    });
    socket.on("end", finish);
    socket.on("error", finish);
    socket.setTimeout(10_000, finish);
    socket.write(Buffer.concat([Buffer.from(head, "latin1"), Buffer.from(body)]));
  });
}

function isComplete(bytes: Buffer): boolean {
  const answer = parseAnswer(bytes);
  if (!answer) return false;
  const length = answer.headers["content-length"];
  return length !== undefined && Buffer.byteLength(answer.body) >= Number(length);
}

function parseAnswer(bytes: Buffer): RawAnswer | undefined {
  const text = bytes.toString("utf8");
  const end = text.indexOf("\r\n\r\n");
  if (end === -1) return undefined;
  const [statusLine, ...lines] = text.slice(0, end).split("\r\n");
  const status = Number(statusLine!.split(" ")[1]);
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(":");
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  return { status, headers, body: text.slice(end + 4) };
}

/** Opens a socket and keeps it open; the caller writes and destroys it. */
export function openSocket(url: string): Promise<Socket> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => resolve(socket));
    socket.once("error", reject);
  });
}
