/**
 * How the session page says a command: its time after the session's start, its W3C name, its path. The log itself
 * is read by api/command-log.ts.
 */
import type { SessionCommand } from "../../api/command-log.ts";

/** "+0:04.210", "+12:03.005", "+1:02:03.400": how long after the session's start; never negative. */
export function formatOffset(ms: number): string {
  const whole = Math.max(0, Math.round(ms));
  const hours = Math.floor(whole / 3_600_000);
  const minutes = Math.floor((whole % 3_600_000) / 60_000);
  const seconds = Math.floor((whole % 60_000) / 1000);
  const millis = whole % 1000;
  const two = (n: number) => String(n).padStart(2, "0");
  const clock = `${two(seconds)}.${String(millis).padStart(3, "0")}`;
  return hours > 0 ? `+${hours}:${two(minutes)}:${clock}` : `+${minutes}:${clock}`;
}

// The W3C WebDriver commands people meet most, by method and path pattern (":id" is an element or shadow root
// ID), named as the specification names them; Appium's own commands keep their path.
const commandNames: Array<[method: string, pattern: RegExp, name: string]> = [
  ["DELETE", /^$/, "Delete session"],
  ["GET", /^\/source$/, "Get page source"],
  ["GET", /^\/screenshot$/, "Take screenshot"],
  ["POST", /^\/element$/, "Find element"],
  ["POST", /^\/elements$/, "Find elements"],
  ["POST", /^\/element\/[^/]+\/element$/, "Find element from element"],
  ["POST", /^\/element\/[^/]+\/elements$/, "Find elements from element"],
  ["GET", /^\/element\/active$/, "Get active element"],
  ["POST", /^\/element\/[^/]+\/click$/, "Element click"],
  ["POST", /^\/element\/[^/]+\/clear$/, "Element clear"],
  ["POST", /^\/element\/[^/]+\/value$/, "Element send keys"],
  ["GET", /^\/element\/[^/]+\/text$/, "Get element text"],
  ["GET", /^\/element\/[^/]+\/attribute\/[^/]+$/, "Get element attribute"],
  ["GET", /^\/element\/[^/]+\/property\/[^/]+$/, "Get element property"],
  ["GET", /^\/element\/[^/]+\/displayed$/, "Is element displayed"],
  ["GET", /^\/element\/[^/]+\/enabled$/, "Is element enabled"],
  ["GET", /^\/element\/[^/]+\/selected$/, "Is element selected"],
  ["GET", /^\/element\/[^/]+\/rect$/, "Get element rect"],
  ["GET", /^\/element\/[^/]+\/screenshot$/, "Take element screenshot"],
  ["POST", /^\/actions$/, "Perform actions"],
  ["DELETE", /^\/actions$/, "Release actions"],
  ["POST", /^\/execute\/sync$/, "Execute script"],
  ["POST", /^\/execute\/async$/, "Execute async script"],
  ["POST", /^\/timeouts$/, "Set timeouts"],
  ["GET", /^\/timeouts$/, "Get timeouts"],
  ["POST", /^\/url$/, "Navigate to"],
  ["GET", /^\/url$/, "Get current URL"],
  ["POST", /^\/back$/, "Back"],
  ["GET", /^\/window\/rect$/, "Get window rect"],
  ["GET", /^\/orientation$/, "Get orientation"],
  ["POST", /^\/orientation$/, "Set orientation"],
  ["GET", /^\/contexts$/, "Get contexts"],
  ["POST", /^\/context$/, "Set context"],
  ["POST", /^\/appium\/device\/activate_app$/, "Activate app"],
  ["POST", /^\/appium\/device\/terminate_app$/, "Terminate app"],
  ["POST", /^\/appium\/device\/hide_keyboard$/, "Hide keyboard"],
];

/** What the command is, in words ("Element click"), or undefined for one this list does not name. */
export function commandName(command: Pick<SessionCommand, "method" | "path">): string | undefined {
  return commandNames.find(
    ([method, pattern]) => method === command.method && pattern.test(command.path),
  )?.[2];
}

/** The path as a client wrote it, below the session: "/session/{id}/element" shows as "/element". */
export const displayPath = (path: string) => path || "/";
