/**
 * Where a moment of a session is in its screen recording. An Android recording is kept in parts of 180 s
 * (`device-SERIAL/video/part-01.mp4`, `part-02.mp4`…: screenrecord's limit, packages/agent/src/android/
 * screen-recorder.ts), a simulator's in one; a moment `ms` after the recording began is in part
 * `floor(ms / 180 s)`, that far into it. Approximate by the short gap between two parts.
 */
import type { Artifact } from "../../api/artifacts.ts";

export const partMs = 180_000;

/** The session's video parts in order (their names sort as they were recorded). */
export function videoParts(artifacts: readonly Artifact[]): Artifact[] {
  return artifacts
    .filter((artifact) => /\/video\/part-\d+\.mp4$/.test(artifact.name))
    .sort((a, b) => a.name.localeCompare(b.name));
}

export interface VideoPosition {
  /** Which of the parts, from 0. */
  part: number;
  seconds: number;
}

/** The part showing `ms` after the recording began, and the time in it; the last part's end past the last. */
export function videoPosition(ms: number, parts: number): VideoPosition {
  const at = Math.max(0, ms);
  const part = Math.min(Math.floor(at / partMs), Math.max(0, parts - 1));
  return { part, seconds: (at - part * partMs) / 1000 };
}
