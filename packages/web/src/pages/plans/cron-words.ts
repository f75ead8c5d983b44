// A schedule's cron expression said in words, for the shapes people usually write (every day at 02:00, weekdays at
// 06:00, every 15 minutes); anything else has no words and the page shows the expression alone. The expression is
// always shown as well: these words are a reading aid, croner (packages/server/src/features/schedules/
// cron-schedule.ts) is what decides.

const dayNames = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];

const whole = (field: string) => /^\d+$/.test(field);
const twoDigits = (value: string) => value.padStart(2, "0");

function joinWords(words: readonly string[]): string {
  if (words.length <= 1) return words.join("");
  return `${words.slice(0, -1).join(", ")} and ${words.at(-1)}`;
}

/** "02:00", "02:00 and 14:00": the hours of a list with one minute. */
function timesOfDay(minute: string, hours: string): string | undefined {
  const list = hours.split(",");
  if (!whole(minute) || !list.every(whole)) return undefined;
  if (list.some((hour) => Number(hour) > 23) || Number(minute) > 59) return undefined;
  return joinWords(list.map((hour) => `${twoDigits(hour)}:${twoDigits(minute)}`));
}

/** "Mondays to Fridays", "Mondays and Thursdays"; undefined for what it does not read (names, steps). */
function daysOfWeek(field: string): string | undefined {
  const day = (value: string) => dayNames[Number(value) % 7];
  const range = /^([0-7])-([0-7])$/.exec(field);
  if (range?.[1] && range[2]) {
    if (field === "1-5") return "Monday to Friday";
    return `${day(range[1])} to ${day(range[2])}`;
  }
  const list = field.split(",");
  if (!list.every((value) => /^[0-7]$/.test(value))) return undefined;
  return joinWords(list.map((value) => `${day(value)}s`));
}

function ordinal(day: number): string {
  const tens = day % 100;
  if (tens >= 11 && tens <= 13) return `${day}th`;
  return `${day}${["th", "st", "nd", "rd"][day % 10] ?? "th"}`;
}

/** The expression in words ("Every day at 02:00"), or undefined when it is not one of the usual shapes. */
export function cronInWords(cron: string): string | undefined {
  const fields = cron.trim().split(/\s+/);
  if (fields.length === 6) {
    const [seconds, ...rest] = fields;
    const every = /^\*\/(\d+)$/.exec(seconds ?? "");
    if (rest.every((field) => field === "*")) {
      if (seconds === "*") return "Every second";
      if (every) return `Every ${every[1]} seconds`;
    }
    if (seconds !== "0") return undefined;
    return cronInWords(rest.join(" "));
  }
  if (fields.length !== 5) return undefined;
  const [minute = "", hour = "", dayOfMonth = "", month = "", dayOfWeek = ""] = fields;
  if (month !== "*") return undefined;
  const everyMinutes = /^\*\/(\d+)$/.exec(minute);
  if (everyMinutes && hour === "*" && dayOfMonth === "*" && dayOfWeek === "*") {
    return everyMinutes[1] === "1" ? "Every minute" : `Every ${everyMinutes[1]} minutes`;
  }
  if (minute === "*" && hour === "*" && dayOfMonth === "*" && dayOfWeek === "*") return "Every minute";
  if (whole(minute) && hour === "*" && dayOfMonth === "*" && dayOfWeek === "*") {
    return `Every hour at minute ${Number(minute)}`;
  }
  const everyHours = /^\*\/(\d+)$/.exec(hour);
  if (whole(minute) && everyHours && dayOfMonth === "*" && dayOfWeek === "*") {
    const at = Number(minute) === 0 ? "" : ` at minute ${Number(minute)}`;
    return everyHours[1] === "1" ? `Every hour${at}` : `Every ${everyHours[1]} hours${at}`;
  }
  const times = timesOfDay(minute, hour);
  if (!times) return undefined;
  if (dayOfMonth === "*" && dayOfWeek === "*") return `Every day at ${times}`;
  if (dayOfMonth === "*") {
    const days = daysOfWeek(dayOfWeek);
    return days ? `${days} at ${times}` : undefined;
  }
  if (dayOfWeek === "*" && whole(dayOfMonth) && Number(dayOfMonth) >= 1 && Number(dayOfMonth) <= 31) {
    return `On the ${ordinal(Number(dayOfMonth))} of every month at ${times}`;
  }
  return undefined;
}

/** A schedule's `version` as people say it: "latest", "latest:branch=NAME" or a fixed version. */
export function scheduleVersionInWords(version: string): string {
  if (version === "latest") return "The newest version";
  const branch = /^latest:branch=(.+)$/.exec(version);
  if (branch) return `The newest version of branch ${branch[1]}`;
  return `Version ${version}`;
}
