// Types of the stand-in's log buffer (logcat.mjs) for the tests that write to a device's log directly.

/** Appends `messages` to the device's log as process `pid` wrote them now (threadtime lines). */
export function log(
  serial: string,
  pid: number,
  tid: number,
  level: string,
  tag: string,
  messages: string | string[],
): void;
