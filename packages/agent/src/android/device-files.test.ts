import { describe, expect, it } from "vitest";
import { pulledArtifactName, saysRemoteMissing } from "./device-files.ts";

describe("pulledArtifactName", () => {
  it("is the device path under pulled/<shard>/, without its leading slash", () => {
    expect(pulledArtifactName("pulled", 1, "/sdcard/Pictures/screenshots/login.png")).toBe(
      "pulled/1/sdcard/Pictures/screenshots/login.png",
    );
  });

  it("turns characters the server refuses into _ and never starts a segment with . or -", () => {
    expect(pulledArtifactName("pulled", 0, "/sdcard/allure results/.hidden/a#b (1).json")).toBe(
      "pulled/0/sdcard/allure_results/_.hidden/a_b__1_.json",
    );
  });

  it("folds a path deeper than an artifact name may be into its last segment", () => {
    const name = pulledArtifactName("pulled", 0, "/a/b/c/d/e/f/g/h.txt");
    expect(name.split("/")).toHaveLength(8);
    expect(name).toBe("pulled/0/a/b/c/d/e/f__g__h.txt");
  });
});

describe("saysRemoteMissing", () => {
  it("knows both of adb's texts for a path that is not on the device", () => {
    expect(
      saysRemoteMissing("adb: error: failed to stat remote object '/sdcard/x': No such file or directory"),
    ).toBe(true);
    expect(saysRemoteMissing("adb: error: remote object '/sdcard/x' does not exist")).toBe(true);
    expect(saysRemoteMissing("adb: error: failed to copy '/sdcard/x' to 'y': Permission denied")).toBe(false);
  });
});
