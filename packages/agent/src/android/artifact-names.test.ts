import { describe, expect, it } from "vitest";
import { artifactSegment, testArtifactName } from "./artifact-names.ts";

// The server's rule for a path segment of an artifact name.
const segment = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$/;

describe("artifact names for test captures", () => {
  it("keeps a plain test name readable", () => {
    expect(
      testArtifactName("device-emulator-5554/screenshots", "com.example.LoginTest", "signsIn", "png"),
    ).toBe("device-emulator-5554/screenshots/com.example.LoginTest.signsIn.png");
  });

  it("makes any test name a name the server takes", () => {
    for (const name of [
      "signsIn[user=ann, pw=(empty)]",
      "..",
      ".hidden",
      "名前のテスト",
      "a/b\\c",
      "x".repeat(400),
    ]) {
      const made = testArtifactName("shots", "com.example.T", name, "png");
      for (const part of made.split("/")) expect(part).toMatch(segment);
      expect(made.endsWith(".png")).toBe(true);
    }
  });

  it("gives each rerun of a test its own name, also when the test's name is cut", () => {
    const first = testArtifactName("shots", "com.example.T", "signsIn", "png");
    const rerun = testArtifactName("shots", "com.example.T", "signsIn", "png", 1);
    expect(rerun).toBe("shots/com.example.T.signsIn.retry-1.png");
    expect(rerun).not.toBe(first);
    const long = "z".repeat(400);
    const names = [0, 1, 2].map((retry) => testArtifactName("shots", "com.example.T", long, "txt", retry));
    expect(new Set(names).size).toBe(3);
    for (const made of names) for (const part of made.split("/")) expect(part).toMatch(segment);
    expect(names[2]?.endsWith(".retry-2.txt")).toBe(true);
  });

  it("keeps two long names that differ only at the end apart", () => {
    const long = "y".repeat(300);
    expect(artifactSegment(`${long}1`)).not.toBe(artifactSegment(`${long}2`));
    expect(artifactSegment(`${long}1`)).toMatch(segment);
  });
});
