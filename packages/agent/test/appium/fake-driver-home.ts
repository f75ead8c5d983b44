/**
 * Test support: a temporary APPIUM_HOME with Appium's own fake driver (`@appium/fake-driver`, platformName and
 * automationName "Fake") installed from the repository's node_modules, offline, as `appium driver install
 * --source=local` does it for any local driver. The fake driver loads an XML "app" (fixtures/fake-app.xml) whose
 * elements the WebDriver commands find, click and read.
 */
import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const run = promisify(execFile);

/** The repository's `appium` (root devDependency). */
export const APPIUM_EXECUTABLE = fileURLToPath(
  new URL("../../../../node_modules/.bin/appium", import.meta.url),
);
const FAKE_DRIVER_DIR = fileURLToPath(
  new URL("../../../../node_modules/@appium/fake-driver", import.meta.url),
);
/** The fake driver's app: its `appium:app`. */
export const FAKE_APP = fileURLToPath(new URL("./fixtures/fake-app.xml", import.meta.url));

/**
 * The `testbay-agent` arguments of a test's or benchmark's Appium agent: every device of its stand-in lab, the
 * repository's Appium, local apps allowed (the fake driver's app is an XML file on this host, FAKE_APP), and its
 * own port range (`FROM-TO`), apart from the other suites' so that they may run at once.
 */
export function fakeDriverAgentArgs(ports: string, { allowLocalApps = true } = {}): string[] {
  return [
    "--devices",
    "auto",
    "--appium",
    APPIUM_EXECUTABLE,
    ...(allowLocalApps ? ["--appium-allow-local-apps"] : []),
    "--appium-ports",
    ports,
  ];
}

/** What a fake-driver session asks for, with the app given by the caller (installed path or allowed local). */
export const FAKE_CAPABILITIES = { platformName: "Fake", "appium:automationName": "Fake" } as const;

export interface FakeDriverHome {
  home: string;
  /** The agent's environment for Appium: APPIUM_HOME set. */
  env: NodeJS.ProcessEnv;
  cleanup(): Promise<void>;
}

export async function installFakeDriver(): Promise<FakeDriverHome> {
  const home = await mkdtemp(join(tmpdir(), "testbay-appium-home-"));
  const env = { ...process.env, APPIUM_HOME: home };
  await run(APPIUM_EXECUTABLE, ["driver", "install", "--source=local", FAKE_DRIVER_DIR], {
    env,
    timeout: 120_000,
  });
  return { home, env, cleanup: () => rm(home, { recursive: true, force: true }) };
}
