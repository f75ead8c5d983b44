/**
 * One Appium server, started for one session and stopped when it ends (API.md §12 "The agent side"). It runs as
 * a child process in its own process group on a loopback port, with `--base-path /` (Appium 3's default, stated so
 * that the relay's paths never depend on it) and `--log <file>`, the session's Appium log that is uploaded as the
 * artifact `appium.log`. Everything Appium logs goes to that file (`--log-level error:debug`: console `error`, file
 * `debug`); its console says errors only, because the agent must read Appium's stdout, and a driver's debug lines
 * for every command would wake the agent while it relays the answer (docs/appium-relay.md "Speed"). `--relaxed-security` is never passed: the session's client is someone else's test suite,
 * and insecure features (adb shell, arbitrary file access on the host) are not Testbay's to grant.
 *
 * Stopping signals the whole group (Appium's drivers start helpers: adb forwards, chromedriver, WebDriverAgent
 * proxies), SIGTERM first and SIGKILL after a grace, like packages/agent/src/steps/process-runner.ts does for steps.
 * Servers still running when the agent's process exits are killed by an exit hook, and Appium runs under a
 * watchdog (appium-watchdog.ts) that stops the group when the agent dies without running any code, so none
 * outlives it.
 */
import { type ChildProcessByStdio, spawn } from "node:child_process";
import { readFile } from "node:fs/promises";
import { request } from "node:http";
import type { Readable, Writable } from "node:stream";
import { setTimeout as delay } from "node:timers/promises";
import { LineSplitter } from "../steps/line-splitter.ts";
import { which } from "../steps/which.ts";
import { appiumWatchdogSource } from "./appium-watchdog.ts";

export interface AppiumServerSpec {
  /** The `appium` executable (`--appium PATH`); null or absent: `appium` on PATH. */
  executable?: string | null;
  port: number;
  /** Appium's log file (`--log`): the session's `appium.log`. */
  logFile: string;
  /** The environment Appium runs with; its APPIUM_HOME says which drivers it has. */
  env?: NodeJS.ProcessEnv;
  /** How long Appium may take to answer `GET /status` ready (default 60 s: drivers load at start). */
  startTimeoutMs?: number;
  /** Between SIGTERM and SIGKILL when stopping (default 5 s). */
  stopGraceMs?: number;
}

export interface AppiumExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

const DEFAULT_START_TIMEOUT_MS = 60_000;
const DEFAULT_STOP_GRACE_MS = 5_000;
/** Between two `GET /status` while Appium starts: it takes a second or more, so a tenth is fine-grained enough. */
const STATUS_POLL_INTERVAL_MS = 100;
/** Lines of Appium's own output kept to explain a start that failed. */
const KEPT_OUTPUT_LINES = 20;

const running = new Set<AppiumServer>();
let exitHookInstalled = false;

/** On the agent's exit, whatever the reason: kill what is left. Only synchronous calls work in an exit hook. */
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once("exit", () => {
    for (const server of running) signalGroup(server.pid, "SIGKILL");
  });
}

function signalGroup(pid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pid, signal);
    return true;
  } catch {
    return false; // ESRCH: the group is gone already.
  }
}

export class AppiumStartError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "AppiumStartError";
  }
}

export class AppiumServer {
  /** Resolves when Appium's process has exited, for whatever reason. */
  readonly exited: Promise<AppiumExit>;
  private exit: AppiumExit | null = null;
  private stopping: Promise<AppiumExit> | null = null;

  constructor(
    private readonly child: ChildProcessByStdio<Writable, Readable, Readable>,
    readonly pid: number,
    readonly port: number,
    readonly logFile: string,
    private readonly stopGraceMs: number,
  ) {
    this.exited = new Promise((resolve) => {
      child.once("exit", (code, signal) => {
        this.exit = { code, signal };
        running.delete(this);
        resolve(this.exit);
      });
    });
    running.add(this);
    installExitHook();
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  get hasExited(): boolean {
    return this.exit !== null;
  }

  /** SIGTERM to the group, SIGKILL after the grace; resolves once Appium has exited and its group is killed. */
  stop(): Promise<AppiumExit> {
    this.stopping ??= (async () => {
      if (!this.exit) {
        signalGroup(this.pid, "SIGTERM");
        const grace = delay(this.stopGraceMs, "grace", { ref: false });
        if ((await Promise.race([this.exited, grace])) === "grace") signalGroup(this.pid, "SIGKILL");
      }
      const exit = await this.exited;
      // Helpers a driver started in the group must not outlive Appium even when it exited on its own.
      signalGroup(this.pid, "SIGKILL");
      this.child.stdin.destroy();
      this.child.stdout.destroy();
      this.child.stderr.destroy();
      return exit;
    })();
    return this.stopping;
  }
}

/** The command line that starts Appium for one session. */
export function appiumServerArgs(port: number, logFile: string): string[] {
  return [
    "--address",
    "127.0.0.1",
    "--port",
    String(port),
    "--base-path",
    "/",
    "--log",
    logFile,
    "--log-no-colors",
    "--log-timestamp",
    "--log-level",
    "error:debug",
  ];
}

/** The executable to run: the given path, else `appium` on PATH; throws AppiumStartError when there is none. */
export async function resolveAppiumExecutable(
  executable: string | null | undefined,
  pathEnv: string,
): Promise<string> {
  const found = await which(executable ?? "appium", pathEnv);
  if (!found) {
    throw new AppiumStartError(
      executable
        ? `${executable} is not an executable file (--appium PATH)`
        : "appium is not on PATH: install it (npm install -g appium) or pass its path: --appium PATH",
    );
  }
  return found;
}

/** Whether `GET /status` answers `{value: {ready: true}}` now. */
function statusReady(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const req = request(
      { host: "127.0.0.1", port, path: "/status", method: "GET", timeout: 2_000 },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => {
          text += chunk;
        });
        res.on("end", () => {
          try {
            resolve(res.statusCode === 200 && JSON.parse(text)?.value?.ready === true);
          } catch {
            resolve(false);
          }
        });
        res.on("error", () => resolve(false));
      },
    );
    req.on("timeout", () => req.destroy());
    req.on("error", () => resolve(false));
    req.end();
  });
}

