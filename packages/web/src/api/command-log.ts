/**
 * A session's `commands.jsonl` (API.md §12; written by packages/agent/src/appium/command-log.ts): one JSON line per
 * relayed WebDriver command, `{at, method, path, status, ms}`, in the order they were answered. Bodies are never
 * kept, so a command is known by its method and path only.
 */
import { queryOptions } from "@tanstack/react-query";
import { ApiProblem } from "./problem.ts";
import type { Problem } from "./types.ts";

export interface SessionCommand {
  /** Its place in the log, from 0. */
  index: number;
  /** When it reached the agent, in ms since the epoch (the device host's clock). */
  at: number;
  method: string;
  /** Below `/session/{id}`, `""` for the session itself (DELETE). */
  path: string;
  /** Appium's HTTP status. */
  status: number;
  /** How long Appium took to answer. */
  ms: number;
}

export interface CommandLog {
  commands: SessionCommand[];
  /** Lines that are not a command (a log cut short by a full disk ends in half a line). */
  unreadable: number;
}

/** A WebDriver error is an HTTP status of 400 or more (W3C WebDriver, "Errors"). */
export const commandFailed = (command: Pick<SessionCommand, "status">) => command.status >= 400;

export function parseCommandLog(text: string): CommandLog {
  const commands: SessionCommand[] = [];
  let unreadable = 0;
  for (const line of text.split("\n")) {
    if (!line.trim()) continue;
    const command = readLine(line, commands.length);
    if (command) commands.push(command);
    else unreadable++;
  }
  return { commands, unreadable };
}

function readLine(line: string, index: number): SessionCommand | undefined {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (typeof value !== "object" || value === null) return undefined;
  const { at, method, path, status, ms } = value as Record<string, unknown>;
  const when = typeof at === "string" ? Date.parse(at) : Number.NaN;
  if (Number.isNaN(when) || typeof method !== "string" || typeof path !== "string") return undefined;
  if (typeof status !== "number" || typeof ms !== "number") return undefined;
  return { index, at: when, method, path, status, ms };
}

/**
 * A session's command log (the artifact `commands.jsonl`, API.md §12), read whole and parsed: about 90 bytes a
 * command, so even a session of 10,000 commands is under a megabyte. The agent uploads it once, when the session
 * ends, and it never changes after: read once.
 */
export const commandLogQuery = (url: string) =>
  queryOptions({
    queryKey: ["artifact-commands", url],
    queryFn: async (): Promise<CommandLog> => {
      const response = await fetch(url, { credentials: "same-origin" });
      if (!response.ok) {
        const problem = (await response.json().catch(() => ({}))) as Partial<Problem>;
        throw new ApiProblem(response.status, problem);
      }
      return parseCommandLog(await response.text());
    },
    staleTime: Number.POSITIVE_INFINITY,
  });
