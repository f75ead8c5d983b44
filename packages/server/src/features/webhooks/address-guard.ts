/**
 * The address guard (API.md §9): a webhook must not become a way to reach what only the server can reach
 * (its own loopback, the private network, a cloud metadata address such as 169.254.169.254). Only public
 * unicast addresses pass. Literals are refused when the URL is given; names are resolved when an attempt
 * connects, and the connection goes to the address that was checked (see guardedLookup), so a name that
 * resolves to a public address when checked and a private one a moment later (DNS rebinding) gains nothing.
 */
import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import type { LookupFunction } from "node:net";
import ipaddr from "ipaddr.js";

/** A resolver with dns.lookup's shape for `{all: true}`: tests inject one, as there is no DNS here. */
export type ResolveAll = (hostname: string) => Promise<LookupAddress[]>;

export const systemResolveAll: ResolveAll = (hostname) =>
  new Promise((resolve, reject) =>
    dnsLookup(hostname, { all: true }, (error, addresses) => (error ? reject(error) : resolve(addresses))),
  );

/** The error an attempt records when the guard stops it. */
export const addressNotAllowed = "address not allowed";

export class AddressNotAllowedError extends Error {
  readonly code = "TESTBAY_ADDRESS_NOT_ALLOWED";
  constructor(readonly address: string) {
    super(addressNotAllowed);
  }
}

const ipv4Compatible = ipaddr.parseCIDR("::/96");

/**
 * True for public unicast addresses only. ipaddr.js names every special range (loopback, private,
 * linkLocal, uniqueLocal, unspecified, carrierGradeNat, reserved, multicast, …); anything but "unicast" is
 * refused. IPv4-mapped IPv6 (::ffff:127.0.0.1) is judged as the IPv4 address it is. The IPv4-compatible
 * form (::/96, RFC 4291 §2.5.5.1, deprecated) is refused whole: ipaddr.js calls ::7f00:1 (127.0.0.1 written
 * that way) "unicast", and systems that still map it reach the IPv4 address it carries.
 */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  const parsed = ipaddr.parse(address);
  if (parsed.kind() === "ipv6" && parsed.match(ipv4Compatible)) return false;
  return ipaddr.process(address).range() === "unicast";
}

/** The host of a URL without IPv6 brackets. */
function bareHost(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, "$1");
}

/**
 * Why a webhook URL is refused when it is given, or undefined if it may be used. Only literals and
 * `localhost` can be judged now; names are judged when they are resolved, at every attempt.
 */
export function literalRefusal(url: URL): string | undefined {
  const host = bareHost(url).toLowerCase();
  if (host === "localhost" || host.endsWith(".localhost")) return `${host} is this machine`;
  if (ipaddr.isValid(host) && !isPublicAddress(host)) {
    return `${host} is a ${ipaddr.process(host).range()} address, not a public one`;
  }
  return undefined;
}

/** The IP literal a URL names, if it names one (net.connect does not look such hosts up). */
export function literalAddress(url: URL): string | undefined {
  const host = bareHost(url);
  return ipaddr.isValid(host) ? host : undefined;
}

/**
 * A `lookup` for net.connect that resolves with `resolveAll`, refuses the connection if any address is not
 * public (a name with one private address among public ones could be steered to it), and hands the checked
 * addresses to the socket: what was checked is what is connected to.
 */
export function guardedLookup(resolveAll: ResolveAll, allowPrivate: boolean): LookupFunction {
  return (hostname, options, callback) => {
    resolveAll(hostname).then(
      (addresses) => {
        const refused = allowPrivate ? undefined : addresses.find((a) => !isPublicAddress(a.address));
        if (refused) {
          callback(new AddressNotAllowedError(refused.address), "", 0);
          return;
        }
        const family = typeof options.family === "number" ? options.family : 0;
        const usable = family === 0 ? addresses : addresses.filter((a) => a.family === family);
        const first = usable[0];
        if (!first) {
          callback(Object.assign(new Error(`${hostname} has no address`), { code: "ENOTFOUND" }), "", 0);
          return;
        }
        // net.connect with autoSelectFamily asks for every address; otherwise for one.
        if (options.all) (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, usable);
        else callback(null, first.address, first.family);
      },
      (error: NodeJS.ErrnoException) => callback(error, "", 0),
    );
  };
}
