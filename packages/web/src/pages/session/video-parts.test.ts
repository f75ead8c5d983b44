import { describe, expect, it } from "vitest";
import type { Artifact } from "../../api/artifacts.ts";
import { videoParts, videoPosition } from "./video-parts.ts";

const artifact = (name: string) => ({ name }) as Artifact;

describe("the session's video parts", () => {
  it("are its recordings in the order they were made", () => {
    const parts = videoParts(
      ["appium.log", "device-x/video/part-02.mp4", "device-x/logcat.txt", "device-x/video/part-01.mp4"].map(
        artifact,
      ),
    );
    expect(parts.map((part) => part.name)).toEqual([
      "device-x/video/part-01.mp4",
      "device-x/video/part-02.mp4",
    ]);
  });

  it("place a moment in the 180 s part it falls in, and past the end at the last part", () => {
    expect(videoPosition(4_500, 1)).toEqual({ part: 0, seconds: 4.5 });
    expect(videoPosition(185_000, 3)).toEqual({ part: 1, seconds: 5 });
    expect(videoPosition(400_000, 2)).toEqual({ part: 1, seconds: 220 });
    expect(videoPosition(-30, 2)).toEqual({ part: 0, seconds: 0 });
  });
});