/**
 * Starts Appium and resolves once it answers ready. Fails (and leaves nothing running) when it exits first or
 * is not ready within the start timeout; the message carries the end of its output (a port in use, a driver
 * that does not load).
 */
export async function startAppiumServer(spec: AppiumServerSpec): Promise<AppiumServer> {
  const env = spec.env ?? process.env;
  const executable = await resolveAppiumExecutable(spec.executable, env.PATH ?? "");
  const stopGraceMs = spec.stopGraceMs ?? DEFAULT_STOP_GRACE_MS;
  let child: ChildProcessByStdio<Writable, Readable, Readable>;
  try {
    child = spawn(
      process.execPath,
      [
        "-e",
        appiumWatchdogSource,
        String(stopGraceMs),
        executable,
        ...appiumServerArgs(spec.port, spec.logFile),
      ],
      {
        env,
        // Its own process group, so that stopping reaches everything its drivers start.
        detached: true,
        // stdin: the watchdog's lifeline to the agent, never written to; closed by the kernel when the agent dies.
        stdio: ["pipe", "pipe", "pipe"],
      },
    );
  } catch (error) {
    throw new AppiumStartError(`could not start ${executable}: ${(error as Error).message}`);
  }
  const spawned = await new Promise<Error | null>((resolve) => {
    child.once("spawn", () => resolve(null));
    child.once("error", (error) => resolve(error));
  });
  if (spawned || child.pid === undefined) {
    throw new AppiumStartError(`could not start ${executable}: ${spawned?.message ?? "no process"}`);
  }
  // Appium's console (its errors only: appiumServerArgs) must still be read, or Appium blocks on a full pipe.
  const output: string[] = [];
  const keep = new LineSplitter((line) => {
    output.push(line);
    if (output.length > KEPT_OUTPUT_LINES) output.shift();
  });
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => keep.push(chunk));
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => keep.push(chunk));
  // Writing to the lifeline never happens; an error on it (the watchdog gone) must not take the agent down.
  child.stdin.on("error", () => {});
  const server = new AppiumServer(child, child.pid, spec.port, spec.logFile, stopGraceMs);

  const timeoutMs = spec.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS;
  const timedOut = delay(timeoutMs, "timeout" as const, { ref: false });
  const exited = server.exited.then(() => "exited" as const);
  // Its log's line "… listener started on http://127.0.0.1:<port>" says that this Appium, and not another program
  // on the same port, is the one listening: a `GET /status` alone would be answered by whichever listens there.
  const listening = logSays(spec.logFile, `listener started on http://127.0.0.1:${spec.port}`, server);
  let state = await Promise.race([listening, exited, timedOut]);
  // Listening; ready once its drivers are loaded, which `GET /status` says.
  while (state === "listening") {
    if (await statusReady(spec.port)) {
      if (!server.hasExited) return server;
      break;
    }
    state = await Promise.race([delay(STATUS_POLL_INTERVAL_MS, "listening" as const), exited, timedOut]);
  }
  const why = server.hasExited
    ? `Appium exited before it was ready (${describeExit(await server.exited)})`
    : `Appium was not ready within ${Math.round(timeoutMs / 1000)} s`;
  await server.stop();
  // Its last words without the stack frames, which say where in Appium and not what went wrong.
  const tail = output
    .filter((line) => !/^\s+at /.test(line))
    .slice(-3)
    .join(" | ");
  throw new AppiumStartError(tail ? `${why}: ${tail}` : why);
}

/** Resolves "listening" once Appium's log file holds `text`; looks every STATUS_POLL_INTERVAL_MS until it exits. */
async function logSays(logFile: string, text: string, server: AppiumServer): Promise<"listening" | "exited"> {
  while (!server.hasExited) {
    const log = await readFile(logFile, "utf8").catch(() => "");
    if (log.includes(text)) return "listening";
    await delay(STATUS_POLL_INTERVAL_MS, undefined, { ref: false });
  }
  return "exited";
}

function describeExit(exit: AppiumExit): string {
  return exit.signal ? `signal ${exit.signal}` : `exit code ${exit.code}`;
}

/** Stops every Appium server this process started (agent shutdown). */
export async function stopAllAppiumServers(): Promise<void> {
  await Promise.all([...running].map((server) => server.stop()));
}
