// The document's `servers`. Its paths start after the basePath (`/products`), so the server URL
// carries it: served over HTTP, the origin the request came to and the basePath
// (`http://127.0.0.1:3000/api`); built in code (`app.openapi()`, no request), the basePath alone
// (`/api`), which OpenAPI reads relative to wherever the document was fetched from. The origin
// comes from the Host header (or, behind a proxy the app trusts, X-Forwarded-Host and -Proto); a
// value that is not a plain host[:port] is never written into the document: the relative URL is.

/** A DNS name or an IPv4 address, or a bracketed IPv6 address, and an optional port. */
const HOST =
  /^(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*|\[[0-9a-f:.]{2,45}\])(?::(\d{1,5}))?$/;

/** The server URL of the document built without a request: the basePath, relative. */
export function relativeServer(basePath: string): string {
  return basePath === "" ? "/" : basePath;
}

/** `http://host:port/api` for the request, or the relative basePath when its origin is not sane. */
export function serverUrl(request: Request | undefined, basePath: string, forwarded: boolean): string {
  const fallback = relativeServer(basePath);
  if (!request) return fallback;
  let url: URL;
  try {
    url = new URL(request.url);
  } catch {
    return fallback;
  }
  let protocol = url.protocol.slice(0, -1);
  let host = url.host;
  if (forwarded) {
    const proto = nearest(request.headers.get("x-forwarded-proto"));
    const forwardedHost = nearest(request.headers.get("x-forwarded-host"));
    if (proto !== undefined) protocol = proto.toLowerCase();
    if (forwardedHost !== undefined) host = forwardedHost;
  }
  host = host.toLowerCase();
  if (protocol !== "http" && protocol !== "https") return fallback;
  if (host.length > 260) return fallback;
  const match = HOST.exec(host);
  if (!match || (match[1] !== undefined && Number(match[1]) > 65_535)) return fallback;
  return `${protocol}://${host}${basePath}`;
}

/** The value the nearest proxy set: the last of a comma-separated list. */
function nearest(header: string | null): string | undefined {
  if (header === null) return undefined;
  const value = header.slice(header.lastIndexOf(",") + 1).trim();
  return value === "" ? undefined : value;
}

/** The document with `servers` for this request; the document itself is shared, so it is copied. */
export function withServer<D extends object>(document: D, url: string): D & { servers: { url: string }[] } {
  return { ...document, servers: [{ url }] };
}
