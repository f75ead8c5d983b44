/**
 * The agent's loopback ports for Appium (`--appium-ports FROM-TO`), handed out in blocks of four, one block per
 * running session (so per device: a device has at most one session). A block holds the Appium server's own port
 * and the three ports its driver opens for the device (UiAutomator2: systemPort, mjpegServerPort,
 * chromedriverPort; XCUITest: wdaLocalPort, mjpegServerPort, webkitDebugProxyPort). Drivers pick fixed
 * defaults (8200, 7810, 8100…) when not told, so two sessions on one host would collide: that is why Testbay
 * owns these capabilities (API.md §12) and why appium-device-farm also gives each device a port range.
 */
import { createServer } from "node:net";

export interface PortRange {
  from: number;
  to: number;
}

export interface PortBlock {
  /** Where the Appium server listens. */
  appiumPort: number;
  /** UiAutomator2's systemPort, XCUITest's wdaLocalPort. */
  driverPort: number;
  mjpegServerPort: number;
  /** UiAutomator2's chromedriverPort, XCUITest's webkitDebugProxyPort. */
  proxyPort: number;
}

export const PORTS_PER_BLOCK = 4;

/** Appium's own default port onwards: 25 blocks, enough for the devices one host can drive. */
export const DEFAULT_PORT_RANGE: PortRange = { from: 4723, to: 4822 };

/** Reads `FROM-TO` (inclusive, unprivileged ports, room for at least one block); throws with what is wrong. */
export function parsePortRange(text: string): PortRange {
  const match = /^(\d{1,5})-(\d{1,5})$/.exec(text.trim());
  if (!match)
    throw new Error(`expected FROM-TO, such as ${DEFAULT_PORT_RANGE.from}-${DEFAULT_PORT_RANGE.to}`);
  const from = Number(match[1]);
  const to = Number(match[2]);
  if (from < 1024 || to > 65535) throw new Error("ports must be from 1024 to 65535");
  if (to - from + 1 < PORTS_PER_BLOCK) {
    throw new Error(`the range needs at least ${PORTS_PER_BLOCK} ports (one session's block)`);
  }
  return { from, to };
}

/** Whether nothing listens on 127.0.0.1:port now: the one check that is true to the system is to bind it. */
export function isPortFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once("error", () => resolve(false));
    probe.listen({ port, host: "127.0.0.1", exclusive: true }, () => probe.close(() => resolve(true)));
  });
}

export class NoFreePortBlockError extends Error {
  constructor(range: PortRange) {
    super(
      `no free block of ${PORTS_PER_BLOCK} ports in ${range.from}-${range.to} (--appium-ports): every block is in use by a session or another program`,
    );
    this.name = "NoFreePortBlockError";
  }
}

export class PortBlocks {
  private readonly taken = new Set<number>();
  private readonly count: number;

  constructor(readonly range: PortRange = DEFAULT_PORT_RANGE) {
    this.count = Math.floor((range.to - range.from + 1) / PORTS_PER_BLOCK);
  }

  /**
   * The first block that this agent does not use and whose four ports are free now. The block is marked taken
   * before its ports are checked, so concurrent reservations never get the same one. Another program may still
   * bind a port between the check and Appium's start; the caller then fails that session (Appium says so).
   */
  async reserve(): Promise<PortBlock & { release(): void }> {
    for (let index = 0; index < this.count; index++) {
      if (this.taken.has(index)) continue;
      this.taken.add(index);
      const first = this.range.from + index * PORTS_PER_BLOCK;
      const ports = [first, first + 1, first + 2, first + 3];
      const free = await Promise.all(ports.map(isPortFree));
      if (free.every(Boolean)) {
        let released = false;
        return {
          appiumPort: first,
          driverPort: first + 1,
          mjpegServerPort: first + 2,
          proxyPort: first + 3,
          release: () => {
            if (released) return;
            released = true;
            this.taken.delete(index);
          },
        };
      }
      this.taken.delete(index);
    }
    throw new NoFreePortBlockError(this.range);
  }
}
