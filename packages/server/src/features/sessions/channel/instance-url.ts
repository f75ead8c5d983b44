import type { AddressInfo } from "node:net";
import { hostname } from "node:os";

/**
 * How the other instances reach this one (docs/appium-relay.md, "Several instances"): TESTBAY_INSTANCE_URL, or
 * else `http://<TESTBAY_HOST>:<the port it listens on>`. The port is the bound one, so TESTBAY_PORT=0 works. A host
 * that listens on every interface (0.0.0.0, ::) is no address to call: the machine's host name stands in for it
 * (what names a container on its network); set TESTBAY_INSTANCE_URL where that does not resolve.
 */
export function instanceUrlOf(
  configured: string | undefined,
  host: string,
  address: AddressInfo | string | null,
): string {
  if (configured) return configured;
  if (typeof address !== "object" || address === null) {
    throw new Error("the server does not listen yet: its instance URL is not known");
  }
  const unspecified = host === "0.0.0.0" || host === "::" || host === "[::]";
  const name = unspecified ? hostname() : host;
  const shown = name.includes(":") && !name.startsWith("[") ? `[${name}]` : name;
  return `http://${shown}:${address.port}`;
}
