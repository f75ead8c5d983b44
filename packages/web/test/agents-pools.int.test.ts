// The agents page with device pools (API.md §13): what each device's row says of its pool, kind, build, labels and
// state, the agent's reason under a failed or drained device, and the page's accessibility in both themes with
// them. Needs the dashboard built (npm run build:web).
import { createRequire } from "node:module";
import type { Browser, Locator, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "../../server/test/harness.ts";
import { launchChromium } from "./browser.ts";
import { createMember, type Person } from "./sample-data.ts";
import { seedDevicePools } from "./sample-device-pools.ts";
import { openSignedIn } from "./sign-in.ts";
import { requireWebBuild } from "./web-build.ts";

const axeScript = createRequire(import.meta.url).resolve("axe-core/axe.min.js");

let server: TestServer;
let browser: Browser;
let person: Person;

beforeAll(async () => {
  requireWebBuild();
  server = await startTestServer({ env: { TESTBAY_RATE_LIMIT_BURST: "100000" } });
  // The agent client's creation makes the organization the member joins.
  await seedDevicePools(server);
  person = await createMember(server);
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

async function agentsPage(
  options: { colorScheme?: "light" | "dark"; bypassCSP?: boolean } = {},
): Promise<Page> {
  const page = await openSignedIn(browser, server.origin, person, "/agents", options);
  await page.getByRole("heading", { name: "lab-linux-emulators" }).waitFor();
  await page.getByRole("heading", { name: "lab-mac-simulators" }).waitFor();
  return page;
}

/** The row of one device, found by its serial, as its cells' texts. */
async function row(page: Page, serial: string): Promise<string[]> {
  const found: Locator = page.getByRole("row").filter({ hasText: serial });
  expect(await found.count()).toBe(1);
  return (await found.getByRole("cell").allInnerTexts()).map((text) => text.replace(/\s+/g, " ").trim());
}

describe("the agents page with device pools", () => {
  it("says each device's pool, kind, build, labels, state and boot time, and why a failed or drained one is so", async () => {
    const page = await agentsPage();
    try {
      expect(await row(page, "emulator-5554")).toEqual([
        "sdk_gphone64_x86_64 emulator-5554 Pixel_7_API_34 managed emulator gpu=swiftshader",
        "android 14 API 34 · x86_64",
        "idle booted in 7.4 s",
      ]);
      expect((await row(page, "emulator-5556"))[2]).toBe("resetting booted in 42 s");
      expect((await row(page, "emulator-5558"))[2]).toBe("booting");
      const failed = await row(page, "emulator-5560");
      expect(failed[2]).toMatch(
        /^failed emulator: ERROR: x86_64 emulation currently requires hardware acceleration!/,
      );
      expect(await row(page, "R5CT21ABCDE")).toEqual([
        "SM-S911B R5CT21ABCDE physical device room=b2 carrier=none",
        "android 14 API 34 · arm64-v8a",
        "drained three runs in a row lost the device: adb: device offline",
      ]);
      // iOS has no API level or ABI: the OS says its version only.
      expect(await row(page, "5A1C0F3E-0000-4000-8000-000000000001")).toEqual([
        "iPhone 15 5A1C0F3E-0000-4000-8000-000000000001 iPhone 15@17.5 managed simulator",
        "ios 17.5",
        "idle booted in 20 s",
      ]);
      // The whole reason is there for a pointer to read, however it is cut on screen.
      expect(
        await page
          .getByRole("row")
          .filter({ hasText: "emulator-5560" })
          .getByTitle(/KVM kernel module not loaded$/)
          .count(),
      ).toBe(1);
    } finally {
      await page.context().close();
    }
  });

  for (const theme of ["light", "dark"] as const) {
    it(`has no WCAG 2.1 A/AA violation axe-core finds, ${theme} theme`, async () => {
      // bypassCSP: axe is injected as an inline script, which the dashboard's own policy rightly refuses.
      const page = await agentsPage({ colorScheme: theme, bypassCSP: true });
      try {
        await page.addScriptTag({ path: axeScript });
        const violations = await page.evaluate(async () => {
          const axe = (
            globalThis as unknown as {
              axe: {
                run(
                  context: unknown,
                  options: unknown,
                ): Promise<{ violations: Array<{ id: string; nodes: Array<{ target: string[] }> }> }>;
              };
            }
          ).axe;
          const result = await axe.run(document, {
            runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"] },
          });
          return result.violations.map(
            (v) => `${v.id}: ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`,
          );
        });
        expect(violations).toEqual([]);
      } finally {
        await page.context().close();
      }
    });
  }
});
