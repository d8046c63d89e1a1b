// Where a webhook may go. An endpoint URL is a request the server makes on its own authority, so
// a URL pointing inside the network (a database's admin port, a cloud's metadata service) would
// let whoever configures or rebinds it reach what the internet cannot (SSRF). Private, loopback,
// link-local, shared (CGNAT), multicast and reserved addresses are refused unless the plugin is
// told `allowPrivateNetworks: true`. Names are checked on the address they resolve to when the
// connection is made, so a name that answers a public address at startup and a private one later
// (DNS rebinding) is still refused.

import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from "node:dns";
import { BlockList, isIP } from "node:net";
import { ConfigError } from "../../core/errors.ts";

const PRIVATE = new BlockList();
for (const [network, prefix] of [
  ["0.0.0.0", 8], // "this network"
  ["10.0.0.0", 8],
  ["100.64.0.0", 10], // shared address space (CGNAT)
  ["127.0.0.0", 8],
  ["169.254.0.0", 16], // link-local, and the cloud metadata service at 169.254.169.254
  ["172.16.0.0", 12],
  ["192.0.0.0", 24], // IETF protocol assignments
  ["192.0.2.0", 24], // documentation
  ["192.88.99.0", 24], // 6to4 relay
  ["192.168.0.0", 16],
  ["198.18.0.0", 15], // benchmarking
  ["198.51.100.0", 24],
  ["203.0.113.0", 24],
  ["224.0.0.0", 4], // multicast
  ["240.0.0.0", 4], // reserved, and the broadcast address
] as const)
  PRIVATE.addSubnet(network, prefix, "ipv4");
for (const [network, prefix] of [
  ["::", 128], // unspecified
  ["::1", 128], // loopback
  ["64:ff9b:1::", 48], // local NAT64
  ["100::", 64], // discard
  ["2001::", 32], // Teredo, which tunnels to an IPv4 host it hides
  ["2001:db8::", 32], // documentation
  ["fc00::", 7], // unique local, AWS's metadata service at fd00:ec2::254 among them
  ["fe80::", 10], // link-local
  ["ff00::", 8], // multicast
] as const)
  PRIVATE.addSubnet(network, prefix, "ipv6");

/** Whether `address` (an IPv4 or IPv6 literal) is one a webhook may not reach by default. */
export function isPrivateAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return PRIVATE.check(address, "ipv4");
  if (family !== 6) return true; // not an address at all: nothing to allow
  const v4 = embeddedIPv4(address);
  return v4 !== undefined ? isPrivateAddress(v4) : PRIVATE.check(address, "ipv6");
}

/**
 * The IPv4 address inside an IPv6 one that carries it: IPv4-compatible (`::127.0.0.1`), -mapped
 * (`::ffff:127.0.0.1`) and -translated (`::ffff:0:127.0.0.1`) addresses, NAT64's `64:ff9b::/96`
 * and 6to4's `2002::/16` all reach (or route to) that IPv4 host, so each is judged as that host,
 * in whatever spelling it comes (the URL parser writes `::127.0.0.1` as `::7f00:1`).
 */
function embeddedIPv4(address: string): string | undefined {
  const g = ipv6Groups(address);
  if (!g) return undefined;
  const zeros = (from: number, to: number) => g.slice(from, to).every((group) => group === 0);
  const v4 = (high: number, low: number) => `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;
  if (zeros(0, 5) && (g[5] === 0 || g[5] === 0xffff)) return v4(g[6]!, g[7]!);
  if (zeros(0, 4) && g[4] === 0xffff && g[5] === 0) return v4(g[6]!, g[7]!);
  if (g[0] === 0x64 && g[1] === 0xff9b && zeros(2, 6)) return v4(g[6]!, g[7]!);
  if (g[0] === 0x2002) return v4(g[1]!, g[2]!);
  return undefined;
}

/** An IPv6 literal's eight 16-bit groups (`::` expanded, a dotted IPv4 tail as two groups). */
function ipv6Groups(address: string): number[] | undefined {
  let text = address.toLowerCase().replace(/%.*$/, "");
  const tail = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (tail) {
    const [a, b, c, d] = tail.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, tail.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, rest] = text.split("::") as [string, string | undefined];
  const parse = (part: string) => (part === "" ? [] : part.split(":").map((h) => Number.parseInt(h, 16)));
  const front = parse(head);
  const back = rest === undefined ? [] : parse(rest);
  const groups =
    rest === undefined ? front : [...front, ...Array(8 - front.length - back.length).fill(0), ...back];
  return groups.length === 8 && groups.every((n) => Number.isInteger(n) && n >= 0 && n <= 0xffff)
    ? groups
    : undefined;
}

/**
 * An endpoint's URL, checked when the app starts: http or https, no credentials in it, and, when
 * private networks are not allowed, no private address literal and no `localhost` name.
 */
export function checkEndpointUrl(id: string, url: unknown, allowPrivate: boolean): URL {
  const where = `webhooks(): endpoint "${id}"`;
  if (typeof url !== "string" || url === "") throw new ConfigError(`${where} needs a url.`);
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ConfigError(`${where}: its url is not a URL.`);
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:")
    throw new ConfigError(`${where}: its url must be http or https, not ${parsed.protocol.slice(0, -1)}.`);
  if (parsed.username || parsed.password)
    throw new ConfigError(`${where}: put credentials in a secret or a header, not in the url.`);
  if (!allowPrivate) {
    // A name may end in the root's dot (`localhost.`): the same name to a resolver.
    const host = hostOf(parsed).replace(/\.+$/, "");
    if (host === "localhost" || host.endsWith(".localhost") || (isIP(host) !== 0 && isPrivateAddress(host)))
      throw new ConfigError(
        `${where}: ${parsed.hostname} is a private or loopback address. Webhooks go to public addresses ` +
          "unless webhooks({ allowPrivateNetworks: true }).",
      );
  }
  return parsed;
}

/** The URL's host without IPv6 brackets, lower case. */
export function hostOf(url: URL): string {
  return url.hostname.replace(/^\[|\]$/g, "").toLowerCase();
}

/** Refused: the name resolved to an address webhooks may not reach. */
export class PrivateAddressError extends Error {
  constructor(host: string) {
    super(`${host} resolves to a private or loopback address`);
  }
}

type LookupCallback = (
  error: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void;

/**
 * A `lookup` for `http.request` that refuses private addresses: the check runs on the very
 * addresses the socket will connect to, after any rebinding.
 */
export function guardedLookup(hostname: string, options: LookupOptions, callback: LookupCallback): void {
  dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
    if (error) return callback(error, []);
    const list = addresses as LookupAddress[];
    if (list.length === 0 || list.some((a) => isPrivateAddress(a.address)))
      return callback(Object.assign(new PrivateAddressError(hostname), { code: "EPRIVATE" }), []);
    if (options.all) return callback(null, list);
    callback(null, list[0]!.address, list[0]!.family);
  });
}
