/**
 * The one rule of a WebDriver session's `appium:platformVersion` (API.md §12: "os_version prefix"): it picks the
 * devices whose OS version starts with it, a whole component at a time. "14" matches 14 and 14.1.2, not 141;
 * "17.4" matches 17.4 and 17.4.1, not 17.41 nor 17; "17." matches 17.2, not 17.
 *
 * Said as the prefixes a device's OS version answers to, so the claim (claim-query.ts, SQL on both databases) and
 * the waiting reason (executions/waiting-reason.ts) both ask one question, "is the run's prefix one of these?",
 * with no LIKE patterns nor string functions that differ between SQLite and PostgreSQL.
 */

/**
 * Every prefix that picks a device on `osVersion`: its first components joined, and those followed by the dot
 * that starts the next component. `osVersionPrefixes("17.4.1")`: 17, 17., 17.4, 17.4., 17.4.1.
 */
export function osVersionPrefixes(osVersion: string): string[] {
  const components = osVersion.split(".");
  const prefixes = new Set<string>();
  for (let count = 1; count <= components.length; count++) {
    const joined = components.slice(0, count).join(".");
    prefixes.add(joined);
    if (count < components.length) prefixes.add(`${joined}.`);
  }
  return [...prefixes];
}

export function osVersionMatches(prefix: string, osVersion: string): boolean {
  return osVersionPrefixes(osVersion).includes(prefix);
}

/** The versions a prefix picks, as a waiting reason says them: "14 or 14.*", "17.*" (for "17."). */
export function osVersionPrefixShown(prefix: string): string {
  return prefix.endsWith(".") ? `${prefix}*` : `${prefix} or ${prefix}.*`;
}
