import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { flankKeys, gcloudKeys } from "./flank-keys.ts";

/** docs/flank.md's mapping is what users read: it must name every key the converter knows, and no other. */
const guide = readFileSync(new URL("../../../../docs/flank.md", import.meta.url), "utf8");
// `flank.yml` is the file's name, not a key.
const named = new Set(
  [...guide.matchAll(/`(gcloud|flank)\.([A-Za-z-]+)`/g)]
    .map((m) => `${m[1]}.${m[2]}`)
    .filter((name) => name !== "flank.yml"),
);
const known = [
  ...Object.keys(gcloudKeys).map((key) => `gcloud.${key}`),
  ...Object.keys(flankKeys).map((key) => `flank.${key}`),
];

describe("docs/flank.md's mapping", () => {
  it("names every key of Flank's configuration the converter reads", () => {
    expect(known.filter((key) => !named.has(key))).toEqual([]);
  });

  it("names no key the converter does not know", () => {
    expect([...named].filter((key) => !known.includes(key))).toEqual([]);
  });
});
