import { mkdir } from "node:fs/promises";
import { homedir, hostname, tmpdir } from "node:os";
import path from "node:path";
import { resolveConfig, Testbay, TestbayApiError, UsageError } from "@testbay/client";
import { Command, CommanderError, InvalidArgumentError } from "commander";
import { findOrchestratorApks } from "../android/android-tools.ts";
import { type AppiumCliFlags, appiumSettings, describeAppiumSettings } from "../appium/appium-cli-options.ts";
import { type AppiumOffer, prepareAppiumOffer } from "../appium/appium-offer.ts";
import { parsePortRange } from "../appium/port-blocks.ts";
import {
  type EmulatorRequest,
  mergeEmulatorRequests,
  parseEmulatorOption,
  parseLabelOption,
} from "../managed/emulator-option.ts";
import type { ManagedDevicePool } from "../managed/managed-device-pool.ts";
import { ManagedEmulators } from "../managed/managed-emulators.ts";
import { ManagedSimulators, parseSimulatorSpec, type SimulatorSpec } from "../managed/simulators/index.ts";
import { Agent } from "../runtime/agent.ts";
import { withoutAgentSecrets } from "../steps/shell-step.ts";
import { agentClientAdvice, credentialsRefused, refusedAtStart } from "./start-refusal.ts";
import { agentVersion } from "./version.ts";

export interface AgentCliIo {
  env: Record<string, string | undefined>;
  /** Only `--version` writes here; everything else the agent says goes to stderr. */
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
  /** Resolves when the process is asked to stop (SIGTERM/SIGINT); a second call means "now". */
  onStopSignal(handler: (urgent: boolean) => void): void;
}

function whole(min: number, max: number) {
  return (value: string) => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < min || n > max) {
      throw new InvalidArgumentError(`expected a whole number from ${min} to ${max}`);
    }
    return n;
  };
}

function concurrencyOption(value: string): number | "devices" {
  return value === "devices" ? value : whole(1, 64)(value);
}

function portRangeOption(value: string) {
  try {
    return parsePortRange(value);
  } catch (error) {
    throw new InvalidArgumentError((error as Error).message);
  }
}

function emulatorOption(value: string, previous: EmulatorRequest[] = []): EmulatorRequest[] {
  try {
    return [...previous, parseEmulatorOption(value)];
  } catch (error) {
    throw new InvalidArgumentError((error as Error).message);
  }
}

function simulatorOption(value: string, previous: SimulatorSpec[] = []): SimulatorSpec[] {
  try {
    return [...previous, parseSimulatorSpec(value)];
  } catch (error) {
    throw new InvalidArgumentError((error as Error).message);
  }
}

function labelOption(value: string, previous: Record<string, string> = {}): Record<string, string> {
  try {
    const [key, label] = parseLabelOption(value);
    return { ...previous, [key]: label };
  } catch (error) {
    throw new InvalidArgumentError((error as Error).message);
  }
}

function devicesMode(value: string): "auto" | "none" {
  if (value !== "auto" && value !== "none") throw new InvalidArgumentError("expected auto or none");
  return value;
}

/**
 * `testbay-agent`: connects with the same TESTBAY_* settings as the testbay CLI (an agent client's
 * credentials; never TESTBAY_TOKEN), then claims and runs jobs until SIGTERM. Exit codes: 0 after a clean
 * stop (and for --help and --version); 2 for a usage or configuration mistake: missing credentials, credentials
 * the server refuses (a wrong ID, secret or audience, a disabled client) or those of a client that is not an
 * agent, at start or later (a claim refused with 403, a rotated secret); 1 when it could not start for another
 * reason (the server unreachable, an answer it could not read), which a restart may cure.
 */
