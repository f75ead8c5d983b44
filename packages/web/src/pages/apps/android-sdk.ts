// Android API levels as people know them: "API 24 (Android 7.0)". The manifest says only the number.
const releases: Record<number, string> = {
  16: "4.1",
  17: "4.2",
  18: "4.3",
  19: "4.4",
  20: "4.4W",
  21: "5.0",
  22: "5.1",
  23: "6",
  24: "7.0",
  25: "7.1",
  26: "8.0",
  27: "8.1",
  28: "9",
  29: "10",
  30: "11",
  31: "12",
  32: "12L",
  33: "13",
  34: "14",
  35: "15",
  36: "16",
};

/** "API 24 (Android 7.0)"; a level this table does not know yet is just "API 37". */
export function androidApiLevel(level: number): string {
  const release = releases[level];
  return release ? `API ${level} (Android ${release})` : `API ${level}`;
}

/** "CAMERA" for "android.permission.CAMERA": the platform's own permissions read shorter; others stay whole. */
export function shortPermission(permission: string): string {
  return permission.startsWith("android.permission.")
    ? permission.slice("android.permission.".length)
    : permission;
}
