import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { findOrchestratorApks } from "./android-tools.ts";

function dirWith(...names: string[]): string {
  const dir = mkdtempSync(path.join(tmpdir(), "android-tools-"));
  for (const name of names) writeFileSync(path.join(dir, name), "");
  return dir;
}

describe("findOrchestratorApks", () => {
  it("takes the newest of each by version, as Maven names them", async () => {
    const dir = dirWith(
      "orchestrator-1.4.2.apk",
      "orchestrator-1.10.0.apk",
      "orchestrator-1.5.1.apk",
      "test-services-1.5.0.apk",
      "test-services-1.4.2.apk",
      "notes.txt",
    );
    expect(await findOrchestratorApks(dir)).toEqual({
      orchestrator: path.join(dir, "orchestrator-1.10.0.apk"),
      testServices: path.join(dir, "test-services-1.5.0.apk"),
    });
  });

  it("takes the plain names too", async () => {
    const dir = dirWith("orchestrator.apk", "test-services.apk");
    expect(await findOrchestratorApks(dir)).toEqual({
      orchestrator: path.join(dir, "orchestrator.apk"),
      testServices: path.join(dir, "test-services.apk"),
    });
  });

  it("says what is missing and how to get it", async () => {
    const none = await findOrchestratorApks(null);
    expect(none).toEqual({ missing: expect.stringContaining("this agent has no --android-tools") });
    const half = await findOrchestratorApks(dirWith("test-services-1.5.0.apk"));
    expect("missing" in half && half.missing).toMatch(
      /has no orchestrator-\*\.apk \(androidx\.test:orchestrator\)/,
    );
    expect("missing" in half && half.missing).toContain(
      "https://dl.google.com/dl/android/maven2/androidx/test/orchestrator/",
    );
  });
});
