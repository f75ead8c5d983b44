import type { TestCase } from "../../api/types.ts";

/** Which device a test ran on, as short as it can be said: "Pixel 8 · 14", or the device run's position. */
export function deviceLabel(test: TestCase): string {
  const { model, os_version, serial, position } = test.device;
  const named = [model ?? serial, os_version].filter(Boolean).join(" · ");
  return named || `device ${position + 1}`;
}
