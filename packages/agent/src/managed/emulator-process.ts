/**
 * One emulator instance as a child process of the agent: started headless with the documented options
 * (API.md §13: `emulator -avd AVD -port P -no-window -no-audio -no-boot-anim`, `-read-only` beside other
 * instances of its AVD, `-snapshot NAME` to start from the clean snapshot, `-wipe-data` for a cold boot), its
 * last lines of output kept for a failure's `error`, and stopped with SIGTERM (SIGKILL if it will not go).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { LastLines } from "./last-lines.ts";

export interface EmulatorLaunchOptions {
  avd: string;
  port: number;
  /** Beside other instances of the AVD: the real emulator refuses a second writable one. */
  readOnly: boolean;
  /** Start from this named snapshot. */
  snapshot?: string;
  /** Start with the AVD's user data erased (a cold boot): the last resort when nothing else boots clean. */
  wipeData?: boolean;
}

/** The emulator's command line for one instance. -no-snapshot-save: nothing an instance did outlives it. */
export function emulatorArgs(launch: EmulatorLaunchOptions): string[] {
  return [
    "-avd",
    launch.avd,
    "-port",
    String(launch.port),
    "-no-window",
    "-no-audio",
    "-no-boot-anim",
    ...(launch.readOnly ? ["-read-only"] : []),
    ...(launch.snapshot && !launch.wipeData ? ["-snapshot", launch.snapshot] : []),
    ...(launch.wipeData ? ["-wipe-data"] : []),
    "-no-snapshot-save",
  ];
}

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** How long an instance may take to go after SIGTERM before it is killed outright. */
const STOP_GRACE_MS = 10_000;

export class EmulatorProcess {
  readonly serial: string;
  readonly output = new LastLines();
  readonly exited: Promise<Exit>;
  private readonly child: ChildProcess;
  private exit: Exit | null = null;

  constructor(
    readonly launch: EmulatorLaunchOptions,
    env: NodeJS.ProcessEnv,
  ) {
    this.serial = `emulator-${launch.port}`;
    this.child = spawn("emulator", emulatorArgs(launch), { env, stdio: ["ignore", "pipe", "pipe"] });
    this.child.stdout?.on("data", (chunk: Buffer) => this.output.write(chunk));
    this.child.stderr?.on("data", (chunk: Buffer) => this.output.write(chunk));
    this.exited = new Promise((resolve) => {
      this.child.on("error", (error) => {
        this.output.write(`${error.message}\n`);
        this.exit = { code: null, signal: null };
        resolve(this.exit);
      });
      this.child.on("exit", (code, signal) => {
        this.exit = { code, signal };
        resolve(this.exit);
      });
    });
  }

  get running(): boolean {
    return this.exit === null;
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** Stops the instance (SIGTERM, then SIGKILL after a grace) and resolves once it is gone. */
  async stop(): Promise<Exit> {
    if (this.exit) return this.exit;
    this.child.kill("SIGTERM");
    const timer = setTimeout(() => this.child.kill("SIGKILL"), STOP_GRACE_MS);
    try {
      return await this.exited;
    } finally {
      clearTimeout(timer);
    }
  }
}
