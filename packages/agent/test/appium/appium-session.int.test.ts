/**
 * One Appium session on the agent, relayed end to end against the real `appium` and Appium's fake driver: the
 * commands a WebDriver client sends (find, click, read, page source) go through AppiumSession.relay and come back
 * as Appium answered them; the command log; and every way the session ends.
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { AppiumSession, type AppiumSessionSpec } from "../../src/appium/appium-session.ts";
import { isPortFree, PortBlocks } from "../../src/appium/port-blocks.ts";
import { buildSessionCapabilities } from "../../src/appium/session-capabilities.ts";
import { SessionNotCreatedError } from "../../src/appium/w3c-error.ts";
import {
  APPIUM_EXECUTABLE,
  FAKE_APP,
  FAKE_CAPABILITIES,
  type FakeDriverHome,
  installFakeDriver,
} from "./fake-driver-home.ts";

/** The W3C element reference key (https://w3c.github.io/webdriver/#elements). */
const ELEMENT = "element-6066-11e4-a52e-4f735466cecf";

let fake: FakeDriverHome;
let root: string;
// Each suite its own range, below Linux's ephemeral ports (32768–60999) that outgoing connections take.
const blocks = new PortBlocks({ from: 24830, to: 24929 });
const open: AppiumSession[] = [];

beforeAll(async () => {
  fake = await installFakeDriver();
  root = await mkdtemp(join(tmpdir(), "testbay-appium-session-"));
});

afterEach(async () => {
  await Promise.all(open.splice(0).map((session) => session.end("agent_stopped")));
});

afterAll(async () => {
  await fake?.cleanup();
  if (root) await rm(root, { recursive: true, force: true });
});

async function startSession(
  name: string,
  overrides: Partial<AppiumSessionSpec> = {},
  requested: Record<string, unknown> = FAKE_CAPABILITIES,
) {
  const block = await blocks.reserve();
  const { payload } = buildSessionCapabilities({
    requested,
    device: { serial: `fake-${name}`, platform: "android" },
    ports: block,
    installedAppPath: FAKE_APP,
    allowLocalApps: false,
    allowPrivateAppUrls: false,
  });
  const dir = join(root, name);
  try {
    const session = await AppiumSession.start({
      appium: { executable: APPIUM_EXECUTABLE, env: fake.env },
      port: block.appiumPort,
      dir,
      payload,
      idleTimeoutMs: 60_000,
      maxDurationMs: 600_000,
      ...overrides,
    });
    open.push(session);
    void session.ended.then(() => block.release());
    return { session, dir, port: block.appiumPort };
  } catch (error) {
    block.release();
    throw error;
  }
}

async function commandLog(dir: string): Promise<Array<Record<string, unknown>>> {
  const text = await readFile(join(dir, "commands.jsonl"), "utf8");
  return text
    .trim()
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line));
}

