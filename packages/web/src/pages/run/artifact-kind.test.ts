import { describe, expect, it } from "vitest";
import { artifactKind, isErrorLine, videoStartSeconds, videoTime } from "./artifact-kind.ts";

describe("artifactKind", () => {
  it("goes by the content type, then by the extension", () => {
    expect(artifactKind("shot.bin", "image/png")).toBe("image");
    expect(artifactKind("part-01.mp4", "video/mp4")).toBe("video");
    expect(artifactKind("logcat/x.txt", "text/plain; charset=utf-8")).toBe("text");
    expect(artifactKind("logcat/x.txt", "application/octet-stream")).toBe("text");
    expect(artifactKind("report.json")).toBe("text");
    expect(artifactKind("commands.jsonl", "application/octet-stream")).toBe("text");
    expect(artifactKind("allure-results/environment.properties", "application/octet-stream")).toBe("text");
    expect(artifactKind("coverage/0/testbay-0.ec", "application/octet-stream")).toBe("other");
    expect(artifactKind("app.apk", "application/vnd.android.package-archive")).toBe("other");
  });

  it("leaves SVG a download: it can carry script", () => {
    expect(artifactKind("diagram.svg", "image/svg+xml")).toBe("other");
    expect(artifactKind("diagram.svg")).toBe("other");
  });
});

describe("isErrorLine", () => {
  it("marks error lines and crashes of threadtime and brief logcat", () => {
    expect(isErrorLine("11-24 06:40:00.123  1234  1250 E AndroidRuntime: Process: com.example.basic")).toBe(
      true,
    );
    expect(isErrorLine("11-24 06:40:00.123  1234  1250 E AndroidRuntime: FATAL EXCEPTION: main")).toBe(true);
    expect(isErrorLine("E/TestRunner: failed: signsIn(com.example.LoginTest)")).toBe(true);
    expect(isErrorLine("11-24 06:40:00.123  1234  1250 W Login   : bad password")).toBe(false);
    expect(isErrorLine("11-24 06:40:00.123  1234  1250 I TestRunner: started: signsIn")).toBe(false);
  });
});

describe("videoStartSeconds", () => {
  it("opens 3 s before the failure, at 0 when it is nearer the start, at 0 without an offset", () => {
    expect(videoStartSeconds(73_250)).toBe(70.25);
    expect(videoStartSeconds(1_200)).toBe(0);
    expect(videoStartSeconds(null)).toBe(0);
    expect(videoTime(70.25)).toBe("1:10");
    expect(videoTime(5)).toBe("0:05");
  });
});
