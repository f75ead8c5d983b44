import path from "node:path";
import { Testbay } from "../sdk/client.ts";
import { type Clock, type Random, systemClock } from "../sdk/clock.ts";
import type { RetryEvent } from "../sdk/retry-policy.ts";
import type { FetchLike, ResponseEvent } from "../sdk/transport.ts";
import { resolveConfig } from "./config.ts";
import type { ExitCode } from "./exit-codes.ts";
import type { GlobalOptions } from "./global-options.ts";
import { OutageNotice, retryLine } from "./outage.ts";
import type { FixContext, Writer } from "./output.ts";

/** Everything the CLI touches outside itself: injected, so tests run it in-process and fast. */
export interface CliIo {
  env: Record<string, string | undefined>;
  stdout: Writer;
  stderr: Writer & { isTTY?: boolean };
  /** Relative --file and --junit paths are resolved from here. */
  cwd?: string;
  fetch?: FetchLike;
  clock?: Clock;
  random?: Random;
  /** Seen after every HTTP answer (tests count 429s and calls with it). */
  onResponse?: (event: ResponseEvent) => void;
  /** Subscribes to Ctrl-C (SIGINT) while waiting; returns the unsubscribe. */
  onInterrupt?: (handler: () => void) => () => void;
}

/** What a command ends with: an exit code, and for --json the document to print. */
export interface Outcome {
  code: ExitCode;
  json?: unknown;
}

/** One command's run: its output, its SDK client and how it ends (main.ts prints the outcome). */
export class Session {
  private client: Testbay | undefined;
  readonly clock: Clock;
  /** What the command is about, so that fix texts name the real app and version. */
  context: FixContext = {};
  /** Set by the command's action; none means the command did not run. */
  outcome: Outcome | undefined;

  constructor(
    readonly io: CliIo,
    private readonly globals: () => GlobalOptions,
  ) {
    this.clock = io.clock ?? systemClock;
  }

  get json(): boolean {
    return this.globals().json === true;
  }

  /** A line for people, on stderr. */
  say(text: string): void {
    this.io.stderr.write(text.endsWith("\n") ? text : `${text}\n`);
  }

  /** The command's output proper, on stdout. */
  print(text: string): void {
    this.io.stdout.write(text);
  }

  setOutcome(outcome: Outcome): void {
    this.outcome = outcome;
  }

  /** One SDK client for the whole command: one token, one pacing bucket. */
  testbay(needs: { auth: boolean } = { auth: true }): Testbay {
    if (this.client) return this.client;
    const config = resolveConfig(this.globals(), this.io.env, needs);
    // A URL without /v1 is said to be one when the server answers its 404 (output.ts wrongBaseUrl).
    this.context = { ...this.context, baseUrl: config.baseUrl };
    this.client = new Testbay({
      baseUrl: config.baseUrl,
      clientId: config.clientId,
      clientSecret: config.clientSecret,
      audience: config.audience,
      token: config.token,
      fetch: this.io.fetch,
      clock: this.clock,
      random: this.io.random,
      onResponse: (event: ResponseEvent) => {
        this.outage.answered(event.status);
        this.io.onResponse?.(event);
      },
      onRetry: (event: RetryEvent) => {
        if (!this.outage.retry(event)) this.say(retryLine(event));
      },
    });
    return this.client;
  }

  /** A wait's one line when the server stops answering, and one when it answers again (rule 13). */
  private readonly outage = new OutageNotice(
    { now: () => this.clock.now(), sleep: (ms) => this.clock.sleep(ms) },
    (line) => this.say(line),
  );

  resolvePath(file: string): string {
    return path.resolve(this.io.cwd ?? process.cwd(), file);
  }
}
