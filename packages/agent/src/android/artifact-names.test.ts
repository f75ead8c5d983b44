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

  it("keeps two long names that differ only at the end apart", () => {
    const long = "y".repeat(300);
    expect(artifactSegment(`${long}1`)).not.toBe(artifactSegment(`${long}2`));
    expect(artifactSegment(`${long}1`)).toMatch(segment);
  });
});