export async function main(argv: readonly string[], io: AgentCliIo): Promise<number> {
  const say = (text: string) => io.stderr.write(`${new Date().toISOString()} ${text}\n`);
  const program = new Command("testbay-agent")
    .description("Pulls Testbay jobs and runs their test plans on this host and its devices.")
    .option(
      "--name <name>",
      "agent name shown on runs",
      hostname().replace(/[^A-Za-z0-9._@-]/g, "-") || "agent",
    )
    .option("--allow-shell", "run shell steps (they execute arbitrary commands on this host)", false)
    .option(
      "--android-tools <dir>",
      "a directory with the AndroidX Test Orchestrator APKs (orchestrator-*.apk from androidx.test:orchestrator, test-services-*.apk from androidx.test.services:test-services), for instrumentation steps with use_orchestrator",
    )
    .option(
      "--devices <mode>",
      "auto: use Android devices found with adb and iOS simulators and devices found with xcrun; none: device-less plans only",
      devicesMode,
      "auto",
    )
    .option(
      "--concurrency <n>",
      "jobs at once: a number, or devices (one per device found, more as devices are plugged in)",
      concurrencyOption,
      "devices",
    )
    .option(
      "--work-dir <dir>",
      "where jobs run (a fresh directory each)",
      path.join(tmpdir(), "testbay-agent"),
    )
    .option(
      "--cache-dir <dir>",
      "where binaries are kept by SHA-256",
      path.join(homedir(), ".cache", "testbay-agent"),
    )
    .option(
      "--shutdown-grace <seconds>",
      "on SIGTERM, how long running jobs may finish before they are handed back",
      whole(0, 3600),
      30,
    )
    .option(
      "--appium [path]",
      "offer Appium sessions on this host's devices (WebDriver, API.md §12), with the appium executable at path, else appium on PATH; its drivers are those of APPIUM_HOME",
    )
    .option(
      "--appium-allow-local-apps",
      "let a session's appium:app name a file on this host (a host owned by one team)",
      false,
    )
    .option(
      "--appium-allow-private-app-urls",
      "let a session's appium:app URL point at loopback, private or link-local addresses",
      false,
    )
    .option(
      "--appium-ports <from-to>",
      "loopback ports for Appium servers and their drivers, 4 per session (default 4723-4822)",
      portRangeOption,
    )
    .option(
      "--emulator <AVD[=N]>",
      "start N (default 1) headless instances of this Android Virtual Device, reset after every run and restarted when they fail (repeatable; API.md §13)",
      emulatorOption,
    )
    .option(
      "--emulator-boot-timeout <seconds>",
      "how long a managed emulator may take to boot (sys.boot_completed) before it is restarted",
      whole(1, 3600),
      300,
    )
    .option(
      "--simulator <DEVICE_TYPE@OS[=N]>",
      'macOS: keep N (default 1) simulators of this device type and iOS version ("iPhone 15@17.4=2"), created if missing, erased and booted again after every run, restarted when they fail (repeatable; API.md §13)',
      simulatorOption,
    )
    .option(
      "--label <KEY=VALUE>",
      "a label every device of this agent carries, for plans' labels (repeatable)",
      labelOption,
    )
    .option("--url <url>", "API base URL (TESTBAY_URL)")
    .option("--client-id <id>", "agent client ID (TESTBAY_CLIENT_ID)")
    .option("--client-secret <secret>", "agent client secret (TESTBAY_CLIENT_SECRET)")
    .option("--audience <audience>", "token audience (TESTBAY_AUDIENCE)")
    .option("-V, --version", "print the agent's version and exit")
    .exitOverride()
    .configureOutput({
      writeErr: (text) => io.stderr.write(text),
      writeOut: (text) => io.stderr.write(text),
    });
  try {
    program.parse([...argv], { from: "user" });
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode === 0 ? 0 : 2;
    throw error;
  }
  const flags = program.opts<
    AppiumCliFlags & {
      version?: boolean;
      name: string;
      allowShell: boolean;
      androidTools?: string;
      devices: "auto" | "none";
      concurrency: number | "devices";
      workDir: string;
      cacheDir: string;
      shutdownGrace: number;
      emulator?: EmulatorRequest[];
      emulatorBootTimeout: number;
      simulator?: SimulatorSpec[];
      label?: Record<string, string>;
      url?: string;
      clientId?: string;
      clientSecret?: string;
      audience?: string;
    }
  >();
  // On stdout, unlike the rest, so that `$(testbay-agent --version)` holds only the version.
  if (flags.version) {
    io.stdout.write(`${agentVersion()}\n`);
    return 0;
  }
  let appium: ReturnType<typeof appiumSettings>;
  try {
    appium = appiumSettings(flags);
  } catch (error) {
    say((error as Error).message);
    return 2;
  }
  if (!/^[A-Za-z0-9._@-]{1,100}$/.test(flags.name)) {
    say(`--name "${flags.name}": use 1–100 letters, digits, '.', '_', '@' or '-'.`);
    return 2;
  }
  if (flags.androidTools !== undefined) {
    // Asked for by the operator: a directory without the APKs is a mistake to say now, not at a plan's first run.
    const tools = await findOrchestratorApks(path.resolve(flags.androidTools));
    if ("missing" in tools) {
      say(tools.missing);
      return 2;
    }
    say(`android tools: ${path.basename(tools.orchestrator)}, ${path.basename(tools.testServices)}`);
  }
  // A token exported for the pipeline steps of this shell (TESTBAY_TOKEN) belongs to a ci client and expires
  // within the hour; an agent runs for days on its own credentials, so such a token is never used.
  const env = { ...io.env, TESTBAY_TOKEN: undefined };
  let config: ReturnType<typeof resolveConfig>;
  try {
    config = resolveConfig(flags, env, { auth: false });
  } catch (error) {
    if (error instanceof UsageError) {
      say(error.message);
      return 2;
    }
    throw error;
  }
  const exportedToken = Boolean(io.env.TESTBAY_TOKEN?.trim());
  if (!config.clientId || !config.clientSecret) {
    const missing = !config.clientId ? "TESTBAY_CLIENT_ID" : "TESTBAY_CLIENT_SECRET";
    say(
      `No agent credentials: ${missing} is not set (or pass --client-id and --client-secret).${
        exportedToken ? " TESTBAY_TOKEN is set, but the agent does not use tokens from `testbay token`." : ""
      } ${agentClientAdvice(undefined)}`,
    );
    return 2;
  }
  if (exportedToken)
    say("note: TESTBAY_TOKEN is set and ignored; the agent uses TESTBAY_CLIENT_ID and its secret.");
  const client = new Testbay({
    baseUrl: config.baseUrl,
    clientId: config.clientId,
    clientSecret: config.clientSecret,
    audience: config.audience,
    userAgent: `testbay-agent/${agentVersion()} node/${process.versions.node}`,
  });
  // Relative to where the agent was started, once: a shell step runs in its own job directory and must
  // still find TESTBAY_ARTIFACTS_DIR and the rest there.
  const workDir = path.resolve(flags.workDir);
  const cacheDir = path.resolve(flags.cacheDir);
  let org: string;
  try {
    const me = await client.me();
    org = me.organization.name;
    if (me.role !== "agent") {
      say(
        `cannot start: client ${me.client_id} has role ${me.role}; claiming jobs needs role agent. ${agentClientAdvice(org)}`,
      );
      return 2;
    }
  } catch (error) {
    // Refused credentials are a configuration error (exit 2, which the systemd unit in docs/devices-and-agents.md
    // does not restart); an unreachable server or any other failure may pass, so it stays exit 1 and is restarted.
    if (credentialsRefused(error)) {
      say(refusedAtStart(error, config.clientId));
      return 2;
    }
    say(`cannot start: ${(error as Error).message}`);
    return 1;
  }
  // What --appium offers, found out before any claim: an appium that cannot be run is the operator's mistake
  // (exit 2), said now rather than at the first session.
  let appiumOffer: AppiumOffer | undefined;
  if (appium) {
    say(describeAppiumSettings(appium));
    try {
      // Appium and its drivers run the sessions' capabilities: they never see the agent's credentials.
      appiumOffer = await prepareAppiumOffer(appium, withoutAgentSecrets(env));
    } catch (error) {
      say(`cannot offer Appium sessions: ${(error as Error).message}`);
      return 2;
    }
    for (const warning of appiumOffer.warnings) say(`warning: ${warning}`);
    const drivers = appiumOffer.inventory.drivers.map((d) => d.name).join(", ") || "no drivers";
    say(`appium ${appiumOffer.inventory.version}: ${drivers}`);
  }
  await mkdir(workDir, { recursive: true });
  let refused: ((error: TestbayApiError) => void) | undefined;
  const forbidden = new Promise<TestbayApiError>((resolve) => {
    refused = resolve;
  });
  let managedRefused: ((error: Error) => void) | undefined;
  const cannotManage = new Promise<Error>((resolve) => {
    managedRefused = resolve;
  });
  const emulators = flags.emulator ? mergeEmulatorRequests(flags.emulator) : [];
  const managed: ManagedDevicePool[] =
    emulators.length > 0
      ? [
          new ManagedEmulators({
            requests: emulators,
            env,
            log: say,
            bootTimeoutMs: flags.emulatorBootTimeout * 1000,
          }),
        ]
      : [];
  if (emulators.length > 0) {
    say(`managed emulators: ${emulators.map((e) => `${e.avd} × ${e.instances}`).join(", ")}`);
  }
  if (flags.simulator) {
    managed.push(new ManagedSimulators({ specs: flags.simulator, workDir, env, log: say }));
    say(
      `managed simulators: ${flags.simulator.map((s) => `${s.deviceType}@${s.os} × ${s.count}`).join(", ")}`,
    );
  }
  const agent = new Agent({
    client,
    name: flags.name,
    allowShell: flags.allowShell,
    androidTools: flags.androidTools ? path.resolve(flags.androidTools) : null,
    devices: flags.devices,
    concurrency: flags.concurrency,
    workRoot: workDir,
    cacheDir,
    log: say,
    onForbidden: (error) => refused?.(error),
    ...(appiumOffer ? { appium: appiumOffer } : {}),
    ...(managed.length > 0 ? { managed, onManagedRefused: (error: Error) => managedRefused?.(error) } : {}),
    ...(flags.label ? { labels: flags.label } : {}),
  });
  await agent.start();
  const stopped = new Promise<"signal">((resolve) => {
    io.onStopSignal((urgent) => {
      say(
        urgent
          ? "stopping now: handing running jobs back"
          : `stopping: running jobs have ${flags.shutdownGrace} s to finish`,
      );
      agent.stop(urgent ? 0 : flags.shutdownGrace * 1000).then(
        () => resolve("signal"),
        () => resolve("signal"),
      );
    });
  });
  const why = await Promise.race([stopped, forbidden, cannotManage]);
  if (why instanceof Error && !(why instanceof TestbayApiError)) {
    // An unknown AVD or no emulator on PATH: nothing a restart mends (exit 2, as for other configuration mistakes).
    await agent.stop(0);
    say(`stopped: ${why.message}`);
    return 2;
  }
  if (why instanceof TestbayApiError) {
    // The server no longer takes this client's results either: running jobs are cut short at once.
    await agent.stop(0);
    say(
      why.status === 401
        ? `stopped: the server no longer accepts this client's credentials (${why.message}): its secret was rotated or the client was disabled. Set TESTBAY_CLIENT_SECRET to the secret testbay-server client rotate printed, or enable the client (testbay-server client enable ${config.clientId}), then start the agent again.`
        : `stopped: the server refused a claim (${why.message}); the client's role is no longer agent. ${agentClientAdvice(org)}`,
    );
    return 2;
  }
  say("stopped");
  return 0;
}

/** The binary's entry: real env, stderr and signals. */
export async function runFromProcess(): Promise<number> {
  return main(process.argv.slice(2), {
    env: process.env,
    stdout: process.stdout,
    stderr: process.stderr,
    onStopSignal(handler) {
      let count = 0;
      const onSignal = () => handler(++count > 1);
      process.on("SIGTERM", onSignal);
      process.on("SIGINT", onSignal);
    },
  });
}
