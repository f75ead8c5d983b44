/**
 * The address guard for an `appium:app` URL (API.md §12, the same rule as webhooks' in §9): Appium downloads the
 * app on the agent's host, so a session's URL could otherwise make the device host fetch from its own loopback,
 * its private network or a cloud metadata address (169.254.169.254). Only public unicast addresses pass, unless
 * the agent was started with `--appium-allow-private-app-urls` (a lab whose app server is on the private network).
 *
 * The idea is the server's (packages/server/src/features/webhooks/address-guard.ts), not its code: the agent does
 * not depend on the server, nor on ipaddr.js, so the special ranges are listed here in Node's own net.BlockList.
 * Literal hosts are judged from the URL; names are resolved and refused if any address is not public. Unlike a
 * webhook delivery, the agent cannot pin the address Appium then connects to: a name that changes its answer
 * between the check and Appium's download (DNS rebinding) is not stopped here.
 */
import { lookup } from "node:dns/promises";
import { BlockList, isIP } from "node:net";

type RangeKind = "unspecified" | "loopback" | "private" | "link-local" | "special-purpose";

const ranges: Record<RangeKind, Array<[string, number, "ipv4" | "ipv6"]>> = {
  unspecified: [
    ["0.0.0.0", 8, "ipv4"],
    ["::", 128, "ipv6"],
  ],
  loopback: [
    ["127.0.0.0", 8, "ipv4"],
    ["::1", 128, "ipv6"],
  ],
  private: [
    ["10.0.0.0", 8, "ipv4"],
    ["172.16.0.0", 12, "ipv4"],
    ["192.168.0.0", 16, "ipv4"],
    // Carrier-grade NAT (RFC 6598): not reachable from the internet, often the host's own provider network.
    ["100.64.0.0", 10, "ipv4"],
    ["fc00::", 7, "ipv6"],
  ],
  "link-local": [
    ["169.254.0.0", 16, "ipv4"],
    ["fe80::", 10, "ipv6"],
  ],
  // The rest of IANA's special-purpose registries (documentation, benchmarking, multicast, reserved), and IPv6
  // forms that carry an IPv4 address (mapped, compatible, NAT64, 6to4, Teredo): refused whole rather than decoded,
  // since no public app server is addressed that way.
  "special-purpose": [
    ["192.0.0.0", 24, "ipv4"],
    ["192.0.2.0", 24, "ipv4"],
    ["192.88.99.0", 24, "ipv4"],
    ["198.18.0.0", 15, "ipv4"],
    ["198.51.100.0", 24, "ipv4"],
    ["203.0.113.0", 24, "ipv4"],
    ["224.0.0.0", 4, "ipv4"],
    ["240.0.0.0", 4, "ipv4"],
    ["::", 96, "ipv6"],
    ["::ffff:0:0", 96, "ipv6"],
    ["64:ff9b::", 96, "ipv6"],
    ["64:ff9b:1::", 48, "ipv6"],
    ["100::", 64, "ipv6"],
    ["2001::", 23, "ipv6"],
    ["2001:db8::", 32, "ipv6"],
    ["2002::", 16, "ipv6"],
    ["fec0::", 10, "ipv6"],
    ["ff00::", 8, "ipv6"],
  ],
};

/**
 * One list per kind and family: a BlockList also matches an IPv4 address against the IPv4-mapped part of its
 * IPv6 subnets, so with ::ffff:0:0/96 in the same list every IPv4 address would be refused.
 */
const blockLists = Object.entries(ranges).flatMap(([kind, subnets]) =>
  (["ipv4", "ipv6"] as const).map((family) => {
    const list = new BlockList();
    for (const [network, prefix, subnetFamily] of subnets) {
      if (subnetFamily === family) list.addSubnet(network, prefix, family);
    }
    return { kind: kind as RangeKind, family, list };
  }),
);

/** The kind of a non-public address ("loopback", "private"…), or undefined for a public unicast one. */
export function nonPublicKind(address: string): RangeKind | undefined {
  const version = isIP(address);
  if (version === 0) return "special-purpose";
  const family = version === 4 ? "ipv4" : "ipv6";
  return blockLists.find((entry) => entry.family === family && entry.list.check(address, family))?.kind;
}

function bareHost(url: URL): string {
  // "localhost." is localhost: a trailing dot only makes a name fully qualified.
  return url.hostname
    .replace(/^\[(.*)\]$/, "$1")
    .replace(/\.$/, "")
    .toLowerCase();
}

/**
 * Why the URL's host is refused without resolving it (localhost, a non-public IP literal), or undefined.
 * Pure: used while building the capabilities (session-capabilities.ts).
 */
export function literalHostRefusal(url: URL): string | undefined {
  const host = bareHost(url);
  if (host === "localhost" || host.endsWith(".localhost")) return `${host} is the agent's own host`;
  if (isIP(host) !== 0) {
    const kind = nonPublicKind(host);
    if (kind) return `${host} is a ${kind} address, not a public one`;
  }
  return undefined;
}

export type ResolveAll = (hostname: string) => Promise<Array<{ address: string }>>;

export const systemResolveAll: ResolveAll = (hostname) => lookup(hostname, { all: true, verbatim: true });

/**
 * Why the URL is refused once its name is resolved (any of its addresses is not public: one private address
 * among public ones could be the one Appium connects to), or undefined.
 */
export async function resolvedHostRefusal(
  url: URL,
  resolveAll: ResolveAll = systemResolveAll,
): Promise<string | undefined> {
  const literal = literalHostRefusal(url);
  if (literal) return literal;
  const host = bareHost(url);
  if (isIP(host) !== 0) return undefined;
  let addresses: Array<{ address: string }>;
  try {
    addresses = await resolveAll(host);
  } catch (error) {
    return `${host} does not resolve on the agent's host (${(error as NodeJS.ErrnoException).code ?? "error"})`;
  }
  for (const { address } of addresses) {
    const kind = nonPublicKind(address);
    if (kind) return `${host} resolves to ${address}, a ${kind} address, not a public one`;
  }
  return undefined;
}
