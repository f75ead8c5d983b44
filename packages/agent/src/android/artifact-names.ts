/**
 * Artifact names for what a device step captures per test. The server takes names made of plain path
 * segments ([A-Za-z0-9_] first, then [A-Za-z0-9._-], at most 128 characters each), and test names hold
 * anything ("signsIn[user=ann, pw=(empty)]"), so every other character becomes "_" and a long name is cut
 * and given a short hash, which keeps two long names that differ at the end apart.
 */
import { createHash } from "node:crypto";

const maxSegment = 128;

export function artifactSegment(text: string, maxLength = maxSegment): string {
  let safe = text.replace(/[^A-Za-z0-9._-]/g, "_");
  if (!/^[A-Za-z0-9_]/.test(safe)) safe = `_${safe}`;
  if (safe.length <= maxLength) return safe;
  const hash = createHash("sha256").update(text).digest("hex").slice(0, 10);
  return `${safe.slice(0, maxLength - hash.length - 1)}-${hash}`;
}

/**
 * "screenshots/com.example.LoginTest.signsIn.png" and the like. A rerun of the test (retry_failed_tests) gets
 * its own name, "….signsIn.retry-1.png", so every try's captures are kept; the suffix stays whole however long
 * the test's name is.
 */
export function testArtifactName(
  folder: string,
  classname: string,
  name: string,
  extension: string,
  retry = 0,
): string {
  const suffix = retry > 0 ? `.retry-${retry}.${extension}` : `.${extension}`;
  return `${folder}/${artifactSegment(`${classname}.${name}`, maxSegment - suffix.length)}${suffix}`;
}
