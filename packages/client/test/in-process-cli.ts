// The `testbay` CLI run in-process against a real test server, as the CLI integration tests all run it: main(argv,
// io) with a CI environment, its output captured, every HTTP answer recorded, and (by default) the server's
// manual clock as the CLI's clock, so a wait or a retry moves time instead of taking it.

import { main } from "../src/cli/main.ts";
import type { Clock } from "../src/sdk/clock.ts";
import type { FetchLike, ResponseEvent } from "../src/sdk/transport.ts";
import { Captured } from "./scripted-server.ts";

export interface Credentials {
  client_id: string;
  client_secret: string;
}

/** What a test file sets up in beforeAll: read when a command runs. */
export interface CliContext {
  server: { baseUrl: string; clock?: { now(): number; advance(ms: number): void } };
  credentials: Credentials;
  /** Relative paths (--file, -f, --junit) resolve from here. */
  cwd: string;
  /** A token shared by the file's commands (TESTBAY_TOKEN), as a pipeline shares one. */
  token?: string;
  /** Runs during each of the CLI's sleeps: lets a test act while the CLI waits. */
  duringSleep?: () => Promise<void> | undefined;
}

export interface CliExtras {
  env?: Record<string, string>;
  credentials?: Credentials;
  fetch?: FetchLike;
}

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
  /** Every HTTP answer the command got, token calls included. */
  responses: ResponseEvent[];
}

/** A test server's manual clock as the SDK sees it: sleeping moves it (then runs `during`, if given). */
export function sleepMovesClock(
  serverClock: { now(): number; advance(ms: number): void },
  during?: () => Promise<void> | undefined,
): Clock {
  return {
    now: () => serverClock.now(),
    sleep: async (ms) => {
      serverClock.advance(ms);
      await during?.();
    },
  };
}

/** `const cli = inProcessCli(() => ({ server, credentials: ci, cwd: dir }))`, then `await cli(["upload", …])`. */
export function inProcessCli(context: () => CliContext) {
  return async (argv: string[], extras: CliExtras = {}): Promise<CliRun> => {
    const current = context();
    const credentials = extras.credentials ?? current.credentials;
    const stdout = new Captured();
    const stderr = new Captured();
    const responses: ResponseEvent[] = [];
    // Real time when the server has no manual clock (a server in its own process).
    const clock = current.server.clock && sleepMovesClock(current.server.clock, current.duringSleep);
    const code = await main(argv, {
      env: {
        TESTBAY_URL: current.server.baseUrl,
        TESTBAY_CLIENT_ID: credentials.client_id,
        TESTBAY_CLIENT_SECRET: credentials.client_secret,
        ...(current.token ? { TESTBAY_TOKEN: current.token } : {}),
        CI: "true",
        ...extras.env,
      },
      stdout,
      stderr,
      cwd: current.cwd,
      ...(clock ? { clock } : {}),
      onResponse: (event) => responses.push(event),
      ...(extras.fetch ? { fetch: extras.fetch } : {}),
    });
    return { code, stdout: stdout.text, stderr: stderr.text, responses };
  };
}

/** How many of a run's answers were to `method` on `pathname` (a path below /v1, or a pattern). */
export function countCalls(run: CliRun, method: string, pathname: string | RegExp): number {
  return run.responses.filter(
    (r) =>
      r.method === method && (typeof pathname === "string" ? r.path === pathname : pathname.test(r.path)),
  ).length;
}
