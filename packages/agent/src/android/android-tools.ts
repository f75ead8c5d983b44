/**
 * The APKs AndroidX Test Orchestrator needs on the device, from the agent's `--android-tools DIR` (API.md
 * §14): the orchestrator (Maven androidx.test:orchestrator) and the test services (Maven
 * androidx.test.services:test-services). They are found by their published file names
 * (orchestrator-1.5.1.apk, test-services-1.5.0.apk), or plainly orchestrator.apk / test-services.apk.
 */
import { readdir } from "node:fs/promises";
import path from "node:path";

export interface OrchestratorApks {
  orchestrator: string;
  testServices: string;
}

const orchestratorName = /^orchestrator(?:-[0-9][0-9A-Za-z.-]*)?\.apk$/;
const testServicesName = /^test-services(?:-[0-9][0-9A-Za-z.-]*)?\.apk$/;

/** How to get the APKs, for every message that finds them missing. */
export const HOW_TO_GET_ORCHESTRATOR =
  "download androidx.test:orchestrator and androidx.test.services:test-services from Google's Maven " +
  "(https://dl.google.com/dl/android/maven2/androidx/test/orchestrator/1.5.1/orchestrator-1.5.1.apk and " +
  ".../androidx/test/services/test-services/1.5.0/test-services-1.5.0.apk) into one directory and start " +
  "the agent with --android-tools DIR";

/** The newest of each APK in `dir`, or why they cannot be used. */
export async function findOrchestratorApks(
  dir: string | null | undefined,
): Promise<OrchestratorApks | { missing: string }> {
  if (!dir) {
    return {
      missing: `use_orchestrator needs the orchestrator APKs and this agent has no --android-tools: ${HOW_TO_GET_ORCHESTRATOR}`,
    };
  }
  const names = await readdir(dir).catch(() => null);
  if (names === null) return { missing: `--android-tools ${dir} cannot be read: ${HOW_TO_GET_ORCHESTRATOR}` };
  const newest = (pattern: RegExp) =>
    names
      .filter((n) => pattern.test(n))
      .sort((a, b) => a.localeCompare(b, "en", { numeric: true }))
      .at(-1);
  const orchestrator = newest(orchestratorName);
  const testServices = newest(testServicesName);
  const lacking = [
    orchestrator ? null : "orchestrator-*.apk (androidx.test:orchestrator)",
    testServices ? null : "test-services-*.apk (androidx.test.services:test-services)",
  ].filter((x) => x !== null);
  if (orchestrator === undefined || testServices === undefined) {
    return {
      missing: `--android-tools ${dir} has no ${lacking.join(" and no ")}: ${HOW_TO_GET_ORCHESTRATOR}`,
    };
  }
  return { orchestrator: path.join(dir, orchestrator), testServices: path.join(dir, testServices) };
}
