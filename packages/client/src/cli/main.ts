import { access, writeFile } from "node:fs/promises";
import path from "node:path";
import { Command, CommanderError, Option } from "commander";
import { findPlanToChange, resolvePlanIds } from "../plans/by-name.ts";
import { Testbay } from "../sdk/client.ts";
import { type Clock, type Random, systemClock } from "../sdk/clock.ts";
import { TestbayApiError } from "../sdk/errors.ts";
import { type BatchTriggerResult, type Execution, isFinal } from "../sdk/models.ts";
import type { RetryEvent } from "../sdk/retry-policy.ts";
import type { FetchLike, ResponseEvent } from "../sdk/transport.ts";
import type { TestPackageUploadResult, UploadProgress, UploadResult } from "../sdk/upload.ts";
import { ciMetadata } from "./ci.ts";
import { type ConnectionFlags, resolveConfig } from "./config.ts";
import { parseDuration } from "./duration.ts";
import { ExitCode, exitCodeFor, UsageError } from "./exit-codes.ts";
import { followExecutions } from "./follow.ts";
import { OutageNotice, retryLine } from "./outage.ts";
import {
  errorJson,
  errorText,
  executionTable,
  type FixContext,
  failedExecutionsText,
  formatBytes,
  planTable,
  table,
  type Writer,
} from "./output.ts";
import { uploadProgress } from "./progress.ts";
import { unknownAppMessage } from "./unknown-app.ts";
import { cliVersion } from "./version.ts";
import { webhookDetails, webhookEvents, webhookFormat, webhookTable } from "./webhooks-output.ts";

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

interface GlobalOptions extends ConnectionFlags {
  json?: boolean;
}

const planHelp =
  "test plan ID (tp_…), or the name of one of the app's active plans (repeat, or separate with commas)";

const collect = (value: string, previous: string[]) => [
  ...previous,
  ...value
    .split(",")
    .map((v) => v.trim())
    .filter(Boolean),
];

/** --events a,b (repeatable) with no default: a missing --events is a usage error, not an empty list. */
const collectEvents = (value: string, previous: string[] | undefined) => collect(value, previous ?? []);

/** What a command ends with: an exit code, and for --json the document to print. */
interface Outcome {
  code: ExitCode;
  json?: unknown;
}

class Session {
  private client: Testbay | undefined;
  readonly clock: Clock;
  /** What the command is about, so that fix texts name the real app and version. */
  context: FixContext = {};

  constructor(
    readonly io: CliIo,
    private readonly globals: () => GlobalOptions,
  ) {
    this.clock = io.clock ?? systemClock;
  }

  get json(): boolean {
    return this.globals().json === true;
  }

