/**
 * `--emulator AVD[=N]` and `--label KEY=VALUE` as the agent's command line takes them (API.md §13): N instances
 * of the AVD (1 unless given), and labels every device of the agent carries for plans' `labels` selectors.
 */

export interface EmulatorRequest {
  avd: string;
  instances: number;
}

/** An AVD name as avdmanager allows it (letters, digits, `.`, `_`, `-`). */
const AVD_NAME = /^[A-Za-z0-9._-]{1,100}$/;

/** At most this many instances of one AVD: each is a VM with gigabytes of RAM. */
export const MAX_INSTANCES = 16;

/** Reads one `--emulator` value; throws a message naming the fix. */
export function parseEmulatorOption(value: string): EmulatorRequest {
  const at = value.lastIndexOf("=");
  const avd = at < 0 ? value : value.slice(0, at);
  const count = at < 0 ? "1" : value.slice(at + 1);
  if (!AVD_NAME.test(avd)) {
    throw new Error(
      `--emulator "${value}": name an AVD (letters, digits, '.', '_', '-'), e.g. Pixel_7_API_34=3`,
    );
  }
  const instances = Number(count);
  if (!/^\d+$/.test(count) || instances < 1 || instances > MAX_INSTANCES) {
    throw new Error(`--emulator "${value}": the count after = is a whole number from 1 to ${MAX_INSTANCES}`);
  }
  return { avd, instances };
}

/** The same AVD named twice adds up: `--emulator A=2 --emulator A` is three instances of A. */
export function mergeEmulatorRequests(requests: readonly EmulatorRequest[]): EmulatorRequest[] {
  const byAvd = new Map<string, number>();
  for (const r of requests) byAvd.set(r.avd, (byAvd.get(r.avd) ?? 0) + r.instances);
  return [...byAvd].map(([avd, instances]) => ({ avd, instances }));
}

/** Label keys and values as plans' `labels` selectors compare them: plain words, no spaces. */
const LABEL_KEY = /^[A-Za-z0-9._-]{1,50}$/;
const LABEL_VALUE = /^[A-Za-z0-9._:/@-]{0,100}$/;

/** Reads one `--label KEY=VALUE`; throws a message naming the fix. */
export function parseLabelOption(value: string): [string, string] {
  const at = value.indexOf("=");
  const key = at < 0 ? value : value.slice(0, at);
  const label = at < 0 ? "" : value.slice(at + 1);
  if (at < 0 || !LABEL_KEY.test(key) || !LABEL_VALUE.test(label)) {
    throw new Error(
      `--label "${value}": use KEY=VALUE (KEY of letters, digits, '.', '_', '-'; VALUE without spaces), e.g. team=payments`,
    );
  }
  return [key, label];
}