describe("AppiumSession", () => {
  it("relays find, click, attribute and page source to the fake app in order, and logs each command", async () => {
    const { session, dir } = await startSession("relay");
    expect(session.capabilities).toMatchObject({ platformName: "Fake", udid: "fake-relay", app: FAKE_APP });

    const found = await session.relay({
      method: "POST",
      path: "/element",
      body: { using: "id", value: "add-to-cart" },
    });
    expect(found.status).toBe(200);
    const elementId = (found.body as { value: Record<string, string> }).value[ELEMENT];
    expect(elementId).toEqual(expect.any(String));

    // Sent together, answered in the order they arrived: three clicks before the read.
    const answers = await Promise.all([
      session.relay({ method: "POST", path: `/element/${elementId}/click`, body: {} }),
      session.relay({ method: "POST", path: `/element/${elementId}/click`, body: {} }),
      session.relay({ method: "POST", path: `/element/${elementId}/click` }),
      session.relay({ method: "GET", path: `/element/${elementId}/attribute/clicks` }),
    ]);
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200]);
    expect(answers[3]?.body).toEqual({ value: "3" });

    const source = await session.relay({ method: "GET", path: "/source" });
    expect(source.status).toBe(200);
    expect((source.body as { value: string }).value).toContain("<title>Testbay sample shop</title>");

    // Appium's errors come back as Appium gave them.
    const missing = await session.relay({
      method: "POST",
      path: "/element",
      body: { using: "id", value: "nope" },
    });
    expect(missing.status).toBe(404);
    expect(missing.body).toMatchObject({ value: { error: "no such element" } });

    const end = await session.end("cancelled");
    expect(end.reason).toBe("cancelled");
    const lines = await commandLog(dir);
    expect(lines.map((l) => `${l.method} ${l.path} ${l.status}`)).toEqual([
      "POST /element 200",
      `POST /element/${elementId}/click 200`,
      `POST /element/${elementId}/click 200`,
      `POST /element/${elementId}/click 200`,
      `GET /element/${elementId}/attribute/clicks 200`,
      "GET /source 200",
      "POST /element 404",
    ]);
    for (const line of lines) {
      expect(Object.keys(line).sort()).toEqual(["at", "method", "ms", "path", "status"]);
      expect(new Date(line.at as string).toISOString()).toBe(line.at);
      expect(line.ms).toBeGreaterThanOrEqual(0);
    }
    // Bodies are not kept: what the page source held is nowhere in the log.
    expect(await readFile(join(dir, "commands.jsonl"), "utf8")).not.toContain("Testbay sample shop");
    expect(end.files).toEqual([join(dir, "appium.log"), join(dir, "commands.jsonl")]);
    expect(await readFile(join(dir, "appium.log"), "utf8")).toContain("Loading Mock app model");
  });

  it("ends on the client's DELETE: answered first, then Appium is stopped and later commands get invalid session id", async () => {
    const { session, port } = await startSession("delete");
    const pid = session.appiumPid;
    const deleted = await session.relay({ method: "DELETE", path: "" });
    expect(deleted).toEqual({ status: 200, body: { value: null } });
    const end = await session.ended;
    expect(end.reason).toBe("deleted");
    expect(await isPortFree(port)).toBe(true);
    expect(() => process.kill(pid, 0)).toThrow();

    const after = await session.relay({ method: "GET", path: "/source" });
    expect(after.status).toBe(404);
    expect(after.body).toEqual({
      value: {
        error: "invalid session id",
        message: "The session has ended (deleted): the client deleted it.",
        stacktrace: "",
      },
    });
  });

  it("ends after the idle timeout without a command, and says so to the next command", async () => {
    const { session, dir } = await startSession("idle", { idleTimeoutMs: 2_000 });
    expect((await session.relay({ method: "GET", path: "/orientation" })).body).toEqual({
      value: "PORTRAIT",
    });
    const end = await session.ended;
    expect(end.reason).toBe("idle_timeout");
    const after = await session.relay({ method: "GET", path: "/orientation" });
    expect(after.status).toBe(404);
    expect(after.body).toMatchObject({
      value: { error: "invalid session id", message: expect.stringContaining("idle_timeout") },
    });
    expect((await commandLog(dir)).map((l) => l.path)).toEqual(["/orientation"]);
  });

  it("ends at its maximum duration even while commands keep coming", async () => {
    const { session } = await startSession("max", { maxDurationMs: 2_000 });
    let answer = await session.relay({ method: "GET", path: "/orientation" });
    // Commands keep it from being idle; the maximum duration still ends it.
    while (answer.status === 200) answer = await session.relay({ method: "GET", path: "/orientation" });
    expect(answer).toMatchObject({ status: 404, body: { value: { error: "invalid session id" } } });
    expect((answer.body as { value: { message: string } }).value.message).toContain("max_duration");
    expect((await session.ended).reason).toBe("max_duration");
  });

  it("answers commands still queued at the end with invalid session id, and refuses paths outside the session", async () => {
    const { session } = await startSession("queued");
    const outside = await session.relay({ method: "GET", path: "/../../status" });
    expect(outside).toMatchObject({ status: 404, body: { value: { error: "unknown command" } } });
    const first = session.relay({ method: "GET", path: "/source" });
    const queued = session.relay({ method: "GET", path: "/orientation" });
    const ending = session.end("device_lost");
    expect((await queued).body).toMatchObject({
      value: { error: "invalid session id", message: expect.stringContaining("device_lost") },
    });
    await first;
    expect((await ending).reason).toBe("device_lost");
  });

  it("fails to start with Appium's own error when Appium refuses the capabilities, and stops Appium", async () => {
    const block = await blocks.reserve();
    try {
      const start = AppiumSession.start({
        appium: { executable: APPIUM_EXECUTABLE, env: fake.env },
        port: block.appiumPort,
        dir: join(root, "refused"),
        // The fake driver needs an app; without one Appium refuses the new session.
        payload: { capabilities: { alwaysMatch: { ...FAKE_CAPABILITIES }, firstMatch: [{}] } },
        idleTimeoutMs: 60_000,
        maxDurationMs: 600_000,
      });
      await expect(start).rejects.toBeInstanceOf(SessionNotCreatedError);
      await expect(start).rejects.toMatchObject({
        error: "session not created",
        message: expect.stringContaining("app"),
      });
      expect(await isPortFree(block.appiumPort)).toBe(true);
    } finally {
      block.release();
    }
  });
});