  say(text: string): void {
    this.io.stderr.write(text.endsWith("\n") ? text : `${text}\n`);
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

async function checkFile(session: Session, file: string, flag = "--file"): Promise<string> {
  const resolved = session.resolvePath(file);
  try {
    await access(resolved);
  } catch {
    throw new UsageError(`${flag} ${file}: no such file (looked for ${resolved}).`);
  }
  return resolved;
}

/** A line per attempt where no bar is drawn (CI logs), so a log shows that a transfer started or restarted. */
function progressReporter(
  session: Session,
  label: string,
): {
  onProgress: (p: UploadProgress) => void;
  stop: () => void;
} {
  const progress = uploadProgress(session.io.stderr, session.io.env, `Uploading ${label}`);
  let announced = -1;
  return {
    onProgress: (p) => {
      if (!progress.isBar && p.attempt !== announced) {
        announced = p.attempt;
        session.say(
          `Uploading ${label} (${formatBytes(p.totalBytes)})${p.attempt > 0 ? `, attempt ${p.attempt + 1}` : ""}…`,
        );
      }
      progress.update(p);
    },
    stop: () => progress.stop(),
  };
}

async function upload(
  session: Session,
  options: { app: string; version: string; file: string },
): Promise<UploadResult> {
  const file = options.file;
  const label = `${options.app} ${options.version}`;
  const progress = progressReporter(session, label);
  try {
    const result = await session.testbay().versions.upload({
      packageName: options.app,
      version: options.version,
      file,
      onProgress: progress.onProgress,
    });
    progress.stop();
    if (result.outcome === "skipped") {
      const sha = result.version?.sha256;
      session.say(
        `${label} is registered already with this very build${sha ? ` (sha256 ${sha.slice(0, 12)}…)` : ""}: skipped the upload (nothing was transferred).`,
      );
    } else if (result.outcome === "already_landed") {
      session.say(
        `${label} was registered by an earlier attempt of this upload (same sha256): nothing more to do.`,
      );
    } else {
      session.say(`Uploaded ${label}: ${formatBytes(result.sizeBytes)}, sha256 ${result.version?.sha256}.`);
    }
    return result;
  } catch (error) {
    progress.stop();
    throw error;
  }
}

function uploadJson(result: UploadResult) {
  return { outcome: result.outcome, size_bytes: result.sizeBytes, version: result.version ?? null };
}

/** The test package, after the version's binary (the server refuses it for a version it does not know). */
async function uploadTests(
  session: Session,
  options: { app: string; version: string; testFile: string },
): Promise<TestPackageUploadResult> {
  const label = `the test package of ${options.app} ${options.version}`;
  const progress = progressReporter(session, label);
  try {
    const result = await session
      .testbay()
      .versions.uploadTestPackage(options.app, options.version, options.testFile, {
        onProgress: progress.onProgress,
      });
    progress.stop();
    const { sha256 } = result.testPackage;
    const tests =
      result.testPackage.format === "apk"
        ? `${result.testPackage.test.package_name} instrumenting ${result.testPackage.test.target_package}`
        : `XCUITest targets ${result.testPackage.test.test_targets.map((target) => target.name).join(", ")}`;
    const what = `sha256 ${sha256.slice(0, 12)}…, ${tests}`;
    if (result.outcome === "skipped") {
      session.say(
        `${capitalize(label)} is uploaded already, the same file (${what}): skipped the upload (nothing was transferred).`,
      );
    } else if (result.outcome === "already_landed") {
      session.say(
        // By an earlier attempt of ours that landed, or by another job: either way these very bytes.
        `${capitalize(label)} was stored meanwhile, the same file (same sha256): nothing more to do.`,
      );
    } else {
      session.say(`Uploaded ${label}: ${formatBytes(result.sizeBytes)}, ${what}.`);
    }
    return result;
  } catch (error) {
    progress.stop();
    throw error;
  }
}

const capitalize = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);

function testPackageJson(result: TestPackageUploadResult | undefined) {
  return result
    ? { outcome: result.outcome, size_bytes: result.sizeBytes, test_package: result.testPackage }
    : null;
}

/** The batch trigger: one call for all plans; failures to start are reported plan by plan (rule 6). */
async function trigger(
  session: Session,
  options: { app: string; version: string; plan: string[] },
): Promise<BatchTriggerResult> {
  if (options.plan.length === 0) throw new UsageError("Name at least one test plan with --plan ID.");
  if (new Set(options.plan).size !== options.plan.length) {
    throw new UsageError("A test plan is named twice with --plan: name each plan once.");
  }
  if (options.plan.length > 100) {
    throw new UsageError("At most 100 test plans per trigger: split them over several commands.");
  }
  // When no plan starts, the error carries failed_executions: main's errorText reports them, each plan once.
  const ci = ciMetadata(session.io.env);
  const result = await session.testbay().triggers.runBatch({
    package_name: options.app,
    version: options.version,
    test_plan_ids: options.plan,
    ...(ci ? { ci } : {}),
  });
  session.say(
    `Triggered ${result.executions.length} of ${options.plan.length} test plan${options.plan.length === 1 ? "" : "s"} on ${options.app} ${options.version}${result.replayed ? " (replayed)" : ""}.`,
  );
  if (result.failed_executions.length > 0) {
    session.say(failedExecutionsText(result.failed_executions, options.plan.length, session.context));
  }
  return result;
}

function buildProgram(session: Session, setOutcome: (outcome: Outcome) => void): Command {
  const { io } = session;
  const program = new Command("testbay")
    .description(
      "Testbay from CI: upload builds, trigger test plans, wait for their results. Configured by TESTBAY_URL, TESTBAY_CLIENT_ID, TESTBAY_CLIENT_SECRET, TESTBAY_AUDIENCE and TESTBAY_TOKEN, or the flags below.",
    )
    .option("--url <url>", "API base URL, e.g. http://127.0.0.1:8080/v1 (TESTBAY_URL)")
    .option("--client-id <id>", "client ID (TESTBAY_CLIENT_ID)")
    .option("--client-secret <secret>", "client secret (TESTBAY_CLIENT_SECRET)")
    .option("--audience <audience>", "the server's audience (TESTBAY_AUDIENCE, default testbay)")
    .option("--token <token>", "a token from `testbay token` (TESTBAY_TOKEN): no token call is made")
    .option("--json", "print machine-readable JSON on stdout (messages stay on stderr)")
    .exitOverride()
    .configureOutput({
      writeOut: (text) => io.stdout.write(text),
      writeErr: (text) => io.stderr.write(text),
    })
    .showHelpAfterError("(run testbay --help for usage)")
    .addHelpText(
      "after",
      "\ntestbay --version prints the CLI's version (after a command, --version V is the app's version).\n\nExit codes: 0 ok (with --wait: all passed) · 1 a test failed or an execution errored or was cancelled · 2 usage or configuration error · 3 some plans failed to start · 4 the API refused the request · 5 gave up (retries or --timeout exhausted)",
    );

  const print = (text: string) => io.stdout.write(text);

  program
    .command("token")
    .description(
      "Print an access token, for `export TESTBAY_TOKEN=$(testbay token)` at the start of a pipeline",
    )
    .action(async () => {
      const testbay = session.testbay();
      const token = await testbay.accessToken();
      const known = testbay.tokens.peek();
      if (testbay.tokens.fixed) session.say("note: TESTBAY_TOKEN is set; printing it (no token call made).");
      if (session.json) {
        const expires =
          known && Number.isFinite(known.expiresAt) ? new Date(known.expiresAt).toISOString() : null;
        setOutcome({ code: ExitCode.ok, json: { access_token: token, expires_at: expires } });
      } else {
        print(`${token}\n`);
        setOutcome({ code: ExitCode.ok });
      }
    });

  program
    .command("upload")
    .description("Upload a build: HEAD first, and no transfer when the version is registered already")
    .requiredOption("--app <package>", "package name (exact, case-sensitive)")
    .requiredOption("--version <version>", "version identifier")
    .requiredOption("--file <path>", "the APK, AAB, IPA or zipped .app")
    .option(
      "--test-file <path>",
      "the test APK (app-debug-androidTest.apk), uploaded after the build; skipped when the version has this very file, refused when it has another",
    )
    .action(async (options: { app: string; version: string; file: string; testFile?: string }) => {
      // Both files are looked for before anything is sent: a typo must not leave a version without its tests.
      const file = await checkFile(session, options.file);
      const testFile = options.testFile
        ? await checkFile(session, options.testFile, "--test-file")
        : undefined;
      const result = await upload(session, { ...options, file });
      const tests = testFile ? await uploadTests(session, { ...options, testFile }) : undefined;
      setOutcome({
        code: ExitCode.ok,
        json: { ...uploadJson(result), test_package_upload: testPackageJson(tests) },
      });
    });

  program
    .command("trigger")
    .description("Trigger test plans on a registered version: one batch call for all plans")
    .requiredOption("--app <package>", "package name (exact, case-sensitive)")
    .requiredOption("--version <version>", "version identifier")
    .option("--plan <id-or-name>", planHelp, collect, [] as string[])
    .action(async (options: { app: string; version: string; plan: string[] }) => {
      options.plan = await resolvePlanIds(session.testbay(), options.app, options.plan);
      const result = await trigger(session, options);
      if (!session.json) print(executionTable(result.executions));
      setOutcome({
        code: result.failed_executions.length ? ExitCode.plansFailedToStart : ExitCode.ok,
        json: result,
      });
    });

  program
    .command("run")
    .description("The pipeline flow: upload if needed, one batch trigger, and with --wait the results")
    .requiredOption("--app <package>", "package name (exact, case-sensitive)")
    .requiredOption("--version <version>", "version identifier")
    .option("--file <path>", "the build to upload first (skipped when the version is registered)")
    .option(
      "--test-file <path>",
      "the test APK to upload after the build, before the trigger (skipped when the version has this very file, refused when it has another)",
    )
    .option("--plan <id-or-name>", planHelp, collect, [] as string[])
    .option("--wait", "wait until every execution ends, then print a summary")
    .option("--timeout <duration>", "how long --wait waits, e.g. 90s, 60m, 2h", "60m")
    .option("--junit <file>", "with --wait: write one merged JUnit XML report here")
    .action(
      async (options: {
        app: string;
        version: string;
        file?: string;
        testFile?: string;
        plan: string[];
        wait?: boolean;
        timeout: string;
        junit?: string;
      }) => {
        const timeoutMs = parseDuration(options.timeout);
        if (options.junit && !options.wait)
          throw new UsageError("--junit needs --wait: the report is written once all executions end.");
        if (options.plan.length === 0) throw new UsageError("Name at least one test plan with --plan ID.");
        const file = options.file ? await checkFile(session, options.file) : undefined;
        const testFile = options.testFile
          ? await checkFile(session, options.testFile, "--test-file")
          : undefined;
        const testbay = session.testbay();
        // Names first: a mistyped plan name is reported before any upload.
        options.plan = await resolvePlanIds(testbay, options.app, options.plan);
        const uploaded = file ? await upload(session, { ...options, file }) : undefined;
        const tests = testFile ? await uploadTests(session, { ...options, testFile }) : undefined;

        const batch = await trigger(session, options);
        const failed = batch.failed_executions;
        const report: Record<string, unknown> = {
          upload: uploaded ? uploadJson(uploaded) : null,
          test_package_upload: testPackageJson(tests),
          executions: batch.executions,
          failed_executions: failed,
        };
        const startCode = failed.length ? ExitCode.plansFailedToStart : ExitCode.ok;
        if (!options.wait) {
          if (!session.json) print(executionTable(batch.executions));
          setOutcome({ code: startCode, json: report });
          return;
        }

        setOutcome(
          await followExecutions(session, testbay, batch.executions, {
            timeoutMs,
            junit: options.junit,
            title: `Testbay: ${options.app} ${options.version}`,
            report,
            startCode,
          }),
        );
      },
    );

  program
    .command("status")
    .description(
      "Show executions; exit 1 when one of them failed, errored or was cancelled. With --wait, follow them until they end, as run --wait does",
    )
    .argument("<execution_id...>", "execution IDs (ex_…)")
    .option("--wait", "wait until every execution ends, then print a summary (as run --wait)")
    .option("--timeout <duration>", "how long --wait waits, e.g. 90s, 60m, 2h", "60m")
    .option("--junit <file>", "with --wait: write one merged JUnit XML report here")
    .action(async (ids: string[], options: { wait?: boolean; timeout: string; junit?: string }) => {
      const timeoutMs = parseDuration(options.timeout);
      if (options.junit && !options.wait)
        throw new UsageError("--junit needs --wait: the report is written once all executions end.");
      if (new Set(ids).size !== ids.length)
        throw new UsageError("An execution ID is named twice: name each once.");
      const testbay = session.testbay();
      const executions: Execution[] = [];
      // Waiting begins with these reads: they outlast a server that is restarting, as the polls do (rule 13).
      const deadlineAt = options.wait ? session.clock.now() + timeoutMs : undefined;
      for (const id of ids) {
        executions.push(
          await testbay.executions.get(
            id,
            deadlineAt === undefined ? {} : { deadlineAt, untilDeadline: true },
          ),
        );
      }
      if (options.wait) {
        const apps = [...new Set(executions.map((e) => `${e.package_name} ${e.version}`))];
        setOutcome(
          await followExecutions(session, testbay, executions, {
            timeoutMs,
            deadlineAt,
            junit: options.junit,
            title: `Testbay: ${apps.join(", ")}`,
            report: {},
            startCode: ExitCode.ok,
          }),
        );
        return;
      }
      if (!session.json) print(executionTable(executions));
      const ended = executions.filter((e) => ["failed", "errored", "cancelled"].includes(e.status));
      setOutcome({ code: ended.length ? ExitCode.testsFailed : ExitCode.ok, json: { executions } });
    });

  const plans = program.command("plans").description("Test plans");
  plans
    .command("list")
    .description("List test plans (active and archived)")
    .option("--app <package>", "only this app's plans")
    .action(async (options: { app?: string }) => {
      const testbay = session.testbay();
      const items = [];
      for await (const plan of testbay.testPlans.all({
        ...(options.app ? { package_name: options.app } : {}),
        limit: 200,
      })) {
        items.push(plan);
      }
      if (!session.json) print(items.length ? planTable(items) : "No test plans.\n");
      setOutcome({ code: ExitCode.ok, json: { items } });
    });

  plans
    .command("archive")
    .description("Archive a test plan: it is not triggered any more, and plans restore brings it back")
    .argument("<plan>", "test plan ID (tp_…) or name")
    .option("--app <package>", "the plan's app, when plans of several apps have that name")
    .action(async (value: string, options: { app?: string }) => {
      const testbay = session.testbay();
      const id = await findPlanToChange(testbay, value, { app: options.app, from: ["active"] });
      const plan = await testbay.testPlans.archive(id);
      session.say(
        `Archived test plan ${plan.name} (${plan.id}) of ${plan.package_name}: it is not triggered any more. Restore it with testbay plans restore ${plan.id}`,
      );
      if (!session.json) print(planTable([plan]));
      setOutcome({ code: ExitCode.ok, json: plan });
    });
  plans
    .command("restore")
    .description("Restore an archived test plan (or one deleted within 30 days): it can be triggered again")
    .argument("<plan>", "test plan ID (tp_…) or name")
    .option("--app <package>", "the plan's app, when plans of several apps have that name")
    .action(async (value: string, options: { app?: string }) => {
      const testbay = session.testbay();
      const id = await findPlanToChange(testbay, value, { app: options.app, from: ["archived", "deleted"] });
      const plan = await testbay.testPlans.restore(id);
      session.say(
        `Restored test plan ${plan.name} (${plan.id}) of ${plan.package_name}: it can be triggered again.`,
      );
      if (!session.json) print(planTable([plan]));
      setOutcome({ code: ExitCode.ok, json: plan });
    });

  // The plans-as-code commands load their YAML parser and schema validator only when they run (cold start).
  plans
    .command("apply")
    .description(
      "Create or update the app's test plans from testbay.yaml, matched by name; plans the file does not name are left alone unless --prune",
    )
    .requiredOption("-f, --file <path>", "the plans file, e.g. testbay.yaml")
    .option("--prune", "archive the app's active plans that the file does not name (restorable)")
    .option("--dry-run", "print what would change, and change nothing")
    .action(async (options: { file: string; prune?: boolean; dryRun?: boolean }) => {
      const { applyPlans } = await import("../plans/apply.ts");
      setOutcome(await applyPlans(session, options));
    });
  plans
    .command("export")
    .description("Print the app's active test plans as testbay.yaml, or write them to a file")
    .requiredOption("--app <package>", "package name (exact, case-sensitive)")
    .option("-f, --file <path>", "write the file here instead of stdout")
    .option("--force", "with --file: overwrite an existing file")
    .action(async (options: { app: string; file?: string; force?: boolean }) => {
      const { exportPlans } = await import("../plans/export.ts");
      const { text, ...outcome } = await exportPlans(session, options);
      if (text !== undefined && !session.json) print(text);
      setOutcome(outcome);
    });

  program
    .command("version")
    .description("Print the CLI's version (also testbay --version)")
    .action(() => {
      print(`${cliVersion()}\n`);
      setOutcome({ code: ExitCode.ok, json: { version: cliVersion() } });
    });

  const apps = program.command("apps").description("Apps: what builds are uploaded for");
  apps
    .command("create")
    .description("Register an app, once, before its first upload")
    .requiredOption(
      "--app <package>",
      "package name (Android applicationId or iOS bundle ID; case-sensitive)",
    )
    .requiredOption("--platform <platform>", "android or ios")
    .option("--name <name>", "a display name")
    .action(async (options: { app: string; platform: string; name?: string }) => {
      if (options.platform !== "android" && options.platform !== "ios") {
        throw new UsageError(`--platform ${options.platform}: say android or ios.`);
      }
      const created = await session.testbay().apps.create({
        package_name: options.app,
        platform: options.platform,
        ...(options.name ? { display_name: options.name } : {}),
      });
      session.say(
        `Created ${created.platform} app ${created.package_name}. Next: testbay upload --app ${created.package_name} --version VERSION --file PATH`,
      );
      setOutcome({ code: ExitCode.ok, json: created });
    });
  apps
    .command("list")
    .description("List the organization's apps")
    .action(async () => {
      const items = [];
      for await (const app of session.testbay().apps.all({ limit: 200 })) items.push(app);
      if (!session.json) {
        const rows = [["PACKAGE", "PLATFORM", "NAME", "CREATED"]];
        for (const a of items) rows.push([a.package_name, a.platform, a.display_name ?? "-", a.created_at]);
        print(
          items.length
            ? table(rows)
            : "No apps: create one with testbay apps create --app PACKAGE --platform android\n",
        );
      }
      setOutcome({ code: ExitCode.ok, json: { items } });
    });

  program
    .command("logs")
    .description("Print an execution's log (what its agents reported)")
    .argument("<execution_id>", "execution ID (ex_…)")
    .action(async (id: string) => {
      const log = await session.testbay().executions.log(id);
      print(log.endsWith("\n") || log === "" ? log : `${log}\n`);
      setOutcome({ code: ExitCode.ok });
    });

  program
    .command("junit")
    .description("Print an execution's JUnit XML report, or write it to a file")
    .argument("<execution_id>", "execution ID (ex_…)")
    .option("-o, --output <file>", "write the report here instead of stdout")
    .action(async (id: string, options: { output?: string }) => {
      const xml = await session.testbay().executions.junit(id);
      if (options.output) {
        const target = session.resolvePath(options.output);
        await writeFile(target, xml);
        session.say(`Wrote the JUnit report of ${id} to ${target}.`);
      } else print(xml.endsWith("\n") ? xml : `${xml}\n`);
      setOutcome({ code: ExitCode.ok });
    });

  program
    .command("artifacts")
    .description("List an execution's artifacts (screenshots, logcat, reports) with their download URLs")
    .argument("<execution_id>", "execution ID (ex_…)")
    .action(async (id: string) => {
      const items = await session.testbay().executions.artifacts(id);
      if (!session.json) {
        const rows = [["NAME", "DEVICE", "ATTEMPT", "SIZE", "URL"]];
        for (const a of items) {
          rows.push([a.name, String(a.device), String(a.attempt), formatBytes(a.size_bytes), a.url]);
        }
        print(items.length ? table(rows) : `No artifacts for ${id}.\n`);
      }
      setOutcome({ code: ExitCode.ok, json: { items } });
    });

  program
    .command("cancel")
    .description("Cancel an execution: a queued one at once, a running one when its agent hears of it")
    .argument("<execution_id>", "execution ID (ex_…)")
    .action(async (id: string) => {
      const execution = await session.testbay().executions.cancel(id);
      // The answer is the execution as it is now: cancelled by this call or earlier, the same to a pipeline.
      if (execution.status === "cancelled") session.say(`${id} is cancelled.`);
      else if (isFinal(execution.status))
        session.say(`${id} had ended already (${execution.status}): nothing to cancel.`);
      else
        session.say(
          `Asked to cancel ${id}: it is ${execution.status}; its agent stops it at its next heartbeat.`,
        );
      if (!session.json) print(executionTable([execution]));
      setOutcome({ code: ExitCode.ok, json: { execution } });
    });

  const tests = program
    .command("tests")
    .description("Tests of a plan: quarantine a known-flaky test while it is fixed, and release it");
  tests
    .command("quarantine")
    .description(
      "Quarantine a test: it keeps running and being reported, but its failures stop failing runs (again: a new reason)",
    )
    .argument("<test_id>", "test ID (t_…, as the run's page and GET /v1/tests show it)")
    .requiredOption("--reason <text>", "why, in up to 500 characters (a ticket, what is being fixed)")
    .action(async (testId: string, options: { reason: string }) => {
      const quarantine = await session.testbay().tests.quarantine(testId, options.reason);
      session.say(
        `Quarantined ${quarantine.classname}#${quarantine.name} (${testId}) of plan ${quarantine.test_plan_id}: its failures no longer fail runs. Release it with testbay tests release ${testId}`,
      );
      setOutcome({ code: ExitCode.ok, json: { quarantine } });
    });
  tests
    .command("release")
    .description(
      "Release a test from quarantine: its failures fail runs again (done also if it was not quarantined)",
    )
    .argument("<test_id>", "test ID (t_…)")
    .action(async (testId: string) => {
      await session.testbay().tests.release(testId);
      session.say(`${testId} is not quarantined: its failures fail runs.`);
      setOutcome({ code: ExitCode.ok, json: { test_id: testId, quarantined: false } });
    });

  const webhooks = program
    .command("webhooks")
    .description(
      "Webhooks: send run results to other systems (signed per Standard Webhooks) or to Slack, and see what was sent",
    );
  webhooks
    .command("create")
    .description(
      "Add a webhook endpoint; prints its signing secret (whsec_…) this once on stdout: store it where the receiver reads it",
    )
    .option("--url <url>", "where to POST, http(s) (required)")
    .addOption(webhookUrlOption())
    .requiredOption(
      "--events <events>",
      `what to send, separated by commas: ${webhookEvents.join(", ")}`,
      collectEvents,
    )
    .option("--format <format>", "standard (signed, the default) or slack (a Slack incoming webhook)")
    .option("--description <text>", "what it is for, shown beside it")
    .action(
      async (options: { webhookUrl?: string; events: string[]; format?: string; description?: string }) => {
        if (options.webhookUrl === undefined) throw new UsageError("say where to POST with --url URL.");
        const format = webhookFormat(options.format);
        const created = await session.testbay().webhooks.create({
          url: options.webhookUrl,
          events: options.events,
          ...(format ? { format } : {}),
          ...(options.description !== undefined ? { description: options.description } : {}),
        });
        session.say(`Created webhook ${created.id}: ${created.events.join(", ")} to ${created.url}.`);
        if (created.secret) {
          session.say(
            `Its signing secret is printed ${session.json ? 'as "secret"' : "on stdout"}, this once: store it now (a secret store the receiver reads); testbay webhooks rotate-secret ${created.id} gives a new one.\nReceivers verify each delivery per Standard Webhooks (https://www.standardwebhooks.com): the webhook-id, webhook-timestamp and webhook-signature headers over the raw body, e.g. new Webhook(secret).verify(body, headers) with the standardwebhooks library; a webhook-id seen before is a repeat.`,
          );
          if (!session.json) print(`${created.secret}\n`);
        } else {
          session.say("Slack webhooks are not signed: Slack's URL is the secret, keep it out of logs.");
        }
        setOutcome({ code: ExitCode.ok, json: created });
      },
    );
  webhooks
    .command("list")
    .description("List the organization's webhooks (never their secrets)")
    .action(async () => {
      const items = [];
      for await (const webhook of session.testbay().webhooks.all({ limit: 200 })) items.push(webhook);
      if (!session.json) {
        print(
          items.length
            ? webhookTable(items)
            : "No webhooks: add one with testbay webhooks create --url URL --events execution.finished\n",
        );
      }
      setOutcome({ code: ExitCode.ok, json: { items } });
    });
  webhooks
    .command("show")
    .description("Show a webhook and its last deliveries: status, attempts, the last answer or error")
    .argument("<webhook_id>", "webhook ID (wh_…)")
    .option("--deliveries <count>", "how many of the last deliveries (1–200)", "10")
    .action(async (id: string, options: { deliveries: string }) => {
      const limit = Number(options.deliveries);
      if (!Number.isInteger(limit) || limit < 1 || limit > 200) {
        throw new UsageError(`--deliveries ${options.deliveries}: say a whole number from 1 to 200.`);
      }
      const testbay = session.testbay();
      const webhook = await testbay.webhooks.get(id);
      const deliveries = (await testbay.webhooks.deliveries(id, { limit })).items;
      if (!session.json) print(webhookDetails(webhook, deliveries));
      setOutcome({ code: ExitCode.ok, json: { webhook, deliveries } });
    });
  webhooks
    .command("update")
    .description("Change a webhook: only what is given changes")
    .argument("<webhook_id>", "webhook ID (wh_…)")
    .option("--url <url>", "where to POST, http(s)")
    .addOption(webhookUrlOption())
    .option("--events <events>", "what to send (replaces the list), separated by commas", collectEvents)
    .option("--enable", "send to it again (also after the server disabled it: fix the receiver first)")
    .option("--disable", "stop sending to it; what happens meanwhile is not sent later")
    .option("--description <text>", 'what it is for ("" clears it)')
    .action(
      async (
        id: string,
        options: {
          webhookUrl?: string;
          events?: string[];
          enable?: boolean;
          disable?: boolean;
          description?: string;
        },
      ) => {
        if (options.enable && options.disable) throw new UsageError("say --enable or --disable, not both.");
        const changes = {
          ...(options.webhookUrl !== undefined ? { url: options.webhookUrl } : {}),
          ...(options.events !== undefined ? { events: options.events } : {}),
          ...(options.enable ? { enabled: true } : options.disable ? { enabled: false } : {}),
          ...(options.description !== undefined ? { description: options.description || null } : {}),
        };
        if (Object.keys(changes).length === 0) {
          throw new UsageError(
            "nothing to change: give --url, --events, --enable, --disable or --description.",
          );
        }
        const webhook = await session.testbay().webhooks.update(id, changes);
        session.say(`Updated webhook ${webhook.id}.`);
        if (!session.json) print(webhookTable([webhook]));
        setOutcome({ code: ExitCode.ok, json: webhook });
      },
    );
  webhooks
    .command("delete")
    .description("Delete a webhook: nothing more is sent to it, and its delivery log goes with it")
    .argument("<webhook_id>", "webhook ID (wh_…)")
    .action(async (id: string) => {
      await session.testbay().webhooks.delete(id);
      session.say(`Deleted webhook ${id}: nothing more is sent to it, and its delivery log is gone.`);
      setOutcome({ code: ExitCode.ok, json: { id, deleted: true } });
    });
  webhooks
    .command("rotate-secret")
    .description("Give a webhook a new signing secret, printed this once; the old one stops at once")
    .argument("<webhook_id>", "webhook ID (wh_…)")
    .action(async (id: string) => {
      const rotated = await session.testbay().webhooks.rotateSecret(id);
      session.say(
        `New signing secret of ${rotated.id} printed ${session.json ? 'as "secret"' : "on stdout"}, this once: the old one no longer verifies, so give the receiver this one now (retries of earlier messages are signed with it too).`,
      );
      if (!session.json) print(`${rotated.secret}\n`);
      setOutcome({ code: ExitCode.ok, json: rotated });
    });
  webhooks
    .command("test")
    .description("Send a webhook.test message to a webhook, whatever its events")
    .argument("<webhook_id>", "webhook ID (wh_…)")
    .action(async (id: string) => {
      const accepted = await session.testbay().webhooks.test(id);
      session.say(
        `Queued a webhook.test message (${accepted.delivery_id}) for ${id}; see how it went with testbay webhooks show ${id}`,
      );
      setOutcome({ code: ExitCode.ok, json: accepted });
    });
  webhooks
    .command("redeliver")
    .description("Send a message again, under the same webhook-id, from the start of the retry schedule")
    .argument("<webhook_id>", "webhook ID (wh_…)")
    .argument("<delivery_id>", "the message's ID (msg_…, as testbay webhooks show lists it)")
    .action(async (id: string, deliveryId: string) => {
      const accepted = await session.testbay().webhooks.redeliver(id, deliveryId);
      session.say(
        `Queued ${accepted.delivery_id} for ${id} again (the same webhook-id: receivers that deduplicate see a repeat); see how it went with testbay webhooks show ${id}`,
      );
      setOutcome({ code: ExitCode.ok, json: accepted });
    });

  program
    .command("agents")
    .description("Who is connected: agents, their devices and what they run")
    .action(async () => {
      const items = await session.testbay().agents.list();
      if (!session.json) {
        const rows = [["AGENT", "NAME", "ONLINE", "LAST SEEN", "STEP TYPES", "DEVICES", "RUNNING"]];
        for (const a of items) {
          const devices = a.devices
            .map((d) => `${d.model} ${d.os_version} ${d.serial} (${d.state})`)
            .join(", ");
          rows.push([
            a.id,
            a.name,
            a.online ? "yes" : "no",
            a.last_seen_at,
            a.step_types.join(",") || "-",
            devices || "host only",
            a.running.join(" ") || "-",
          ]);
        }
        print(items.length ? table(rows) : "No agents have connected: start one with testbay-agent.\n");
      }
      setOutcome({ code: ExitCode.ok, json: { items } });
    });

  return program;
}

/**
 * After `webhooks create|update`, --url is the webhook's address. The program's own --url (the API's) would take
 * it wherever it stands, so it is renamed there to the hidden --webhook-url those commands read; the API's URL
 * then comes from TESTBAY_URL or a --url before `webhooks`.
 */
function webhookUrlFlags(argv: string[]): string[] {
  const at = argv.findIndex(
    (arg, i) => arg === "webhooks" && (argv[i + 1] === "create" || argv[i + 1] === "update"),
  );
  if (at < 0) return argv;
  return argv.map((arg, i) => {
    if (i <= at + 1) return arg;
    if (arg === "--url") return "--webhook-url";
    return arg.startsWith("--url=") ? `--webhook-url=${arg.slice("--url=".length)}` : arg;
  });
}

/** Where `webhooks create|update --url` lands (see webhookUrlFlags); its help is the visible --url's. */
function webhookUrlOption(): Option {
  return new Option("--webhook-url <url>").hideHelp();
}

/**
 * A 404 app_not_found for the command's --app that looks like a typo: said as an unknown app with the closest
 * registered name (rule 14). Undefined for every other error, when the server named the right one itself
 * (did_you_mean), or when no registered name is close: the server's detail and fix say it then.
 */
async function unknownAppText(session: Session, error: unknown): Promise<string | undefined> {
  const app = session.context.app;
  if (!(error instanceof TestbayApiError && error.code === "app_not_found") || !app) return undefined;
  if (typeof error.problem.did_you_mean === "string") return undefined;
  const message = await unknownAppMessage(session.testbay(), app).catch(() => undefined);
  if (!message?.includes("did you mean")) return undefined;
  return `error: ${message} (${error.status} ${error.code} on ${error.method} ${error.path})\n`;
}

/**
 * Runs the CLI with `argv` (the arguments after the program name) and returns its exit code: it never calls
 * process.exit, so tests run it in-process.
 */
export async function main(argv: string[], io: CliIo): Promise<number> {
  // The CLI's own version; `--version V` after a command is the app's version.
  if (argv.length === 1 && (argv[0] === "--version" || argv[0] === "-V")) {
    io.stdout.write(`${cliVersion()}\n`);
    return ExitCode.ok;
  }
  let outcome: Outcome | undefined;
  let globals: GlobalOptions = {};
  const session = new Session(io, () => globals);
  const program = buildProgram(session, (o) => {
    outcome = o;
  });
  program.hook("preAction", (_command, action) => {
    globals = action.optsWithGlobals<GlobalOptions>();
    const { app, version, file } = action.opts<{ app?: string; version?: string; file?: string }>();
    session.context = { app, version, file };
  });
  try {
    await program.parseAsync(webhookUrlFlags(argv), { from: "user" });
  } catch (error) {
    if (error instanceof CommanderError) {
      if (error.code === "commander.helpDisplayed" || error.code === "commander.version") return ExitCode.ok;
      // commander printed what was wrong already (help when no command was given).
      return ExitCode.usage;
    }
    const code = exitCodeFor(error);
    io.stderr.write((await unknownAppText(session, error)) ?? errorText(error, session.context));
    if (globals.json)
      io.stdout.write(`${JSON.stringify({ error: errorJson(error), exit_code: code }, null, 2)}\n`);
    return code;
  }
  if (!outcome) return ExitCode.usage;
  if (globals.json && outcome.json !== undefined) {
    io.stdout.write(`${JSON.stringify({ ...(outcome.json as object), exit_code: outcome.code }, null, 2)}\n`);
  }
  return outcome.code;
}

/** The binary: the real process, its environment and streams. */
export async function runFromProcess(): Promise<number> {
  // A reader that goes away (`testbay plans list | head`) is not an error of ours.
  for (const stream of [process.stdout, process.stderr]) {
    stream.on("error", (error: NodeJS.ErrnoException) => {
      if (error.code !== "EPIPE") throw error;
    });
  }
  const code = await main(process.argv.slice(2), {
    env: process.env,
    stdout: process.stdout,
    stderr: process.stderr,
    cwd: process.cwd(),
    onInterrupt: (handler) => {
      process.once("SIGINT", handler);
      return () => process.off("SIGINT", handler);
    },
  });
  // A poll's pause may still be pending: it must not keep an interrupted process alive.
  if (code === ExitCode.interrupted) process.exit(code);
  return code;
}
