import { createServer, type Server } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { isPortFree, NoFreePortBlockError, PortBlocks, parsePortRange } from "./port-blocks.ts";

describe("parsePortRange", () => {
  it("reads FROM-TO", () => {
    expect(parsePortRange("4723-4822")).toEqual({ from: 4723, to: 4822 });
  });

  it.each([
    ["4723", "FROM-TO"],
    ["80-200", "1024 to 65535"],
    ["5000-5002", "at least 4 ports"],
    ["60000-70000", "1024 to 65535"],
  ])("refuses %s", (text, why) => {
    expect(() => parsePortRange(text)).toThrow(why);
  });
});

describe("PortBlocks", () => {
  const listening: Server[] = [];
  afterEach(async () => {
    await Promise.all(listening.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
  });

  /** A free range of `count` blocks, found by asking the system for a port and trying the ones after it. */
  async function freeRange(blocks: number): Promise<{ from: number; to: number }> {
    for (let attempt = 0; attempt < 20; attempt++) {
      const probe = createServer();
      const port = await new Promise<number>((resolve) =>
        probe.listen(0, "127.0.0.1", () => resolve((probe.address() as { port: number }).port)),
      );
      await new Promise((resolve) => probe.close(resolve));
      const from = Math.min(port, 65535 - blocks * 4);
      const ports = Array.from({ length: blocks * 4 }, (_, i) => from + i);
      if ((await Promise.all(ports.map(isPortFree))).every(Boolean))
        return { from, to: from + blocks * 4 - 1 };
    }
    throw new Error("no free range found");
  }

  it("hands out distinct blocks, skips one whose port is in use, and takes a released block back", async () => {
    const range = await freeRange(3);
    const busy = createServer();
    listening.push(busy);
    await new Promise<void>((resolve) => busy.listen(range.from + 2, "127.0.0.1", resolve));
    const blocks = new PortBlocks(range);
    const [first, second] = await Promise.all([blocks.reserve(), blocks.reserve()]);
    expect([first.appiumPort, second.appiumPort].sort()).toEqual([range.from + 4, range.from + 8]);
    expect(first.driverPort).toBe(first.appiumPort + 1);
    await expect(blocks.reserve()).rejects.toBeInstanceOf(NoFreePortBlockError);
    first.release();
    expect((await blocks.reserve()).appiumPort).toBe(first.appiumPort);
  });
});
