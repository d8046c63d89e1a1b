// Who is calling, by address: the one function audit, rate limits and idempotency keys share.
// Behind reverse proxies the socket's address is the last proxy's; `X-Forwarded-For` holds the
// chain, but a client writes whatever it likes at its left end. So the chain is read from the
// right, skipping only the proxies the app trusts (proxy-addr's rule): the first address that is
// not one of them is the client.

import { BlockList, isIP } from "node:net";
import { ConfigError } from "./errors.ts";

/**
 * Which proxies in front of the app may name the client in `X-Forwarded-For`: `false` none (the
 * socket's address is the client), a list of addresses, CIDR ranges and the names `loopback`,
 * `linklocal`, `uniquelocal`, or a function of an address and its hop (0 the socket's).
 */
export type TrustProxy = boolean | readonly string[] | ((address: string, hop: number) => boolean);

const NAMED: Record<string, readonly string[]> = {
  loopback: ["127.0.0.1/8", "::1/128"],
  linklocal: ["169.254.0.0/16", "fe80::/10"],
  uniquelocal: ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "fc00::/7"],
};

/** The client's address for a request: from the socket's and the trusted proxies' forwarding. */
export type ClientAddress = (socket: string | undefined, headers: Headers) => string | undefined;

/** Whether a proxy's address (hop 0: the socket's peer) is one the app trusts; undefined when it trusts none. */
export function proxyTrust(
  trust: TrustProxy | undefined,
): ((address: string, hop: number) => boolean) | undefined {
  if (trust === undefined || trust === false) return undefined;
  return typeof trust === "function" ? trust : trust === true ? () => true : trustList(trust);
}

export function clientAddressOf(trust: TrustProxy | undefined): ClientAddress {
  const trusted = proxyTrust(trust);
  if (!trusted) return (socket) => socket;
  return (socket, headers) => {
    const forwarded = headers.get("x-forwarded-for");
    if (socket === undefined || forwarded === null) return socket;
    const chain = forwarded.split(",").map((part) => part.trim());
    let address = socket;
    for (let hop = 0; hop < chain.length && trusted(address, hop); hop++) {
      const next = chain[chain.length - 1 - hop]!;
      // A malformed entry ends the walk: what was reached so far is the client.
      if (isIP(unmapped(next)) === 0) break;
      address = next;
    }
    return address;
  };
}

function trustList(entries: readonly string[]): (address: string) => boolean {
  if (!Array.isArray(entries))
    throw new ConfigError("trustProxy takes true, false, a list of addresses or a function.");
  const list = new BlockList();
  for (const entry of entries.flatMap((e) => NAMED[e] ?? [e])) {
    const [address, bits] = entry.split("/");
    const family = isIP(address ?? "");
    if (family === 0 || (bits !== undefined && !/^\d{1,3}$/.test(bits)))
      throw new ConfigError(
        `trustProxy: "${entry}" is not an address, a CIDR range or one of loopback, linklocal, uniquelocal.`,
      );
    const type = family === 4 ? "ipv4" : "ipv6";
    if (bits === undefined) list.addAddress(address!, type);
    else list.addSubnet(address!, Number(bits), type);
  }
  return (address) => {
    const plain = unmapped(address);
    const family = isIP(plain);
    return family !== 0 && list.check(plain, family === 4 ? "ipv4" : "ipv6");
  };
}

/** `::ffff:10.0.0.1` (an IPv4 client on a dual-stack socket) as `10.0.0.1`. */
function unmapped(address: string): string {
  return address.startsWith("::ffff:") && isIP(address.slice(7)) === 4 ? address.slice(7) : address;
}

/**
 * The key an anonymous caller is counted under: an IPv6 address by its /64 (one subscriber gets a
 * whole /64, and would otherwise have 2^64 keys), IPv4 and IPv4-mapped addresses as they are.
 */
export function addressKey(address: string | undefined): string {
  if (address === undefined) return "server";
  if (isIP(address) !== 6 || isIP(unmapped(address)) === 4) return address;
  return `${expandIPv6(address).slice(0, 4).join(":")}::/64`;
}

/** The eight groups of an IPv6 address, `::` expanded, zone id dropped. */
function expandIPv6(address: string): string[] {
  const [head = "", tail] = address.split("%")[0]!.toLowerCase().split("::");
  const left = head === "" ? [] : head.split(":");
  const right = tail === undefined || tail === "" ? [] : tail.split(":");
  const missing = 8 - left.length - right.length;
  return [...left, ...Array<string>(Math.max(0, missing)).fill("0"), ...right].map((g) =>
    g.replace(/^0+(?=.)/, ""),
  );
}
