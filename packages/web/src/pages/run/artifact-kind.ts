/** What a browser can show of an artifact inline: a picture, a video, text; anything else is a download. */
export type ArtifactKind = "image" | "video" | "text" | "other";

const byExtension: Record<string, ArtifactKind> = {
  png: "image",
  jpg: "image",
  jpeg: "image",
  gif: "image",
  webp: "image",
  mp4: "video",
  webm: "video",
  txt: "text",
  log: "text",
  xml: "text",
  json: "text",
  // A session's command log (API.md §12), uploaded as application/x-ndjson (before, as octet-stream).
  jsonl: "text",
  csv: "text",
  // Java properties, such as the environment.properties of Allure results pulled off a device (API.md §14).
  properties: "text",
};

/**
 * By the content type the agent uploaded it with, else by its name's extension (an upload labelled
 * application/octet-stream may still be a .txt). SVG is left a download: it can carry script.
 */
export function artifactKind(name: string, contentType?: string): ArtifactKind {
  const type = contentType?.split(";")[0]?.trim().toLowerCase() ?? "";
  if (type.startsWith("image/") && type !== "image/svg+xml") return "image";
  if (type.startsWith("video/")) return "video";
  if (
    type.startsWith("text/") ||
    type === "application/json" ||
    type === "application/x-ndjson" ||
    type === "application/xml"
  )
    return "text";
  const extension = name.slice(name.lastIndexOf(".") + 1).toLowerCase();
  return byExtension[extension] ?? "other";
}

/** The last segment of an artifact's name: "part-02.mp4" of "device-emulator-5554/video/part-02.mp4". */
export const baseName = (name: string) => name.slice(name.lastIndexOf("/") + 1);

/**
 * A logcat line worth the eye: an error (threadtime's level column " E ", brief's "E/") or a crash
 * ("FATAL EXCEPTION"), which the excerpt highlights.
 */
export function isErrorLine(line: string): boolean {
  return line.includes(" E ") || /^E\//.test(line) || line.includes("FATAL EXCEPTION");
}

/** A failure's video opens this long before the failure: the steps that led to it are on screen. */
export const leadInMs = 3_000;

/** Where a failure's video starts playing, in seconds: a little before the failure, never before 0. */
export function videoStartSeconds(offsetMs: number | null): number {
  if (offsetMs === null) return 0;
  return Math.max(0, offsetMs - leadInMs) / 1000;
}

/** "1:13" for 73.25 s: a position in a video, as players show it. */
export function videoTime(seconds: number): string {
  const whole = Math.floor(seconds);
  return `${Math.floor(whole / 60)}:${String(whole % 60).padStart(2, "0")}`;
}
