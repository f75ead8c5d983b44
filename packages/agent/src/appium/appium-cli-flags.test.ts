/** `testbay-agent`'s Appium flags as the command line reads them (src/cli/main.ts): mistakes are exit 2. */
import { describe, expect, it } from "vitest";
import { main } from "../cli/main.ts";

async function run(argv: string[]): Promise<{ code: number; stderr: string }> {
  let stderr = "";
  const code = await main(argv, {
    // No credentials: a run that got past the flags stops at "No agent credentials" (exit 2 too, other words).
    env: { TESTBAY_URL: "http://127.0.0.1:9" },
    stdout: { write: () => true },
    stderr: {
      write: (text: string) => {
        stderr += text;
        return true;
      },
    },
    onStopSignal: () => {},
  });
  return { code, stderr };
}

describe("testbay-agent --appium flags", () => {
  it("accepts --appium with a path, the two allowances and a port range", async () => {
    const { code, stderr } = await run([
      "--appium",
      "/opt/appium/bin/appium",
      "--appium-allow-local-apps",
      "--appium-allow-private-app-urls",
      "--appium-ports",
      "5000-5099",
    ]);
    expect(code).toBe(2);
    expect(stderr).toContain("No agent credentials");
  });

  it("accepts a bare --appium before other options", async () => {
    const { stderr } = await run(["--appium", "--allow-shell"]);
    expect(stderr).toContain("No agent credentials");
  });

  it("refuses a malformed port range", async () => {
    const { code, stderr } = await run(["--appium", "--appium-ports", "5000"]);
    expect(code).toBe(2);
    expect(stderr).toContain("--appium-ports");
    expect(stderr).toContain("expected FROM-TO");
  });

  it("refuses --appium-allow-local-apps without --appium", async () => {
    const { code, stderr } = await run(["--appium-allow-local-apps"]);
    expect(code).toBe(2);
    expect(stderr).toContain("--appium-allow-local-apps need --appium");
  });
});
