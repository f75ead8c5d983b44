// Times are shown in the browser's time zone; the API's UTC value stays available (a title attribute).

const local = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "medium" });
const localToday = new Intl.DateTimeFormat(undefined, { timeStyle: "medium" });

export function formatLocal(iso: string, now = new Date()): string {
  const date = new Date(iso);
  return date.toDateString() === now.toDateString() ? localToday.format(date) : local.format(date);
}

/** "2026-11-24 03:52:41 UTC": unambiguous, for the title a pointer or a screen reader reaches. */
export function formatUtc(iso: string): string {
  return `${new Date(iso)
    .toISOString()
    .replace("T", " ")
    .replace(/\.\d+Z$/, "")} UTC`;
}
