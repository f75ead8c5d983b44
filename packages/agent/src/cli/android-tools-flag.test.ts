/** `testbay-agent --android-tools DIR` (API.md §14) as the command line reads it: a directory without the APKs is exit 2. */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { main } from "./main.ts";

const TOOLS = fileURLToPath(new URL("../../test/fixtures/tool-apks/", import.meta.url));

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

describe("testbay-agent --android-tools", () => {
  it("names the orchestrator APKs it found and goes on", async () => {
    const { stderr } = await run(["--android-tools", TOOLS]);
    expect(stderr).toContain("android tools: orchestrator-1.5.1.apk, test-services-1.5.0.apk");
    expect(stderr).toContain("No agent credentials");
  });

  it("refuses a directory without test-services, naming the Maven coordinates", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "android-tools-"));
    writeFileSync(path.join(dir, "orchestrator-1.5.1.apk"), "");
    const { code, stderr } = await run(["--android-tools", dir]);
    expect(code).toBe(2);
    expect(stderr).toContain("has no test-services-*.apk (androidx.test.services:test-services)");
    expect(stderr).not.toContain("No agent credentials");
  });

  it("refuses a directory that is not there", async () => {
    const { code, stderr } = await run(["--android-tools", "/nonexistent/android-tools"]);
    expect(code).toBe(2);
    expect(stderr).toContain("--android-tools /nonexistent/android-tools cannot be read");
  });
});
