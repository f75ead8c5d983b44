import { describe, expect, it } from "vitest";
import { servedContentType } from "./served-content-type.ts";

describe("servedContentType", () => {
  it.each([
    "image/png",
    "image/jpeg",
    "video/mp4",
    "text/plain; charset=utf-8",
    "application/json",
    "application/x-ndjson",
    "text/xml",
    "application/zip",
    "application/pdf",
  ])("keeps %s", (type) => {
    expect(servedContentType(type)).toBe(type);
  });

  it.each([
    "application/javascript",
    "text/javascript",
    "text/html",
    "text/html; charset=utf-8",
    "image/svg+xml",
    "application/xhtml+xml",
    "text/css",
    "IMAGE/SVG+XML",
    "",
  ])("serves %s as application/octet-stream", (type) => {
    expect(servedContentType(type)).toBe("application/octet-stream");
  });
});
