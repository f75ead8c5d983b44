/**
 * Console ports for the emulators an agent starts: even numbers from 5554 to 5682 (the emulator's documented
 * range for -port; adb's port is the odd one after), one per instance, skipping any another emulator on the
 * host already holds (its emulator-PORT serial in `adb devices`).
 */
export const FIRST_PORT = 5554;
export const LAST_PORT = 5682;

/** `count` free ports, lowest first; throws when the range has too few. */
export function pickPorts(count: number, taken: Iterable<number>): number[] {
  const busy = new Set(taken);
  const ports: number[] = [];
  for (let port = FIRST_PORT; port <= LAST_PORT && ports.length < count; port += 2) {
    if (!busy.has(port)) ports.push(port);
  }
  if (ports.length < count) {
    throw new Error(
      `no free emulator ports for ${count} instances: the range ${FIRST_PORT}-${LAST_PORT} holds ${(LAST_PORT - FIRST_PORT) / 2 + 1} and ${busy.size} are taken`,
    );
  }
  return ports;
}

/** The console port of an `emulator-PORT` serial, or null for any other serial. */
export function emulatorPort(serial: string): number | null {
  const match = /^emulator-(\d+)$/.exec(serial);
  return match ? Number(match[1]) : null;
}
