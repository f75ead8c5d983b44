import { Cron } from "croner";
import { ApiError } from "../../errors.ts";

/**
 * A schedule's times: its cron expression read as croner reads it (API.md §15: five fields, or six with seconds
 * first), in an IANA time zone. croner does the calendar work, daylight saving time included: a fixed time that a
 * spring-forward skips fires at the first valid time after the gap, and one that a fall-back repeats fires once
 * (croner's README, "DST handling", as Vixie cron does).
 *
 * @example
 * const nightly = CronSchedule.parse("0 2 * * *", "Europe/Berlin", Date.now());
 * nightly.nextAfter(Date.now()); // the next 02:00 in Berlin, in milliseconds since the epoch
 */
export class CronSchedule {
  private constructor(
    readonly cron: string,
    /** As Intl resolves it: `utc` is stored as `UTC`. */
    readonly timezone: string,
    private readonly pattern: Cron,
  ) {}

  /**
   * Parses a schedule from a request; a wrong expression or zone, or one with no time after `now`, is a 400
   * invalid_request naming the field.
   */
  static parse(cron: string, timezone: string, now: number): CronSchedule {
    const zone = resolvedTimeZone(timezone);
    if (zone === undefined) {
      throw invalid(
        "/timezone",
        `${JSON.stringify(timezone)} is not an IANA time zone`,
        'Give an IANA time zone name such as "UTC", "Europe/Berlin" or "America/New_York" (the tz database\'s names; abbreviations such as CET or PST are not zones), or leave timezone out for UTC.',
      );
    }
    let pattern: Cron;
    try {
      pattern = new Cron(cron.trim(), { timezone: zone, mode: "5-or-6-parts" });
    } catch (error) {
      throw invalid(
        "/cron",
        `${JSON.stringify(cron)} is not a cron expression: ${cronMessage(error)}`,
        'Write five fields (minute hour day-of-month month day-of-week, e.g. "0 2 * * *" for 02:00 every day) or six with seconds first ("*/30 * * * * *" for every 30 seconds); names such as MON or JAN and the nicknames @daily, @hourly and @weekly work too.',
      );
    }
    const schedule = new CronSchedule(cron.trim(), zone, pattern);
    // A pattern can be valid and still name no day that exists (February 30th): it would never fire.
    if (schedule.nextAfter(now) === null) {
      throw invalid(
        "/cron",
        `${JSON.stringify(cron)} names no time that ever comes (such as February 30th)`,
        "Choose days of the month that the chosen months have.",
      );
    }
    return schedule;
  }

  /** Reads a schedule as stored (parsed when it was made), or undefined if this server can no longer read it. */
  static stored(cron: string, timezone: string): CronSchedule | undefined {
    try {
      return new CronSchedule(cron, timezone, new Cron(cron, { timezone, mode: "5-or-6-parts" }));
    } catch {
      return undefined;
    }
  }

  /** The first time strictly after `ms` (milliseconds since the epoch), or null if there is none. */
  nextAfter(ms: number): number | null {
    return this.pattern.nextRun(new Date(ms))?.getTime() ?? null;
  }
}

/** The zone's name as Intl knows it (the IANA tz database Node carries), or undefined for an unknown zone. */
function resolvedTimeZone(name: string): string | undefined {
  if (name.trim() === "") return undefined;
  try {
    return new Intl.DateTimeFormat("en-US", { timeZone: name.trim() }).resolvedOptions().timeZone;
  } catch {
    return undefined;
  }
}

/** croner's message without its class prefix ("CronPattern: Invalid value for minute: 61" → the part after). */
function cronMessage(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.replace(/^Cron\w*:\s*/, "");
}

function invalid(path: string, message: string, fix: string): ApiError {
  return new ApiError("invalid_request", {
    detail: `The request is invalid: body ${path} ${message}.`,
    fix,
    extra: { errors: [{ path, in: "body", message }] },
  });
}
